// The Play upkeep's storage: jobs kept for acknowledgements, the
// subscription refresh sweep, and the voided purchases polls with their pages.
#include <algorithm>

#include <boost/json/parse.hpp>

#include "model/identifiers.hpp"
#include "model/store_b/voided.hpp"
#include "tests/integration/fixture.hpp"

namespace receiptd::test {

namespace {

namespace store_b = model::store_b;
using ack = model::acknowledgement_state;

constexpr model::unix_ms lease = 10'000;
constexpr model::unix_ms day = 86'400'000;

// A validated one-time Play product of the app that Play calls unacknowledged,
// with receiptd's acknowledgement as given.
model::purchase_order_record validated_product(const std::string& app_id, const std::string& token,
                                               std::optional<ack> acknowledgement) {
  auto r = full_purchase_order(app_id, token);
  r.fraud = model::fraud_reason::none;
  r.state = model::validation_state::validated;
  r.env = model::environment::production;
  r.purchase.kind = model::product_kind::product;
  r.purchase.auto_renewing.reset();
  r.purchase.expiry_time.reset();
  r.purchase.subscription_state.reset();
  r.purchase.is_test = false;
  r.purchase.acknowledged = false;
  r.store_detail = "Play 200";
  r.acknowledgement = acknowledgement;
  return r;
}

// A validated Play subscription of the app that expired at `expiry`, its
// state still saying it is live; last written at `updated_at`.
model::purchase_order_record lapsed_subscription(const std::string& app_id,
                                                 const std::string& token, model::unix_ms expiry,
                                                 model::unix_ms updated_at) {
  auto r = validated_product(app_id, token, std::nullopt);
  r.purchase.kind = model::product_kind::subscription;
  r.purchase.auto_renewing = true;
  r.purchase.acknowledged = true;
  r.purchase.expiry_time = expiry;
  r.purchase.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
  r.created_at = updated_at;
  r.updated_at = updated_at;
  return r;
}

store_b::voided_purchase voided(const std::string& token, model::unix_ms at, int reason = 7,
                                int source = 2, std::optional<int> quantity = std::nullopt) {
  store_b::voided_purchase v;
  v.purchase_token = token;
  v.order_id = "GPA.0000-" + token;
  v.voided_time = at;
  v.voided_reason = reason;
  v.voided_source = source;
  v.voided_quantity = quantity;
  return v;
}

// The jobs of one record.
model::webhook_endpoint endpoint_of(const model::app& app, std::vector<model::event_type> events) {
  model::webhook_endpoint e;
  e.app_id = app.id;
  e.url = "https://hooks.example.com/receiptd";
  e.events = std::move(events);
  e.created_at = t0;
  return e;
}

// The app's only voided purchases poll, claimed by `owner` at `now`.
store_b::claimed_voided_poll claim_one(db::database& d, const std::string& owner,
                                       model::unix_ms now) {
  auto claimed = REQUIRE_OK(d.claim_voided_polls(owner, now, now + lease, 10));
  REQUIRE(claimed.size() == 1);
  return claimed.front();
}

} // namespace

// ---- jobs kept for a Play acknowledgement ---------------------------------------------

TEST_CASE("a validated purchase whose acknowledgement is pending gets one job", "[upkeep]") {
  database_fixture f;
  auto& d = *f.db;
  auto pending
    = REQUIRE_OK(d.save_purchase_order(validated_product(f.app.id, "p", ack::pending), t0 + 1000));
  CHECK(pending.created);
  CHECK(pending.record.acknowledgement == ack::pending);
  auto jobs = REQUIRE_OK(d.list_jobs());
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].kind == model::record_kind::store_b_purchase_order);
  CHECK(jobs[0].record_id == pending.record.id);
  CHECK(jobs[0].app_id == f.app.id);
  CHECK(jobs[0].attempts == 0);
  CHECK(jobs[0].next_attempt_at == t0 + 1000);
  CHECK(jobs[0].last_error.empty());
  auto stored = REQUIRE_OK(d.find_purchase_order(pending.record.id)).value();
  CHECK(stored.acknowledgement == ack::pending);
  CHECK(stored.state == model::validation_state::validated);

  // Acknowledged, failed, or left to the app: no job.
  auto acknowledged = REQUIRE_OK(d.save_purchase_order(
                                   validated_product(f.app.id, "a", ack::acknowledged), t0 + 1000))
                        .record;
  auto failed
    = REQUIRE_OK(d.save_purchase_order(validated_product(f.app.id, "f", ack::failed), t0 + 1000))
        .record;
  auto none
    = REQUIRE_OK(d.save_purchase_order(validated_product(f.app.id, "n", std::nullopt), t0 + 1000))
        .record;
  CHECK(REQUIRE_OK(d.find_purchase_order(acknowledged.id)).value().acknowledgement
        == ack::acknowledged);
  CHECK(REQUIRE_OK(d.find_purchase_order(failed.id)).value().acknowledgement == ack::failed);
  CHECK_FALSE(REQUIRE_OK(d.find_purchase_order(none.id)).value().acknowledgement.has_value());
  REQUIRE(REQUIRE_OK(d.list_jobs()).size() == 1);

  // A pending acknowledgement of a record that is not validated is no reason
  // for a job of its own: a rejected one gets none.
  auto rejected = validated_product(f.app.id, "r", ack::pending);
  rejected.state = model::validation_state::rejected;
  rejected.fraud = model::fraud_reason::store_rejected;
  REQUIRE_OK(d.save_purchase_order(rejected, t0));
  CHECK(REQUIRE_OK(d.list_jobs()).size() == 1);
}

