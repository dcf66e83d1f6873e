// Revalidation jobs: due times, leases, fencing, completion and rescheduling.
#include "tests/integration/fixture.hpp"

namespace receiptd::test {

namespace {

constexpr model::unix_ms lease = 10'000;

model::purchase_order_record save_pending(db::database& d, const model::app& app,
                                          const std::string& token, model::unix_ms due) {
  return REQUIRE_OK(d.save_purchase_order(minimal_purchase_order(app.id, token), due)).record;
}

} // namespace

TEST_CASE("a job is claimed only once due", "[jobs]") {
  database_fixture f;
  auto& d = *f.db;
  auto record = save_pending(d, f.app, "t", t0 + 1000);
  auto jobs = REQUIRE_OK(d.list_jobs());
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].kind == model::record_kind::store_b_purchase_order);
  CHECK(jobs[0].record_id == record.id);
  CHECK(jobs[0].app_id == f.app.id);
  CHECK(jobs[0].attempts == 0);
  CHECK(jobs[0].next_attempt_at == t0 + 1000);
  CHECK(jobs[0].version == 0);
  CHECK(jobs[0].last_error.empty());
  CHECK_FALSE(jobs[0].lease_owner);
  CHECK_FALSE(jobs[0].lease_until);

  CHECK(REQUIRE_OK(d.claim_due_jobs("w1", t0 + 999, t0 + 999 + lease, 10)).empty());
  auto claimed = REQUIRE_OK(d.claim_due_jobs("w1", t0 + 1000, t0 + 1000 + lease, 10));
  REQUIRE(claimed.size() == 1);
  auto want = jobs[0];
  want.version = 1;
  want.lease_owner = "w1";
  want.lease_until = t0 + 1000 + lease;
  check_same(claimed[0], want);
  check_same(REQUIRE_OK(d.list_jobs()).at(0), want); // receiptctl jobs shows the lease
  CHECK(REQUIRE_OK(d.claim_due_jobs("w1", t0 + 1000, t0 + 1000 + lease, 0)).empty());
}

TEST_CASE("a leased job is claimed again only when its lease expires", "[jobs]") {
  database_fixture f;
  auto& d = *f.db;
  save_pending(d, f.app, "t", t0);
  auto first = REQUIRE_OK(d.claim_due_jobs("w1", t0, t0 + lease, 10));
  REQUIRE(first.size() == 1);
  CHECK(REQUIRE_OK(d.claim_due_jobs("w2", t0 + lease - 1, t0 + 2 * lease, 10)).empty());
  auto rescued = REQUIRE_OK(d.claim_due_jobs("w2", t0 + lease, t0 + 2 * lease, 10));
  REQUIRE(rescued.size() == 1);
  CHECK(rescued[0].id == first[0].id);
  CHECK(rescued[0].version == first[0].version + 1);
}

TEST_CASE("claims take the earliest due jobs up to the limit", "[jobs]") {
  database_fixture f;
  auto& d = *f.db;
  for (int i = 0; i < 5; ++i)
    save_pending(d, f.app, "t" + std::to_string(i), t0 + 100 * (5 - i)); // t4 due first
  auto batch = REQUIRE_OK(d.claim_due_jobs("w", t0 + 1000, t0 + 1000 + lease, 3));
  REQUIRE(batch.size() == 3);
  std::vector<model::unix_ms> due;
  for (auto& j : batch)
    due.push_back(j.next_attempt_at);
  std::sort(due.begin(), due.end());
  CHECK(due == std::vector<model::unix_ms>{t0 + 100, t0 + 200, t0 + 300});
  CHECK(REQUIRE_OK(d.claim_due_jobs("w", t0 + 1000, t0 + 1000 + lease, 3)).size() == 2);
}

TEST_CASE("completion is fenced by the claim's version", "[jobs]") {
  database_fixture f;
  auto& d = *f.db;
  auto record = save_pending(d, f.app, "t", t0);
  record.echo.user_identifier = "kept";
  REQUIRE_OK(d.save_purchase_order(record, t0)); // echo fields set by a re-upload
  auto stale = REQUIRE_OK(d.claim_due_jobs("w1", t0, t0 + lease, 1)).at(0);
  auto current = REQUIRE_OK(d.claim_due_jobs("w2", t0 + lease, t0 + 2 * lease, 1)).at(0);
  auto before = REQUIRE_OK(d.find_purchase_order(record.id)).value();

  auto verdict = before;
  verdict.state = model::validation_state::validated;
  verdict.env = model::environment::sandbox;
  verdict.purchase.purchase_state = model::purchase_state::purchased;
  verdict.purchase.expiry_time = t0 + 86'400'000;
  verdict.purchase.acknowledged = true;
  verdict.store_detail = "Play 200";
  verdict.updated_at = t0 + 5;
  verdict.echo.user_identifier = "ignored"; // completion writes the verdict only

  CHECK_FALSE(REQUIRE_OK(d.complete_job(stale, verdict)));
  check_same(REQUIRE_OK(d.find_purchase_order(record.id)).value(), before);
  REQUIRE(REQUIRE_OK(d.list_jobs()).size() == 1);

  CHECK(REQUIRE_OK(d.complete_job(current, verdict)));
  auto after = REQUIRE_OK(d.find_purchase_order(record.id)).value();
  auto want = verdict;
  want.echo = before.echo;
  check_same(after, want);
  CHECK(REQUIRE_OK(d.list_jobs()).empty());
  CHECK_FALSE(REQUIRE_OK(d.complete_job(current, verdict))); // only once
}

