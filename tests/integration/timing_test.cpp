// Rough throughput of the hot paths, printed for the record (never asserted: the
// machine is shared). bench/ holds the real benchmarks.
#include <chrono>
#include <cstdio>

#include "tests/integration/fixture.hpp"

namespace receiptd::test {

namespace {

template <class Body>
void measure(const char* what, db::dialect kind, int n, Body&& body) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i)
    body(i);
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::printf("[timing] %-10s %-34s %7.0f/s  (%d in %.3f s)\n",
              kind == db::dialect::sqlite ? "sqlite" : "postgresql", what, n / took.count(), n,
              took.count());
}

} // namespace

TEST_CASE("hot path throughput (printed)", "[timing]") {
  database_fixture f;
  auto& d = *f.db;
  constexpr int n = 300;
  std::vector<std::string> ids;
  measure("save_purchase_order (new, +job)", f.kind, n, [&](int i) {
    ids.push_back(
      REQUIRE_OK(d.save_purchase_order(minimal_purchase_order(f.app.id, std::to_string(i)), t0))
        .record.id);
  });
  measure("save_purchase_order (re-upload)", f.kind, n, [&](int i) {
    auto again = full_purchase_order(f.app.id, std::to_string(i));
    again.state = model::validation_state::validated;
    REQUIRE_OK(d.save_purchase_order(again, t0));
  });
  measure("save_receipt (new, 10 in-app)", f.kind, n, [&](int i) {
    REQUIRE_OK(d.save_receipt(full_receipt(f.app.id, std::to_string(i), 10), t0));
  });
  measure("find_purchase_order", f.kind, n,
          [&](int i) { REQUIRE(REQUIRE_OK(d.find_purchase_order(ids[i])).has_value()); });
  REQUIRE_OK(d.add_token(f.app.id, std::string(64, 'f'), t0));
  measure("app_by_token_hash", f.kind, n, [&](int) {
    REQUIRE(REQUIRE_OK(d.app_by_token_hash(std::string(64, 'f'))).has_value());
  });
  for (int i = 0; i < n; ++i) {
    auto pending = minimal_purchase_order(f.app.id, "j" + std::to_string(i));
    REQUIRE_OK(d.save_purchase_order(pending, t0));
  }
  measure("claim_due_jobs(1) + reschedule_job", f.kind, n, [&](int i) {
    auto job = REQUIRE_OK(d.claim_due_jobs("w", t0 + i, t0 + i + 1000, 1)).at(0);
    job.attempts++;
    job.next_attempt_at = t0 + 1'000'000;
    REQUIRE(REQUIRE_OK(d.reschedule_job(job)));
  });
  SUCCEED();
}

} // namespace receiptd::test