TEST_CASE("a re-upload keeps or removes the acknowledgement's job", "[upkeep][records]") {
  database_fixture f;
  auto& d = *f.db;
  auto first
    = REQUIRE_OK(d.save_purchase_order(validated_product(f.app.id, "p", ack::pending), t0)).record;
  auto job = jobs_of(d, first.id);
  REQUIRE(job.size() == 1);

  // The app uploads it again; its upload knows nothing of acknowledging: the
  // acknowledgement stays pending, its one job stays (not a second one).
  auto again = validated_product(f.app.id, "p", std::nullopt);
  again.echo.user_identifier = "alice";
  again.updated_at = t0 + 100;
  auto merged = REQUIRE_OK(d.save_purchase_order(again, t0 + 5000));
  CHECK_FALSE(merged.created);
  CHECK(merged.record.id == first.id);
  CHECK(merged.record.acknowledgement == ack::pending);
  auto kept = jobs_of(d, first.id);
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].id == job[0].id);
  CHECK(REQUIRE_OK(d.list_jobs()).size() == 1);

  // An upload after which the acknowledgement is settled removes the job.
  auto settled = validated_product(f.app.id, "p", ack::acknowledged);
  settled.updated_at = t0 + 200;
  auto done = REQUIRE_OK(d.save_purchase_order(settled, t0 + 5000));
  CHECK(done.record.acknowledgement == ack::acknowledged);
  CHECK(REQUIRE_OK(d.find_purchase_order(first.id)).value().acknowledgement == ack::acknowledged);
  CHECK(REQUIRE_OK(d.list_jobs()).empty());

  // An acknowledged purchase is never put back to pending: no job either.
  auto back = validated_product(f.app.id, "p", ack::pending);
  back.updated_at = t0 + 300;
  CHECK(REQUIRE_OK(d.save_purchase_order(back, t0 + 5000)).record.acknowledgement
        == ack::acknowledged);
  CHECK(REQUIRE_OK(d.list_jobs()).empty());

  // A record left to the app whose re-upload makes it pending gets its job
  // then, due at that save's first attempt.
  auto other
    = REQUIRE_OK(d.save_purchase_order(validated_product(f.app.id, "q", std::nullopt), t0)).record;
  CHECK(REQUIRE_OK(d.list_jobs()).empty());
  auto now_pending = validated_product(f.app.id, "q", ack::pending);
  now_pending.updated_at = t0 + 400;
  CHECK(REQUIRE_OK(d.save_purchase_order(now_pending, t0 + 7000)).record.acknowledgement
        == ack::pending);
  auto made = jobs_of(d, other.id);
  REQUIRE(made.size() == 1);
  CHECK(made[0].next_attempt_at == t0 + 7000);
  CHECK(made[0].attempts == 0);
}