TEST_CASE("completing a receipt's job replaces its in-app purchases", "[jobs]") {
  database_fixture f;
  auto& d = *f.db;
  auto record
    = REQUIRE_OK(d.save_receipt(minimal_receipt(f.app.id, std::string(64, 'r')), t0)).record;
  auto job = REQUIRE_OK(d.claim_due_jobs("w", t0, t0 + lease, 5)).at(0);
  CHECK(job.kind == model::record_kind::store_a_receipt);
  auto verdict = full_receipt(f.app.id, record.receipt_hash, 7);
  verdict.id = record.id;
  verdict.state = model::validation_state::failed;
  CHECK(REQUIRE_OK(d.complete_job(job, verdict)));
  auto after = REQUIRE_OK(d.find_receipt(record.id)).value();
  CHECK(after.state == model::validation_state::failed);
  CHECK(after.fraud == verdict.fraud);
  CHECK(after.store_detail == verdict.store_detail);
  REQUIRE(after.in_app_purchases.size() == 7);
  CHECK(after.in_app_purchases[6].product_id == "product_6");
  CHECK(after.receipt_data == record.receipt_data); // upload columns untouched
  CHECK(after.country_code == record.country_code);
}

TEST_CASE("a job completed with the wrong record is an error value", "[jobs]") {
  database_fixture f;
  auto& d = *f.db;
  auto record = save_pending(d, f.app, "t", t0);
  auto job = REQUIRE_OK(d.claim_due_jobs("w", t0, t0 + lease, 5)).at(0);
  CHECK_FALSE(d.complete_job(job, minimal_receipt(f.app.id, "h")).ok()); // wrong kind
  auto other = minimal_purchase_order(f.app.id, "other");
  other.id = "00000000-0000-4000-8000-00000000ffff";
  CHECK_FALSE(d.complete_job(job, other).ok()); // wrong record
  CHECK(REQUIRE_OK(d.complete_job(job, record)));
}

TEST_CASE("a rescheduled job waits for its next attempt, lease released", "[jobs]") {
  database_fixture f;
  auto& d = *f.db;
  save_pending(d, f.app, "t", t0);
  auto job = REQUIRE_OK(d.claim_due_jobs("w1", t0, t0 + lease, 1)).at(0);

  auto retry = job;
  retry.attempts = 1;
  retry.next_attempt_at = t0 + 2000; // before the lease would have expired
  retry.last_error = "Play 503";
  CHECK(REQUIRE_OK(d.reschedule_job(retry)));
  retry.lease_owner.reset(); // released
  retry.lease_until.reset();
  check_same(REQUIRE_OK(d.list_jobs()).at(0), retry);

  CHECK(REQUIRE_OK(d.claim_due_jobs("w2", t0 + 1999, t0 + 1999 + lease, 1)).empty());
  auto again = REQUIRE_OK(d.claim_due_jobs("w2", t0 + 2000, t0 + 2000 + lease, 1));
  REQUIRE(again.size() == 1);
  CHECK(again[0].attempts == 1);
  CHECK(again[0].last_error == "Play 503");
  CHECK(again[0].version == job.version + 1);

  auto late = retry; // the first worker, overtaken
  late.attempts = 2;
  late.next_attempt_at = t0 + 99'999;
  CHECK_FALSE(REQUIRE_OK(d.reschedule_job(late)));
  check_same(REQUIRE_OK(d.list_jobs()).at(0), again[0]);
}

TEST_CASE("dropping a job is fenced by the claim's version", "[jobs]") {
  database_fixture f;
  auto& d = *f.db;
  save_pending(d, f.app, "t", t0);
  auto first = REQUIRE_OK(d.claim_due_jobs("w1", t0, t0 + lease, 10));
  REQUIRE(first.size() == 1);
  auto second = REQUIRE_OK(d.claim_due_jobs("w2", t0 + lease, t0 + 2 * lease, 10));
  REQUIRE(second.size() == 1);
  CHECK_FALSE(REQUIRE_OK(d.drop_job(first[0]))); // overtaken: w2 holds it now
  CHECK(REQUIRE_OK(d.list_jobs()).size() == 1);
  CHECK(REQUIRE_OK(d.drop_job(second[0])));
  CHECK(REQUIRE_OK(d.list_jobs()).empty());
}

} // namespace receiptd::test
