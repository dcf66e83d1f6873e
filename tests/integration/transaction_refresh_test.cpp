// The StoreKit 2 subscription refresh sweep's storage: which
// transactions get a refresh job, on SQLite and PostgreSQL.
#include "tests/integration/fixture.hpp"

namespace receiptd::test {

namespace {

// An app that can call the App Store Server API (its credentials are only
// looked at as present here).
model::app with_server_api(db::database& d, const std::string& name) {
  model::app a;
  a.name = name;
  a.bundle_id = "com.example.game";
  a.app_store_issuer_id = "57246542-96fe-1a63-e053-0824d011072a";
  a.app_store_key_id = "2X9R4HXF34";
  a.app_store_private_key = "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n";
  return REQUIRE_OK(d.create_app(a));
}

// A validated sandbox subscription transaction whose period ended at `expiry`,
// last written at `updated_at`.
model::transaction_record lapsed(const std::string& app_id, const std::string& id,
                                 model::unix_ms expiry, model::unix_ms updated_at) {
  auto r = signed_transaction_record(app_id, id, id);
  r.env = model::environment::sandbox;
  r.transaction.expires_date = expiry;
  r.created_at = updated_at;
  r.updated_at = updated_at;
  return r;
}

} // namespace

TEST_CASE("the StoreKit 2 refresh sweep gives jobs to lapsed live subscriptions of apps with "
          "Server API credentials, oldest expiry first",
          "[upkeep][refresh][transactions]") {
  database_fixture f;
  auto& d = *f.db;
  auto app = with_server_api(d, "server api app");
  auto other = with_server_api(d, "other server api app");
  const model::unix_ms now = t0;
  const model::unix_ms stale_before = t0 - 5000;
  auto save = [&](model::transaction_record r) {
    return REQUIRE_OK(d.save_transaction(r, now + 999'999)).record;
  };
  constexpr auto kind = model::record_kind::store_a_transaction;

  // Due: oldest (no status yet), one in billing retry whose subscription's
  // expiry (not its own) passed, another app's, newest.
  auto newest = save(lapsed(app.id, "1000000001", t0 - 1, stale_before - 1));
  auto foreign = save(lapsed(other.id, "1000000002", t0 - 2000, t0 - 10'000));
  auto retrying = lapsed(app.id, "1000000003", t0 + 86'400'000, t0 - 10'000);
  retrying.transaction.subscription_status = "billing_retry";
  retrying.transaction.subscription_expires_date = t0 - 3000;
  retrying = save(retrying);
  auto oldest = save(lapsed(app.id, "1000000004", t0 - 4000, t0 - 10'000));

  // Not due.
  save(lapsed(app.id, "2000000001", t0 + 1000, t0 - 10'000));  // not expired yet
  save(lapsed(app.id, "2000000002", t0, t0 - 10'000));         // expires just now
  save(lapsed(app.id, "2000000003", t0 - 4000, stale_before)); // refreshed lately
  auto renewed = lapsed(app.id, "2000000004", t0 - 4000, t0 - 10'000);
  renewed.transaction.subscription_status = "active";
  renewed.transaction.subscription_expires_date = t0 + 1000; // a later period is paid
  save(renewed);
  for (std::string status : {"expired", "revoked"}) {
    auto r = lapsed(app.id, "3000000" + std::to_string(status.size()), t0 - 4000, t0 - 10'000);
    r.transaction.subscription_status = status;
    save(r);
  }
  auto revoked = lapsed(app.id, "2000000005", t0 - 4000, t0 - 10'000);
  revoked.transaction.revocation_date = t0 - 5000;
  revoked.transaction.revocation_reason = 0;
  save(revoked);
  auto consumable = lapsed(app.id, "2000000006", t0 - 4000, t0 - 10'000);
  consumable.transaction.type = "Consumable";
  save(consumable);
  auto xcode = lapsed(app.id, "2000000007", t0 - 4000, t0 - 10'000);
  xcode.env = model::environment::xcode;
  save(xcode);
  auto rejected = lapsed(app.id, "2000000008", t0 - 4000, t0 - 10'000);
  rejected.state = model::validation_state::rejected;
  rejected.fraud = model::fraud_reason::store_rejected;
  save(rejected);
  save(lapsed(f.app.id, "2000000009", t0 - 4000, t0 - 10'000)); // its app has no credentials
  auto pending = save([&] {
    auto r = lapsed(app.id, "2000000010", t0 - 4000, t0 - 10'000);
    r.state = model::validation_state::pending; // has its revalidation job already
    return r;
  }());
  const auto pending_job = jobs_of(d, pending.id);
  REQUIRE(pending_job.size() == 1);

  // Play's sweep is another store's: none of these.
  CHECK(REQUIRE_OK(
          d.enqueue_refreshes(model::record_kind::store_b_purchase_order, now, stale_before, 100))
        == 0);
  CHECK(REQUIRE_OK(d.enqueue_refreshes(model::record_kind::store_a_receipt, now, stale_before, 100))
        == 0);
  CHECK(REQUIRE_OK(d.list_jobs()).size() == 1);

  CHECK(REQUIRE_OK(d.enqueue_refreshes(kind, now, stale_before, 2)) == 2);
  for (const auto& r : {oldest, retrying}) {
    INFO("transaction " << r.transaction.transaction_id);
    auto jobs = jobs_of(d, r.id);
    REQUIRE(jobs.size() == 1);
    CHECK(jobs[0].kind == kind);
    CHECK(jobs[0].app_id == app.id);
    CHECK(jobs[0].next_attempt_at == now);
    CHECK(jobs[0].attempts == 0);
  }

  CHECK(REQUIRE_OK(d.enqueue_refreshes(kind, now, stale_before, 10)) == 2);
  REQUIRE(jobs_of(d, foreign.id).size() == 1);
  CHECK(jobs_of(d, foreign.id)[0].app_id == other.id);
  CHECK(jobs_of(d, newest.id).size() == 1);
  CHECK(REQUIRE_OK(d.enqueue_refreshes(kind, now, stale_before, 10)) == 0);
  CHECK(REQUIRE_OK(d.list_jobs()).size() == 5);
  CHECK(jobs_of(d, pending.id).size() == 1);
}

TEST_CASE("a refreshed StoreKit 2 transaction keeps no job and is not swept again within the "
          "interval",
          "[upkeep][refresh][transactions]") {
  database_fixture f;
  auto& d = *f.db;
  auto app = with_server_api(d, "server api app");
  constexpr auto kind = model::record_kind::store_a_transaction;
  auto r = REQUIRE_OK(d.save_transaction(lapsed(app.id, "1000000001", t0 - 4000, t0 - 10'000), t0))
             .record;
  REQUIRE(REQUIRE_OK(d.enqueue_refreshes(kind, t0, t0 - 5000, 10)) == 1);
  auto claimed = REQUIRE_OK(d.claim_due_jobs("me", t0, t0 + 10'000, 10));
  REQUIRE(claimed.size() == 1);

  auto refreshed = r;
  refreshed.transaction.subscription_status = "active";
  refreshed.transaction.subscription_expires_date = t0 + 86'400'000;
  refreshed.transaction.notified_at = t0 + 5; // the answer's signedDate
  refreshed.store_detail = "refresh: HTTP 200";
  refreshed.updated_at = t0 + 10;
  REQUIRE(REQUIRE_OK(d.complete_job(claimed[0], refreshed)));
  CHECK(REQUIRE_OK(d.list_jobs()).empty());
  auto after = REQUIRE_OK(d.find_transaction(r.id)).value();
  CHECK(after.transaction.subscription_status == "active");
  CHECK(after.transaction.subscription_expires_date == t0 + 86'400'000);
  CHECK(after.state == model::validation_state::validated);
  // Its subscription's expiry is ahead now, and it was just written.
  CHECK(REQUIRE_OK(d.enqueue_refreshes(kind, t0 + 20, t0 + 5, 10)) == 0);
  // A day later it has lapsed again: swept again.
  CHECK(REQUIRE_OK(d.enqueue_refreshes(kind, t0 + 86'400'001, t0 + 86'400'000, 10)) == 1);
}

} // namespace receiptd::test
