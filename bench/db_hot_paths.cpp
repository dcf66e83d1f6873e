// Throughput of db/'s hot paths on one connection (the calls a persistence worker
// makes per upload and per revalidation), on a fresh SQLite file or a fresh
// PostgreSQL database. Prints calls per second; asserts nothing.
//
//   db_hot_paths_bench [sqlite|postgresql] [calls]   (default sqlite 300)
//
// postgresql makes its database on the server of RECEIPTD_TEST_PG_URL, as the
// tests do (`scripts/test-postgres start DIR` prints one), and drops it at exit.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "db/database.hpp"
#include "tests/support/db/test_db.hpp"

using namespace receiptd;

namespace {

constexpr model::unix_ms t0 = 1'700'000'000'000;

// The value of `r`, or exits naming the call that failed.
template <class T>
T ok(model::result<T> r, const char* what) {
  if (!r) {
    std::fprintf(stderr, "db_hot_paths_bench: %s: %s\n", what, r.err().message().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

template <class Body>
void measure(const char* what, int n, Body&& body) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i)
    body(i);
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::printf("  %-36s %8.0f/s  (%d in %.3f s)\n", what, n / took.count(), n, took.count());
}

// A new pending purchase order (legacy upload, no optional field): one row and its job.
model::purchase_order_record purchase_order(const std::string& app_id, const std::string& token) {
  model::purchase_order_record r;
  r.app_id = app_id;
  r.is_legacy = true;
  r.package_name = "com.example.game";
  r.purchase_token = token;
  r.purchase.product_id = "gems_100";
  r.created_at = t0;
  r.updated_at = t0;
  return r;
}

// A receipt with `in_app_purchases` purchases (one row each).
model::receipt_record receipt(const std::string& app_id, const std::string& hash,
                              int in_app_purchases) {
  model::receipt_record r;
  r.app_id = app_id;
  r.bundle_id = "com.example.game";
  r.receipt_hash = hash;
  r.receipt_data = "ewoJInNpZ25hdHVyZSIgPSAi+/==";
  r.echo.user_identifier = "user-42";
  r.echo.metadata = R"({"campaign":"spring"})";
  for (int i = 0; i < in_app_purchases; ++i) {
    model::apple_in_app_purchase p;
    p.product_id = "product_" + std::to_string(i);
    p.transaction_id = std::to_string(1000000000 + i);
    p.original_transaction_id = "1000000000";
    p.purchase_date = t0 - i;
    r.in_app_purchases.push_back(p);
  }
  r.state = model::validation_state::rejected;
  r.created_at = t0;
  r.updated_at = t0;
  return r;
}

} // namespace

int main(int argc, char** argv) {
  std::string backend = argc > 1 ? argv[1] : "sqlite";
  int n = argc > 2 ? std::atoi(argv[2]) : 300;
  if ((backend != "sqlite" && backend != "postgresql") || n < 1) {
    std::fprintf(stderr, "usage: db_hot_paths_bench [sqlite|postgresql] [calls]\n");
    return 2;
  }
  std::string url;
  try {
    url = test::fresh_database_url(backend == "sqlite" ? db::dialect::sqlite
                                                       : db::dialect::postgresql);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "db_hot_paths_bench: %s\n", e.what());
    return 1;
  }
  auto d = ok(db::database::open(url), "open");
  ok(d->migrate(), "migrate");
  model::app a;
  a.name = "bench";
  a.bundle_id = a.package_name = "com.example.game";
  auto app = ok(d->create_app(a), "create_app");

  std::printf("db hot paths, %s, %d calls each\n", backend.c_str(), n);
  std::vector<std::string> ids;
  measure("save_purchase_order (new, +job)", n, [&](int i) {
    ids.push_back(ok(d->save_purchase_order(purchase_order(app.id, std::to_string(i)), t0),
                     "save_purchase_order")
                    .record.id);
  });
  measure("save_purchase_order (re-upload)", n, [&](int i) {
    auto again = purchase_order(app.id, std::to_string(i));
    again.echo.user_identifier = "user-42";
    again.state = model::validation_state::validated;
    ok(d->save_purchase_order(again, t0), "save_purchase_order (re-upload)");
  });
  measure("save_receipt (new, 10 in-app)", n, [&](int i) {
    ok(d->save_receipt(receipt(app.id, std::to_string(i), 10), t0), "save_receipt");
  });
  measure("find_purchase_order", n,
          [&](int i) { ok(d->find_purchase_order(ids[i]), "find_purchase_order"); });
  ok(d->add_token(app.id, std::string(64, 'f'), t0), "add_token");
  measure("app_by_token_hash", n,
          [&](int) { ok(d->app_by_token_hash(std::string(64, 'f')), "app_by_token_hash"); });
  for (int i = 0; i < n; ++i)
    ok(d->save_purchase_order(purchase_order(app.id, "j" + std::to_string(i)), t0),
       "save_purchase_order");
  measure("claim_due_jobs(1) + reschedule_job", n, [&](int i) {
    auto jobs = ok(d->claim_due_jobs("bench", t0 + i, t0 + i + 1000, 1), "claim_due_jobs");
    if (jobs.empty()) {
      std::fprintf(stderr, "db_hot_paths_bench: no job due\n");
      std::exit(1);
    }
    auto job = jobs.front();
    job.attempts++;
    job.next_attempt_at = t0 + 1'000'000;
    ok(d->reschedule_job(job), "reschedule_job");
  });
  return 0;
}