TEST_CASE("a revalidation that validates a purchase to acknowledge keeps its job, fenced",
          "[upkeep][jobs]") {
  database_fixture f;
  auto& d = *f.db;
  auto record = REQUIRE_OK(d.save_purchase_order(minimal_purchase_order(f.app.id, "t"), t0)).record;
  // Attempts made and an error noted before this claim.
  auto first = REQUIRE_OK(d.claim_due_jobs("w1", t0, t0 + lease, 1)).at(0);
  auto retry = first;
  retry.attempts = 3;
  retry.next_attempt_at = t0 + 100;
  retry.last_error = "Play 503";
  REQUIRE(REQUIRE_OK(d.reschedule_job(retry)));
  auto stale = REQUIRE_OK(d.claim_due_jobs("w2", t0 + 100, t0 + 100 + lease, 1)).at(0);
  auto current
    = REQUIRE_OK(d.claim_due_jobs("w3", t0 + 100 + lease, t0 + 100 + 2 * lease, 1)).at(0);
  REQUIRE(current.id == stale.id);
  REQUIRE(current.attempts == 3);
  const auto before = REQUIRE_OK(d.find_purchase_order(record.id)).value();

  auto verdict = before;
  verdict.state = model::validation_state::validated;
  verdict.purchase.kind = model::product_kind::product;
  verdict.purchase.purchase_state = model::purchase_state::purchased;
  verdict.purchase.acknowledged = false;
  verdict.acknowledgement = ack::pending;
  verdict.store_detail = "Play 200";
  verdict.updated_at = t0 + 50'000;

  // The overtaken claim: nothing changes, record or job.
  CHECK_FALSE(REQUIRE_OK(d.complete_job(stale, verdict)));
  check_same(REQUIRE_OK(d.find_purchase_order(record.id)).value(), before);
  CHECK_FALSE(REQUIRE_OK(d.find_purchase_order(record.id)).value().acknowledgement.has_value());
  auto untouched = REQUIRE_OK(d.list_jobs());
  REQUIRE(untouched.size() == 1);
  check_same(untouched[0], current);

  // The current claim: the verdict is written, the job stays for the
  // acknowledgement — its attempts back to 0, due at the record's updated_at,
  // its lease released (claimable at once).
  CHECK(REQUIRE_OK(d.complete_job(current, verdict)));
  auto after = REQUIRE_OK(d.find_purchase_order(record.id)).value();
  CHECK(after.state == model::validation_state::validated);
  CHECK(after.acknowledgement == ack::pending);
  CHECK(after.updated_at == t0 + 50'000);
  auto kept = REQUIRE_OK(d.list_jobs());
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].id == current.id);
  CHECK(kept[0].record_id == record.id);
  CHECK(kept[0].attempts == 0);
  CHECK(kept[0].next_attempt_at == t0 + 50'000);
  CHECK(kept[0].last_error.empty());
  // The overtaken claim still cannot touch it.
  auto late = verdict;
  late.acknowledgement = ack::failed;
  CHECK_FALSE(REQUIRE_OK(d.complete_job(stale, late)));
  CHECK(REQUIRE_OK(d.find_purchase_order(record.id)).value().acknowledgement == ack::pending);

  CHECK(REQUIRE_OK(d.claim_due_jobs("w4", t0 + 49'999, t0 + 49'999 + lease, 1)).empty());
  auto acknowledge = REQUIRE_OK(d.claim_due_jobs("w4", t0 + 50'000, t0 + 50'000 + lease, 1));
  REQUIRE(acknowledge.size() == 1);
  CHECK(acknowledge[0].id == current.id);
  CHECK(acknowledge[0].version > current.version);

  // Completed again once acknowledged: the job goes.
  auto acknowledged = after;
  acknowledged.acknowledgement = ack::acknowledged;
  acknowledged.purchase.acknowledged = true;
  acknowledged.store_detail = "acknowledged: HTTP 204";
  acknowledged.updated_at = t0 + 60'000;
  CHECK(REQUIRE_OK(d.complete_job(acknowledge[0], acknowledged)));
  auto final = REQUIRE_OK(d.find_purchase_order(record.id)).value();
  CHECK(final.acknowledgement == ack::acknowledged);
  CHECK(final.purchase.acknowledged == true);
  CHECK(final.store_detail == "acknowledged: HTTP 204");
  CHECK(REQUIRE_OK(d.list_jobs()).empty());
  CHECK_FALSE(REQUIRE_OK(d.complete_job(acknowledge[0], acknowledged))); // gone
}

TEST_CASE("a completed job keeps what the voided purchases poll wrote after its claim",
          "[upkeep][jobs]") {
  database_fixture f;
  auto& d = *f.db;
  auto record
    = REQUIRE_OK(d.save_purchase_order(validated_product(f.app.id, "v", ack::pending), t0)).record;
  auto job = REQUIRE_OK(d.claim_due_jobs("w", t0, t0 + lease, 1)).at(0);
  auto as_claimed = REQUIRE_OK(d.find_purchase_order(record.id)).value();

  // Between the claim and the completion, Play's voided list names it.
  auto poll = claim_one(d, "poller", t0 + 10);
  auto page = std::vector<store_b::voided_purchase>{voided("v", t0 + 5, 1, 0, 2)};
  REQUIRE(REQUIRE_OK(d.apply_voided_page("poller", poll.poll, page, t0 + 20, std::nullopt)) == 1);

  // The acknowledgement's outcome lands on the record as it was claimed.
  auto updated = as_claimed;
  updated.acknowledgement = ack::acknowledged;
  updated.purchase.acknowledged = true;
  updated.store_detail = "acknowledged: HTTP 204";
  updated.updated_at = t0 + 30;
  REQUIRE(REQUIRE_OK(d.complete_job(job, updated)));

  auto after = REQUIRE_OK(d.find_purchase_order(record.id)).value();
  CHECK(after.acknowledgement == ack::acknowledged);
  CHECK(after.store_detail == "acknowledged: HTTP 204");
  CHECK(after.purchase.voided_time == t0 + 5);
  CHECK(after.purchase.voided_reason == 1);
  CHECK(after.purchase.voided_source == 0);
  CHECK(after.purchase.voided_quantity == 2);
  CHECK(after.purchase.purchase_state == model::purchase_state::refunded);
  CHECK_FALSE(after.is_fraud());
  CHECK(REQUIRE_OK(d.list_jobs()).empty());
}

// ---- the subscription refresh sweep -------------------------------------------------------

TEST_CASE("the refresh sweep gives jobs to lapsed live subscriptions, oldest expiry first",
          "[upkeep][refresh]") {
  database_fixture f;
  auto& d = *f.db;
  auto other = make_app(d, "other app");
  const model::unix_ms now = t0;
  const model::unix_ms stale_before = t0 - 5000;
  auto save = [&](model::purchase_order_record r) {
    return REQUIRE_OK(d.save_purchase_order(r, now + 999'999)).record;
  };

  // Due, saved newest expiry first: newest, another app's, one without a
  // subscription state, oldest.
  auto newest = save(lapsed_subscription(f.app.id, "newest", t0 - 1, stale_before - 1));
  auto foreign = save(lapsed_subscription(other.id, "foreign", t0 - 2000, t0 - 10'000));
  auto stateless = lapsed_subscription(f.app.id, "stateless", t0 - 3000, t0 - 10'000);
  stateless.purchase.subscription_state.reset();
  stateless = save(stateless);
  auto oldest = save(lapsed_subscription(f.app.id, "oldest", t0 - 4000, t0 - 10'000));

  // Not due.
  save(lapsed_subscription(f.app.id, "live", t0 + 1000, t0 - 10'000));   // not expired yet
  save(lapsed_subscription(f.app.id, "at-now", t0, t0 - 10'000));        // expires just now
  save(lapsed_subscription(f.app.id, "fresh", t0 - 4000, stale_before)); // refreshed lately
  auto expired = lapsed_subscription(f.app.id, "expired", t0 - 4000, t0 - 10'000);
  expired.purchase.subscription_state = "SUBSCRIPTION_STATE_EXPIRED";
  save(expired);
  auto cancelled = lapsed_subscription(f.app.id, "cancelled", t0 - 4000, t0 - 10'000);
  cancelled.purchase.subscription_state = "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED";
  save(cancelled);
  auto refunded = lapsed_subscription(f.app.id, "refunded", t0 - 4000, t0 - 10'000);
  refunded.purchase.voided_time = t0 - 6000;
  refunded.purchase.voided_reason = 7;
  refunded.purchase.voided_source = 2;
  refunded.purchase.purchase_state = model::purchase_state::refunded;
  save(refunded);
  auto product = lapsed_subscription(f.app.id, "product", t0 - 4000, t0 - 10'000);
  product.purchase.kind = model::product_kind::product;
  save(product);
  auto rejected = lapsed_subscription(f.app.id, "rejected", t0 - 4000, t0 - 10'000);
  rejected.state = model::validation_state::rejected;
  rejected.fraud = model::fraud_reason::store_rejected;
  save(rejected);
  auto failed = lapsed_subscription(f.app.id, "failed", t0 - 4000, t0 - 10'000);
  failed.state = model::validation_state::failed;
  save(failed);
  // With a job already (an acknowledgement pending): not a second one.
  auto busy = lapsed_subscription(f.app.id, "busy", t0 - 5000, t0 - 10'000);
  busy.purchase.acknowledged = false;
  busy.acknowledgement = ack::pending;
  busy = save(busy);
  const auto busy_job = jobs_of(d, busy.id);
  REQUIRE(busy_job.size() == 1);
  REQUIRE(REQUIRE_OK(d.list_jobs()).size() == 1);

  CHECK(REQUIRE_OK(
          d.enqueue_refreshes(model::record_kind::store_b_purchase_order, now, stale_before, 0))
        == 0);
  CHECK(REQUIRE_OK(d.list_jobs()).size() == 1);

  CHECK(REQUIRE_OK(
          d.enqueue_refreshes(model::record_kind::store_b_purchase_order, now, stale_before, 2))
        == 2);
  for (const auto& r : {oldest, stateless}) {
    INFO("record " << r.purchase_token);
    auto jobs = jobs_of(d, r.id);
    REQUIRE(jobs.size() == 1);
    CHECK(jobs[0].kind == model::record_kind::store_b_purchase_order);
    CHECK(jobs[0].app_id == r.app_id);
    CHECK(jobs[0].next_attempt_at == now);
    CHECK(jobs[0].attempts == 0);
  }
  CHECK(REQUIRE_OK(d.list_jobs()).size() == 3);

  // Again: the rest, never a second job for one that has one.
  CHECK(REQUIRE_OK(
          d.enqueue_refreshes(model::record_kind::store_b_purchase_order, now, stale_before, 10))
        == 2);
  auto foreign_jobs = jobs_of(d, foreign.id);
  REQUIRE(foreign_jobs.size() == 1);
  CHECK(foreign_jobs[0].app_id == other.id);
  CHECK(jobs_of(d, newest.id).size() == 1);
  CHECK(REQUIRE_OK(
          d.enqueue_refreshes(model::record_kind::store_b_purchase_order, now, stale_before, 10))
        == 0);
  auto all = REQUIRE_OK(d.list_jobs());
  CHECK(all.size() == 5);
  for (const auto& r : {oldest, stateless, foreign, newest, busy})
    CHECK(jobs_of(d, r.id).size() == 1);
  check_same(jobs_of(d, busy.id).at(0), busy_job.at(0)); // untouched
}

// ---- voided purchases polls -------------------------------------------------------------

TEST_CASE("every app with a package name and a service account gets a voided purchases poll",
          "[upkeep][voided]") {
  database_fixture f;
  auto& d = *f.db;
  model::app no_account;
  no_account.name = "no service account";
  no_account.package_name = "com.example.other";
  no_account = REQUIRE_OK(d.create_app(no_account));
  model::app no_package;
  no_package.name = "no package";
  no_package.store_b_service_account = R"({"client_email":"x@y.iam.gserviceaccount.com"})";
  no_package = REQUIRE_OK(d.create_app(no_package));

  CHECK(REQUIRE_OK(d.claim_voided_polls("A", t0, t0 + lease, 0)).empty());
  auto claimed = claim_one(d, "A", t0);
  CHECK(claimed.poll.app_id == f.app.id);
  CHECK(claimed.app.id == f.app.id);
  CHECK(claimed.app.package_name == f.app.package_name);
  CHECK(claimed.app.store_b_service_account == f.app.store_b_service_account);
  CHECK(claimed.poll.cursor.window_start == t0 - 30 * day);
  CHECK(claimed.poll.cursor.window_start == store_b::first_voided_cursor(t0).window_start);
  CHECK(claimed.poll.cursor.page_token.empty());
  CHECK(claimed.poll.last_error.empty());
  CHECK(claimed.poll.next_poll_at == t0);
  const auto first_version = claimed.poll.version;

  // Leased to A: nobody else gets it before the lease ends, then B does.
  CHECK(REQUIRE_OK(d.claim_voided_polls("B", t0 + lease - 1, t0 + 2 * lease, 10)).empty());
  CHECK(REQUIRE_OK(d.claim_voided_polls("A", t0 + lease - 1, t0 + 2 * lease, 10)).empty());
  auto rescued = claim_one(d, "B", t0 + lease);
  CHECK(rescued.poll.app_id == f.app.id);
  CHECK(rescued.poll.version == first_version + 1);
  CHECK(rescued.poll.cursor.window_start == t0 - 30 * day); // not made anew

  // An app that gets its service account later gets its poll at the next
  // claim, its first window reaching back from then.
  no_account.store_b_service_account = R"({"client_email":"z@y.iam.gserviceaccount.com"})";
  REQUIRE(REQUIRE_OK(d.update_app(no_account)));
  // (B's lease has run out by then: the first app's poll is due again too.)
  auto later = REQUIRE_OK(d.claim_voided_polls("C", t0 + 5 * day, t0 + 5 * day + lease, 10));
  REQUIRE(later.size() == 2);
  auto added = std::find_if(later.begin(), later.end(),
                            [&](const auto& c) { return c.poll.app_id == no_account.id; });
  REQUIRE(added != later.end());
  CHECK(added->app.package_name == "com.example.other");
  CHECK(added->poll.cursor.window_start == t0 + 5 * day - 30 * day);
  CHECK(added->poll.next_poll_at == t0 + 5 * day);
  for (const auto& c : later)
    CHECK(c.poll.app_id != no_package.id);
  CHECK(REQUIRE_OK(d.claim_voided_polls("C", t0 + 5 * day, t0 + 5 * day + lease, 10)).empty());
}

TEST_CASE("a voided page marks the app's purchase orders once, with the cursor",
          "[upkeep][voided][webhooks]") {
  database_fixture f;
  auto& d = *f.db;
  // Another app, not polled (no service account): only the first app's poll exists.
  model::app other;
  other.name = "other app";
  other.package_name = "com.example.game";
  other = REQUIRE_OK(d.create_app(other));
  // The same token at two apps; one more of the app not in any page.
  auto mine
    = REQUIRE_OK(d.save_purchase_order(validated_product(f.app.id, "tok-v", std::nullopt), t0))
        .record;
  auto theirs
    = REQUIRE_OK(d.save_purchase_order(validated_product(other.id, "tok-v", std::nullopt), t0))
        .record;
  auto unnamed
    = REQUIRE_OK(d.save_purchase_order(validated_product(f.app.id, "tok-u", std::nullopt), t0))
        .record;
  auto third
    = REQUIRE_OK(d.save_purchase_order(validated_product(f.app.id, "tok-3", std::nullopt), t0))
        .record;
  auto fourth
    = REQUIRE_OK(d.save_purchase_order(validated_product(f.app.id, "tok-4", std::nullopt), t0))
        .record;

  auto poll = claim_one(d, "A", t0).poll;
  REQUIRE(poll.app_id == f.app.id);

  // The first page of the window: more follow, the lease goes on.
  store_b::voided_page page;
  page.purchases = {voided("tok-v", t0 - 500, 7, 2, 1), voided("never-uploaded", t0 - 400)};
  page.next_page_token = "page-2";
  poll.cursor = store_b::advance_voided_cursor(poll.cursor, page, t0);
  poll.next_poll_at = t0 + 1000;
  REQUIRE(poll.cursor.page_token == "page-2");
  CHECK(REQUIRE_OK(d.apply_voided_page("A", poll, page.purchases, t0 + 10, t0 + 3 * lease)) == 1);

  auto got = REQUIRE_OK(d.find_purchase_order(mine.id)).value();
  CHECK(got.purchase.purchase_state == model::purchase_state::refunded);
  CHECK(got.purchase.voided_time == t0 - 500);
  CHECK(got.purchase.voided_reason == 7);
  CHECK(got.purchase.voided_source == 2);
  CHECK(got.purchase.voided_quantity == 1);
  CHECK(got.updated_at == t0 + 10);
  CHECK(got.state == model::validation_state::validated);
  CHECK_FALSE(got.is_fraud()); // a refund is not fraud
  CHECK(got.echo.user_identifier == mine.echo.user_identifier);
  CHECK(got.purchase_data == mine.purchase_data);
  check_same(REQUIRE_OK(d.find_purchase_order(theirs.id)).value(), theirs);
  check_same(REQUIRE_OK(d.find_purchase_order(unnamed.id)).value(), unnamed);
  CHECK(REQUIRE_OK(d.list_deliveries(f.app.id, 100)).empty()); // no endpoints

  // The same page again changes nothing.
  CHECK(REQUIRE_OK(d.apply_voided_page("A", poll, page.purchases, t0 + 20, t0 + 3 * lease)) == 0);
  CHECK(REQUIRE_OK(d.find_purchase_order(mine.id)).value().updated_at == t0 + 10);

  // The lease goes on past the claim's: nobody takes the poll over.
  CHECK(REQUIRE_OK(d.claim_voided_polls("B", t0 + lease, t0 + 2 * lease, 10)).empty());

  // An endpoint that wants other events only: no event.
  REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app, {model::event_type::receipt_updated})));
  page.purchases = {voided("tok-3", t0 - 300)};
  page.next_page_token = "page-3";
  poll.cursor = store_b::advance_voided_cursor(poll.cursor, page, t0);
  CHECK(REQUIRE_OK(d.apply_voided_page("A", poll, page.purchases, t0 + 30, t0 + 3 * lease)) == 1);
  CHECK(REQUIRE_OK(d.find_purchase_order(third.id)).value().purchase.voided_time == t0 - 300);
  CHECK(REQUIRE_OK(d.list_deliveries(f.app.id, 100)).empty());

  // One that wants purchase_order.updated: an event, on the last page.
  auto wanting = REQUIRE_OK(
    d.add_webhook_endpoint(endpoint_of(f.app, {model::event_type::purchase_order_updated})));
  page.purchases = {voided("tok-4", t0 - 200)};
  page.next_page_token.clear();
  poll.cursor = store_b::advance_voided_cursor(poll.cursor, page, t0);
  poll.next_poll_at = t0 + 1000 + 15 * 60'000;
  poll.last_error.clear();
  const auto stored_cursor = poll.cursor;
  CHECK(stored_cursor.page_token.empty());
  CHECK(stored_cursor.window_start == t0 - 200); // the latest voided time seen
  CHECK(REQUIRE_OK(d.apply_voided_page("A", poll, page.purchases, t0 + 40, std::nullopt)) == 1);
  auto deliveries = REQUIRE_OK(d.list_deliveries(f.app.id, 100));
  REQUIRE(deliveries.size() == 1);
  CHECK(deliveries[0].endpoint_id == wanting.id);
  CHECK(deliveries[0].record_id == fourth.id);
  CHECK(deliveries[0].type == model::event_type::purchase_order_updated);
  auto body = boost::json::parse(deliveries[0].body).as_object();
  const auto& changes = body.at("changes").as_array();
  CHECK(std::find(changes.begin(), changes.end(), boost::json::value("refunded")) != changes.end());
  CHECK(REQUIRE_OK(d.list_deliveries(other.id, 100)).empty());

  // The last page ended the lease: the next claim once the poll is due again
  // sees the stored cursor, with a new version.
  CHECK(REQUIRE_OK(d.claim_voided_polls("B", poll.next_poll_at - 1, poll.next_poll_at + lease, 10))
          .empty());
  auto next = claim_one(d, "B", poll.next_poll_at);
  CHECK(next.poll.app_id == f.app.id);
  CHECK(next.poll.cursor.window_start == stored_cursor.window_start);
  CHECK(next.poll.cursor.page_token.empty());
  CHECK(next.poll.cursor.high_water == stored_cursor.high_water);
  CHECK(next.poll.next_poll_at == poll.next_poll_at);
  CHECK(next.poll.last_error.empty());
  CHECK(next.poll.version > poll.version);
}

TEST_CASE("a voided page of an overtaken claim changes nothing", "[upkeep][voided]") {
  database_fixture f;
  auto& d = *f.db;
  auto mine
    = REQUIRE_OK(d.save_purchase_order(validated_product(f.app.id, "tok-x", std::nullopt), t0))
        .record;
  auto stale = claim_one(d, "A", t0).poll;
  // A's claim lapses and B takes the poll over.
  auto current = claim_one(d, "B", t0 + lease).poll;
  REQUIRE(current.version > stale.version);

  auto cursor_before = current.cursor;
  auto page = std::vector<store_b::voided_purchase>{voided("tok-x", t0 - 100)};
  auto moved = stale;
  moved.cursor.window_start = t0 - 100;
  moved.cursor.page_token = "page-2";
  moved.next_poll_at = t0 + lease;
  moved.last_error = "from the stale claim";

  // A with its old version; B's claim presented by someone else.
  CHECK_FALSE(
    REQUIRE_OK(d.apply_voided_page("A", moved, page, t0 + lease + 1, std::nullopt)).has_value());
  auto as_b = moved;
  as_b.version = current.version;
  CHECK_FALSE(
    REQUIRE_OK(d.apply_voided_page("C", as_b, page, t0 + lease + 1, std::nullopt)).has_value());
  check_same(REQUIRE_OK(d.find_purchase_order(mine.id)).value(), mine);

  // B's lease held (nobody ended it) and the cursor stayed.
  CHECK(REQUIRE_OK(d.claim_voided_polls("C", t0 + 2 * lease - 1, t0 + 3 * lease, 10)).empty());
  auto after = claim_one(d, "C", t0 + 2 * lease);
  CHECK(after.poll.version == current.version + 1);
  CHECK(after.poll.cursor.window_start == cursor_before.window_start);
  CHECK(after.poll.cursor.page_token.empty());
  CHECK(after.poll.last_error.empty());
  CHECK(after.poll.next_poll_at == current.next_poll_at);

  // B itself, its claim overtaken by C now, cannot write either.
  auto late_b = current;
  late_b.last_error = "late";
  CHECK_FALSE(
    REQUIRE_OK(d.apply_voided_page("B", late_b, page, t0 + 2 * lease, std::nullopt)).has_value());
  check_same(REQUIRE_OK(d.find_purchase_order(mine.id)).value(), mine);
  // C's is current: it writes.
  CHECK(REQUIRE_OK(d.apply_voided_page("C", after.poll, page, t0 + 2 * lease, std::nullopt)) == 1);
}

} // namespace receiptd::test
