// App Store Server Notifications applied to the stored records: once
// per notificationUUID, to the app's records it is about, with their events.
#include <boost/json/parse.hpp>

#include "model/identifiers.hpp"
#include "model/store_b/voided.hpp"
#include "tests/integration/fixture.hpp"

namespace receiptd::test {

namespace {

namespace store_a = model::store_a;

const std::string bundle = "com.example.game";

// What Apple signs about a stored transaction, as it is.
store_a::signed_transaction signed_as(const model::transaction_record& r) {
  const auto& a = r.transaction;
  store_a::signed_transaction t;
  t.transaction_id = a.transaction_id;
  t.original_transaction_id = a.original_transaction_id;
  t.bundle_id = a.bundle_id;
  t.product_id = a.product_id;
  t.type = a.type;
  t.env = r.env;
  t.purchase_date = a.purchase_date;
  t.original_purchase_date = a.original_purchase_date;
  t.expires_date = a.expires_date;
  t.quantity = a.quantity.value_or(1);
  return t;
}

store_a::verified_notification notification(std::string type, model::environment env,
                                            std::optional<store_a::signed_transaction> t,
                                            model::unix_ms signed_date) {
  store_a::verified_notification v;
  v.n.notification_uuid = model::make_uuid();
  v.n.type = std::move(type);
  v.n.version = "2.0";
  v.n.signed_date = signed_date;
  v.n.bundle_id = bundle;
  v.n.env = env;
  if (t)
    t->signed_date = signed_date;
  v.transaction = std::move(t);
  return v;
}

// A REFUND of the transaction: revoked at `at` for `reason`.
store_a::verified_notification refund(store_a::signed_transaction t, model::unix_ms at, int reason,
                                      model::unix_ms signed_date) {
  t.revocation_date = at;
  t.revocation_reason = reason;
  auto env = t.env;
  return notification("REFUND", env, std::move(t), signed_date);
}

model::webhook_endpoint endpoint_of(const model::app& app) {
  model::webhook_endpoint e;
  e.app_id = app.id;
  e.url = "https://hooks.example.com/receiptd";
  e.created_at = t0;
  return e;
}

} // namespace

TEST_CASE("a notification is applied once", "[notifications]") {
  database_fixture f;
  auto& d = *f.db;
  auto record = REQUIRE_OK(d.save_transaction(
                             signed_transaction_record(f.app.id, "2000000001", "2000000000"), t0))
                  .record;
  auto v = refund(signed_as(record), t0 + 500, 1, t0 + 1000);

  auto first = REQUIRE_OK(d.apply_store_a_notification(f.app.id, v, t0 + 2000));
  CHECK_FALSE(first.duplicate);
  CHECK(first.records_changed == 1);
  CHECK(first.events == 0); // no endpoints
  auto refunded = REQUIRE_OK(d.find_transaction(record.id)).value();
  CHECK(refunded.transaction.revocation_date == t0 + 500);
  CHECK(refunded.transaction.revocation_reason == 1);
  CHECK(refunded.transaction.notified_at == t0 + 1000);
  CHECK(refunded.updated_at == t0 + 2000);
  CHECK_FALSE(refunded.is_fraud()); // a refund is not fraud
  CHECK(refunded.state == model::validation_state::validated);

  // Apple retries: the same notificationUUID again changes nothing, even with
  // different content.
  auto retried = v;
  retried.transaction->revocation_reason = 0;
  auto second = REQUIRE_OK(d.apply_store_a_notification(f.app.id, retried, t0 + 3000));
  CHECK(second.duplicate);
  CHECK(second.records_changed == 0);
  auto after = REQUIRE_OK(d.find_transaction(record.id)).value();
  CHECK(after.transaction.revocation_reason == 1);
  CHECK(after.updated_at == t0 + 2000);

  // The same id for another app is another notification.
  auto other = make_app(d, "other app");
  auto elsewhere = REQUIRE_OK(d.apply_store_a_notification(other.id, v, t0 + 3000));
  CHECK_FALSE(elsewhere.duplicate);
  CHECK(elsewhere.records_changed == 0); // its records are not the first app's
  CHECK(REQUIRE_OK(d.find_transaction(record.id)).value().updated_at == t0 + 2000);
}

TEST_CASE("a TEST notification is recorded only", "[notifications]") {
  database_fixture f;
  auto& d = *f.db;
  auto v = notification("TEST", model::environment::sandbox, std::nullopt, t0);
  auto first = REQUIRE_OK(d.apply_store_a_notification(f.app.id, v, t0));
  CHECK_FALSE(first.duplicate);
  CHECK(first.records_changed == 0);
  CHECK(first.events == 0);
  CHECK(REQUIRE_OK(d.apply_store_a_notification(f.app.id, v, t0)).duplicate);
  // An unknown app is an error value (the app must exist).
  CHECK_FALSE(d.apply_store_a_notification(model::make_uuid(), v, t0).ok());
}

TEST_CASE("a refund marks the matching transaction and a receipt's in-app purchase",
          "[notifications][webhooks]") {
  database_fixture f;
  auto& d = *f.db;
  auto other = make_app(d, "other app");
  auto endpoint = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(other)));

  // StoreKit 2 records: the refunded transaction, another of its subscription,
  // one of another subscription, and the other app's record of the same id.
  auto sandboxed
    = [&](const std::string& app_id, const std::string& id, const std::string& original) {
        auto r = signed_transaction_record(app_id, id, original);
        r.env = model::environment::sandbox;
        return REQUIRE_OK(d.save_transaction(r, t0)).record;
      };
  auto refunded = sandboxed(f.app.id, "1000000001", "1000000000");
  auto sibling = sandboxed(f.app.id, "1000000002", "1000000000");
  auto unrelated = sandboxed(f.app.id, "3000000001", "3000000000");
  auto foreign = sandboxed(other.id, "1000000001", "1000000000");
  // A unified receipt holding the same transaction among others (sandbox).
  auto receipt = full_receipt(f.app.id, std::string(64, 'e'), 3);
  receipt.fraud = model::fraud_reason::none;
  receipt.state = model::validation_state::validated;
  for (auto& p : receipt.in_app_purchases) {
    p.cancellation_date.reset();
    p.cancellation_reason.reset();
  }
  receipt = REQUIRE_OK(d.save_receipt(receipt, t0)).record;
  auto foreign_receipt = full_receipt(other.id, std::string(64, 'e'), 3);
  foreign_receipt.fraud = model::fraud_reason::none;
  for (auto& p : foreign_receipt.in_app_purchases) {
    p.cancellation_date.reset();
    p.cancellation_reason.reset();
  }
  foreign_receipt = REQUIRE_OK(d.save_receipt(foreign_receipt, t0)).record;

  auto v = refund(signed_as(refunded), t0 + 777, 1, t0 + 1000);
  auto applied = REQUIRE_OK(d.apply_store_a_notification(f.app.id, v, t0 + 2000));
  CHECK_FALSE(applied.duplicate);
  // The sibling only learns the notification's date (no visible change: no event).
  CHECK(applied.records_changed == 3);
  CHECK(applied.events == 2);

  auto t = REQUIRE_OK(d.find_transaction(refunded.id)).value();
  CHECK(t.transaction.revocation_date == t0 + 777);
  CHECK(t.transaction.revocation_reason == 1);
  CHECK_FALSE(t.is_fraud());
  auto s = REQUIRE_OK(d.find_transaction(sibling.id)).value();
  CHECK_FALSE(s.transaction.revocation_date.has_value());
  CHECK(s.transaction.notified_at == t0 + 1000);
  auto u = REQUIRE_OK(d.find_transaction(unrelated.id)).value();
  CHECK_FALSE(u.transaction.notified_at.has_value());
  CHECK(u.updated_at == t0);
  auto x = REQUIRE_OK(d.find_transaction(foreign.id)).value();
  CHECK_FALSE(x.transaction.revocation_date.has_value());

  auto r = REQUIRE_OK(d.find_receipt(receipt.id)).value();
  REQUIRE(r.in_app_purchases.size() == 3);
  CHECK(r.in_app_purchases[1].transaction_id == "1000000001");
  CHECK(r.in_app_purchases[1].cancellation_date == t0 + 777);
  CHECK(r.in_app_purchases[1].cancellation_reason == 1);
  CHECK_FALSE(r.in_app_purchases[0].cancellation_date.has_value());
  CHECK_FALSE(r.in_app_purchases[2].cancellation_reason.has_value());
  CHECK(r.state == model::validation_state::validated);
  CHECK_FALSE(r.is_fraud());
  CHECK(r.updated_at == t0 + 2000);
  CHECK(r.in_app_purchases[0].product_id == receipt.in_app_purchases[0].product_id);
  auto fr = REQUIRE_OK(d.find_receipt(foreign_receipt.id)).value();
  CHECK_FALSE(fr.in_app_purchases[1].cancellation_date.has_value());

  auto deliveries = REQUIRE_OK(d.list_deliveries(f.app.id, 100));
  REQUIRE(deliveries.size() == 2);
  CHECK(REQUIRE_OK(d.list_deliveries(other.id, 100)).empty());
  for (const auto& delivery : deliveries) {
    CHECK(delivery.endpoint_id == endpoint.id);
    auto body = boost::json::parse(delivery.body).as_object();
    const auto& changes = body.at("changes").as_array();
    CHECK(std::find(changes.begin(), changes.end(), boost::json::value("refunded"))
          != changes.end());
    if (delivery.record_id == refunded.id) {
      CHECK(delivery.type == model::event_type::transaction_updated);
      CHECK(body.at("previous_attributes").at("revocation_date").is_null());
      CHECK(body.at("new_attributes").at("revocation_date").at("ms") == t0 + 777);
    } else {
      CHECK(delivery.record_id == receipt.id);
      CHECK(delivery.type == model::event_type::receipt_updated);
    }
  }
}

TEST_CASE("a transaction's subscription fields round-trip", "[notifications][records]") {
  database_fixture f;
  auto& d = *f.db;
  for (bool set : {true, false}) {
    INFO("subscription fields set: " << set);
    auto r = signed_transaction_record(f.app.id, set ? "4000000001" : "4000000002", "4000000000");
    if (set) {
      r.transaction.subscription_status = "grace_period";
      r.transaction.subscription_expires_date = 253'402'300'799'999;
      r.transaction.auto_renew = false;
      r.transaction.auto_renew_product_id = "premium_monthly";
      r.transaction.notified_at = t0 - 1;
    }
    auto id = REQUIRE_OK(d.save_transaction(r, t0)).record.id;
    auto got = REQUIRE_OK(d.find_transaction(id)).value().transaction;
    CHECK(got.subscription_status == r.transaction.subscription_status);
    CHECK(got.subscription_expires_date == r.transaction.subscription_expires_date);
    CHECK(got.auto_renew == r.transaction.auto_renew);
    CHECK(got.auto_renew_product_id == r.transaction.auto_renew_product_id);
    CHECK(got.notified_at == r.transaction.notified_at);
  }
}

TEST_CASE("a transaction's App Store Server API 1.15–1.21 fields round-trip",
          "[notifications][records]") {
  database_fixture f;
  auto& d = *f.db;
  for (bool set : {true, false}) {
    INFO("fields set: " << set);
    auto r = signed_transaction_record(f.app.id, set ? "5000000001" : "5000000002", "5000000000");
    auto& t = r.transaction;
    if (set) {
      t.app_transaction_id = "704289572311513217";
      t.offer_period = "P1M";
      t.billing_plan_type = "MONTHLY";
      t.revocation_date = t0 - 10;
      t.revocation_type = "REFUND_PRORATED";
      t.revocation_percentage = 67932;
      t.commitment = model::commitment_info{3, 12, 253'402'300'799'999, 119880};
      t.renewal_app_account_token = "7e3fb20b-4cdb-47cc-936d-99d65f608138";
      t.notified_at = t0 - 1;
    }
    auto id = REQUIRE_OK(d.save_transaction(r, t0)).record.id;
    auto got = REQUIRE_OK(d.find_transaction(id)).value().transaction;
    CHECK(got.app_transaction_id == t.app_transaction_id);
    CHECK(got.offer_period == t.offer_period);
    CHECK(got.billing_plan_type == t.billing_plan_type);
    CHECK(got.revocation_type == t.revocation_type);
    CHECK(got.revocation_percentage == t.revocation_percentage);
    CHECK(got.commitment == t.commitment);
    CHECK(got.renewal_app_account_token == t.renewal_app_account_token);
  }
}

TEST_CASE("a renewal's subscription state is stored and outlives a re-upload",
          "[notifications][records]") {
  database_fixture f;
  auto& d = *f.db;
  auto upload = signed_transaction_record(f.app.id, "2000000001", "2000000000");
  auto record = REQUIRE_OK(d.save_transaction(upload, t0)).record;
  CHECK_FALSE(record.transaction.subscription_status.has_value());

  auto renewed = signed_as(record);
  renewed.transaction_id = "2000000002"; // the renewal's own transaction
  renewed.purchase_date = t0 + 30LL * 86'400'000;
  renewed.expires_date = t0 + 60LL * 86'400'000;
  auto v = notification("DID_RENEW", model::environment::production, renewed, t0 + 5000);
  v.n.status = 1;
  store_a::renewal_info renewal;
  renewal.original_transaction_id = "2000000000";
  renewal.auto_renew_status = 1;
  renewal.auto_renew_product_id = "premium_yearly";
  v.renewal = renewal;
  auto applied = REQUIRE_OK(d.apply_store_a_notification(f.app.id, v, t0 + 6000));
  CHECK(applied.records_changed == 1);

  auto stored = REQUIRE_OK(d.find_transaction(record.id)).value();
  CHECK(stored.transaction.subscription_status == "active");
  CHECK(stored.transaction.subscription_expires_date == t0 + 60LL * 86'400'000);
  CHECK(stored.transaction.auto_renew == true);
  CHECK(stored.transaction.auto_renew_product_id == "premium_yearly");
  CHECK(stored.transaction.notified_at == t0 + 5000);
  CHECK(stored.transaction.expires_date == record.transaction.expires_date); // its own period

  // The app uploads the same transaction again: its upload knows nothing of
  // notifications, and what they said stays.
  auto again = upload;
  again.echo.user_identifier = "alice";
  again.updated_at = t0 + 7000;
  auto merged = REQUIRE_OK(d.save_transaction(again, t0 + 7000)).record;
  CHECK(merged.transaction.subscription_status == "active");
  CHECK(merged.transaction.auto_renew_product_id == "premium_yearly");
  auto kept = REQUIRE_OK(d.find_transaction(record.id)).value();
  CHECK(kept.echo.user_identifier == "alice");
  CHECK(kept.transaction.subscription_status == "active");
  CHECK(kept.transaction.subscription_expires_date == t0 + 60LL * 86'400'000);
  CHECK(kept.transaction.auto_renew == true);
  CHECK(kept.transaction.notified_at == t0 + 5000);

  // An older notification arriving late changes nothing.
  auto late = notification("EXPIRED", model::environment::production, signed_as(record), t0 + 4000);
  CHECK(REQUIRE_OK(d.apply_store_a_notification(f.app.id, late, t0 + 8000)).records_changed == 0);
  CHECK(REQUIRE_OK(d.find_transaction(record.id)).value().transaction.subscription_status
        == "active");
}

// ---- Google Play Real-time developer notifications ---------------------------------

namespace {

namespace store_b = model::store_b;

// An RTDN as parse_rtdn_push gives it: a subscription cancellation of `token`.
store_b::rtdn rtdn_about(const std::string& token) {
  store_b::rtdn n;
  n.message_id = model::make_uuid();
  n.package_name = "com.example.game";
  n.event_time = t0 + 100;
  n.kind = store_b::rtdn_kind::subscription;
  n.notification_type = 3; // SUBSCRIPTION_CANCELED
  n.purchase_token = token;
  n.product_id = "gems_100";
  return n;
}

// A validated, active Play subscription of the app.
model::purchase_order_record active_subscription(const std::string& app_id,
                                                 const std::string& token) {
  auto r = full_purchase_order(app_id, token);
  r.fraud = model::fraud_reason::none;
  r.state = model::validation_state::validated;
  r.env = model::environment::production;
  r.purchase.is_test = false;
  r.purchase.auto_renewing = true;
  r.purchase.expiry_time = t0 + 30LL * 86'400'000;
  r.purchase.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
  return r;
}

} // namespace

TEST_CASE("an RTDN is applied once per messageId", "[notifications][rtdn]") {
  database_fixture f;
  auto& d = *f.db;
  auto stored
    = REQUIRE_OK(d.save_purchase_order(active_subscription(f.app.id, "tok-1"), t0)).record;
  auto n = rtdn_about("tok-1");
  auto fresh = stored; // the API says: cancelled, no longer renewing
  fresh.purchase.auto_renewing = false;
  fresh.purchase.subscription_state = "SUBSCRIPTION_STATE_CANCELED";

  auto first = REQUIRE_OK(d.apply_store_b_notification(f.app.id, n, fresh, t0 + 2000));
  CHECK_FALSE(first.duplicate);
  CHECK(first.records_changed == 1);
  CHECK(first.events == 0); // no endpoints
  auto got = REQUIRE_OK(d.find_purchase_order(stored.id)).value();
  CHECK(got.purchase.auto_renewing == false);
  CHECK(got.purchase.subscription_state == "SUBSCRIPTION_STATE_CANCELED");
  CHECK(got.updated_at == t0 + 2000);
  CHECK(got.state == model::validation_state::validated);

  // Pub/Sub redelivers: the same messageId changes nothing, whatever it carries.
  auto again = fresh;
  again.purchase.subscription_state = "SUBSCRIPTION_STATE_EXPIRED";
  auto second = REQUIRE_OK(d.apply_store_b_notification(f.app.id, n, again, t0 + 3000));
  CHECK(second.duplicate);
  CHECK(second.records_changed == 0);
  CHECK(second.events == 0);
  auto kept = REQUIRE_OK(d.find_purchase_order(stored.id)).value();
  CHECK(kept.purchase.subscription_state == "SUBSCRIPTION_STATE_CANCELED");
  CHECK(kept.updated_at == t0 + 2000);

  // Another message about the same purchase is applied.
  auto later = rtdn_about("tok-1");
  auto third = REQUIRE_OK(d.apply_store_b_notification(f.app.id, later, again, t0 + 4000));
  CHECK_FALSE(third.duplicate);
  CHECK(third.records_changed == 1);
  CHECK(REQUIRE_OK(d.find_purchase_order(stored.id)).value().purchase.subscription_state
        == "SUBSCRIPTION_STATE_EXPIRED");

  // The same messageId for another app is another notification; the first
  // app's record is not its to change.
  auto other = make_app(d, "other app");
  auto foreign = again;
  foreign.purchase.subscription_state = "SUBSCRIPTION_STATE_ON_HOLD";
  auto elsewhere = REQUIRE_OK(d.apply_store_b_notification(other.id, n, foreign, t0 + 5000));
  CHECK_FALSE(elsewhere.duplicate);
  CHECK(elsewhere.records_changed == 0);
  CHECK(REQUIRE_OK(d.find_purchase_order(stored.id)).value().purchase.subscription_state
        == "SUBSCRIPTION_STATE_EXPIRED");
}

TEST_CASE("an RTDN's updated purchase order is stored with its event", "[notifications][rtdn]") {
  database_fixture f;
  auto& d = *f.db;
  auto endpoint = REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));
  auto other = make_app(d, "other app");
  REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(other)));
  auto stored
    = REQUIRE_OK(d.save_purchase_order(active_subscription(f.app.id, "tok-2"), t0)).record;
  REQUIRE(REQUIRE_OK(d.list_deliveries(f.app.id, 100)).empty()); // the upload announced nothing

  // A voided purchase: the API answers refunded.
  auto n = rtdn_about("tok-2");
  n.kind = store_b::rtdn_kind::voided_purchase;
  n.notification_type = 0;
  n.order_id = stored.order_id;
  n.product_type = 1;
  n.refund_type = 1;
  auto fresh = stored;
  fresh.purchase.purchase_state = model::purchase_state::refunded;
  fresh.purchase.subscription_state = "SUBSCRIPTION_STATE_EXPIRED";
  fresh.store_detail = "Play 200: voided";
  auto applied = REQUIRE_OK(d.apply_store_b_notification(f.app.id, n, fresh, t0 + 2000));
  CHECK(applied.records_changed == 1);
  CHECK(applied.events == 1);

  auto got = REQUIRE_OK(d.find_purchase_order(stored.id)).value();
  CHECK(got.purchase.purchase_state == model::purchase_state::refunded);
  CHECK(got.store_detail == "Play 200: voided");
  CHECK(got.updated_at == t0 + 2000);
  CHECK_FALSE(got.is_fraud()); // a refund is not fraud
  // The upload's fields are not the notification's to change.
  CHECK(got.echo.user_identifier == stored.echo.user_identifier);
  CHECK(got.purchase_data == stored.purchase_data);

  auto deliveries = REQUIRE_OK(d.list_deliveries(f.app.id, 100));
  REQUIRE(deliveries.size() == 1);
  CHECK(REQUIRE_OK(d.list_deliveries(other.id, 100)).empty());
  const auto& delivery = deliveries.front();
  CHECK(delivery.endpoint_id == endpoint.id);
  CHECK(delivery.record_id == stored.id);
  CHECK(delivery.type == model::event_type::purchase_order_updated);
  auto body = boost::json::parse(delivery.body).as_object();
  const auto& changes = body.at("changes").as_array();
  CHECK(std::find(changes.begin(), changes.end(), boost::json::value("refunded")) != changes.end());
  CHECK(body.at("data").at("id") == boost::json::value(stored.id));

  // An API answer the record already holds: nothing changed, nothing written
  // (updated_at stays), no event. Another store_detail alone is no change.
  auto again = got;
  again.store_detail = "Play 200: still voided";
  auto same
    = REQUIRE_OK(d.apply_store_b_notification(f.app.id, rtdn_about("tok-2"), again, t0 + 3000));
  CHECK_FALSE(same.duplicate);
  CHECK(same.records_changed == 0);
  CHECK(same.events == 0);
  auto unchanged = REQUIRE_OK(d.find_purchase_order(stored.id)).value();
  CHECK(unchanged.updated_at == t0 + 2000);
  CHECK(unchanged.store_detail == "Play 200: voided");
  CHECK(REQUIRE_OK(d.list_deliveries(f.app.id, 100)).size() == 1);
}

// The RTDN handler reads the purchase order, asks the Play Developer API, then
// applies the answer: whatever was committed in between must survive.
TEST_CASE("an RTDN keeps what the acknowledgement and the voided purchases poll wrote after it "
          "read the record",
          "[notifications][rtdn][race]") {
  database_fixture f;
  auto& d = *f.db;
  auto subscription = active_subscription(f.app.id, "tok-race");
  subscription.purchase.acknowledged = false; // receiptd will acknowledge it (a job)
  subscription.acknowledgement = model::acknowledgement_state::pending;
  auto stored = REQUIRE_OK(d.save_purchase_order(subscription, t0)).record;
  auto job = REQUIRE_OK(d.claim_due_jobs("acknowledger", t0, t0 + 10'000, 1)).at(0);

  // The handler finds the record, and asks the Play Developer API.
  auto read = REQUIRE_OK(d.find_purchase_order_by_token(f.app.id, "tok-race")).value();

  // Meanwhile the acknowledgement is made …
  auto acknowledged = REQUIRE_OK(d.find_purchase_order(stored.id)).value();
  acknowledged.acknowledgement = model::acknowledgement_state::acknowledged;
  acknowledged.purchase.acknowledged = true;
  acknowledged.store_detail = "acknowledged: HTTP 204";
  acknowledged.updated_at = t0 + 10;
  REQUIRE(REQUIRE_OK(d.complete_job(job, acknowledged)));
  // … and Play's voided purchases list names the purchase (a chargeback).
  auto polls = REQUIRE_OK(d.claim_voided_polls("poller", t0 + 20, t0 + 10'020, 10));
  REQUIRE(polls.size() == 1);
  store_b::voided_purchase voided;
  voided.purchase_token = "tok-race";
  voided.order_id = stored.order_id.value_or("");
  voided.voided_time = t0 + 15;
  voided.voided_reason = 7;
  voided.voided_source = 2;
  REQUIRE(REQUIRE_OK(d.apply_voided_page("poller", polls[0].poll, {voided}, t0 + 30, {})) == 1);

  // The API's answer, as it was before both: cancelled, not renewing, unacknowledged.
  auto answered = read;
  answered.purchase.auto_renewing = false;
  answered.purchase.subscription_state = "SUBSCRIPTION_STATE_CANCELED";
  answered.purchase.purchase_state = model::purchase_state::cancelled;
  answered.store_detail = "Play 200";
  auto applied
    = REQUIRE_OK(d.apply_store_b_notification(f.app.id, rtdn_about("tok-race"), answered, t0 + 40));
  CHECK(applied.records_changed == 1);

  auto after = REQUIRE_OK(d.find_purchase_order(stored.id)).value();
  // The push's answer …
  CHECK(after.purchase.auto_renewing == false);
  CHECK(after.purchase.subscription_state == "SUBSCRIPTION_STATE_CANCELED");
  CHECK(after.store_detail == "Play 200");
  CHECK(after.updated_at == t0 + 40);
  // … the acknowledgement …
  CHECK(after.acknowledgement == model::acknowledgement_state::acknowledged);
  CHECK(after.purchase.acknowledged == true);
  // … and the voided list's refund, which the API's purchase state does not undo.
  CHECK(after.purchase.voided_time == t0 + 15);
  CHECK(after.purchase.voided_reason == 7);
  CHECK(after.purchase.voided_source == 2);
  CHECK(after.purchase.purchase_state == model::purchase_state::refunded);
  CHECK(after.state == model::validation_state::validated);
  CHECK_FALSE(after.is_fraud());
  CHECK(REQUIRE_OK(d.list_jobs()).empty());
}

// The other way round: an acknowledgement's job read the record when it was
// claimed, and an RTDN lands while Play is being asked to acknowledge.
TEST_CASE("an acknowledgement keeps what an RTDN wrote after its job was claimed",
          "[notifications][rtdn][race]") {
  database_fixture f;
  auto& d = *f.db;
  auto subscription = active_subscription(f.app.id, "tok-ack");
  subscription.purchase.acknowledged = false;
  subscription.acknowledgement = model::acknowledgement_state::pending;
  auto stored = REQUIRE_OK(d.save_purchase_order(subscription, t0)).record;
  auto job = REQUIRE_OK(d.claim_due_jobs("acknowledger", t0, t0 + 10'000, 1)).at(0);
  auto as_claimed = REQUIRE_OK(d.find_purchase_order(stored.id)).value();

  auto answered = REQUIRE_OK(d.find_purchase_order_by_token(f.app.id, "tok-ack")).value();
  answered.purchase.auto_renewing = false;
  answered.purchase.subscription_state = "SUBSCRIPTION_STATE_CANCELED";
  answered.store_detail = "Play 200";
  REQUIRE(
    REQUIRE_OK(d.apply_store_b_notification(f.app.id, rtdn_about("tok-ack"), answered, t0 + 10))
      .records_changed
    == 1);

  auto acknowledged = as_claimed;
  acknowledged.acknowledgement = model::acknowledgement_state::acknowledged;
  acknowledged.purchase.acknowledged = true;
  acknowledged.store_detail = "acknowledged: HTTP 204";
  acknowledged.updated_at = t0 + 20;
  REQUIRE(REQUIRE_OK(d.complete_job(job, acknowledged)));

  auto after = REQUIRE_OK(d.find_purchase_order(stored.id)).value();
  CHECK(after.acknowledgement == model::acknowledgement_state::acknowledged);
  CHECK(after.purchase.acknowledged == true);
  CHECK(after.store_detail == "acknowledged: HTTP 204");
  CHECK(after.updated_at == t0 + 20);
  CHECK(after.purchase.auto_renewing == false); // the RTDN's, not the claim's
  CHECK(after.purchase.subscription_state == "SUBSCRIPTION_STATE_CANCELED");
  CHECK(REQUIRE_OK(d.list_jobs()).empty());
}

TEST_CASE("a test RTDN and one about an unknown purchase are recorded only",
          "[notifications][rtdn]") {
  database_fixture f;
  auto& d = *f.db;
  REQUIRE_OK(d.add_webhook_endpoint(endpoint_of(f.app)));

  store_b::rtdn test;
  test.message_id = "136969346945";
  test.package_name = "com.example.game";
  test.kind = store_b::rtdn_kind::test;
  auto first = REQUIRE_OK(d.apply_store_b_notification(f.app.id, test, std::nullopt, t0));
  CHECK_FALSE(first.duplicate);
  CHECK(first.records_changed == 0);
  CHECK(first.events == 0);
  CHECK(REQUIRE_OK(d.apply_store_b_notification(f.app.id, test, std::nullopt, t0)).duplicate);

  // No stored record of this token (updated = nullopt): recorded, so a
  // redelivery is a duplicate.
  auto unknown = rtdn_about("never-uploaded");
  CHECK_FALSE(REQUIRE_OK(d.find_purchase_order_by_token(f.app.id, "never-uploaded")).has_value());
  auto recorded = REQUIRE_OK(d.apply_store_b_notification(f.app.id, unknown, std::nullopt, t0));
  CHECK_FALSE(recorded.duplicate);
  CHECK(recorded.records_changed == 0);
  CHECK(REQUIRE_OK(d.apply_store_b_notification(f.app.id, unknown, std::nullopt, t0)).duplicate);

  // A record that vanished since it was read changes nothing either.
  auto ghost = active_subscription(f.app.id, "ghost");
  ghost.id = model::make_uuid();
  auto vanished
    = REQUIRE_OK(d.apply_store_b_notification(f.app.id, rtdn_about("ghost"), ghost, t0));
  CHECK_FALSE(vanished.duplicate);
  CHECK(vanished.records_changed == 0);
  CHECK_FALSE(REQUIRE_OK(d.find_purchase_order(ghost.id)).has_value());
  CHECK(REQUIRE_OK(d.list_deliveries(f.app.id, 100)).empty());

  // An unknown app is an error value (the app must exist).
  CHECK_FALSE(d.apply_store_b_notification(model::make_uuid(), test, std::nullopt, t0).ok());
}

TEST_CASE("a purchase order is found by its app and purchase token", "[notifications][rtdn]") {
  database_fixture f;
  auto& d = *f.db;
  auto other = make_app(d, "other app");
  auto mine = REQUIRE_OK(d.save_purchase_order(active_subscription(f.app.id, "tok-3"), t0)).record;
  auto theirs
    = REQUIRE_OK(d.save_purchase_order(minimal_purchase_order(other.id, "tok-3"), t0)).record;

  auto found = REQUIRE_OK(d.find_purchase_order_by_token(f.app.id, "tok-3"));
  REQUIRE(found.has_value());
  check_same(*found, mine);
  auto found_other = REQUIRE_OK(d.find_purchase_order_by_token(other.id, "tok-3"));
  REQUIRE(found_other.has_value());
  CHECK(found_other->id == theirs.id);
  CHECK_FALSE(REQUIRE_OK(d.find_purchase_order_by_token(f.app.id, "tok-4")).has_value());
  CHECK_FALSE(REQUIRE_OK(d.find_purchase_order_by_token(f.app.id, "")).has_value());
  CHECK_FALSE(REQUIRE_OK(d.find_purchase_order_by_token(model::make_uuid(), "tok-3")).has_value());
}

TEST_CASE("an app's rtdn_token round-trips and bumps the auth revision", "[apps][rtdn]") {
  database_fixture f;
  auto& d = *f.db;
  CHECK(f.app.rtdn_token.empty()); // none until receiptctl makes one
  CHECK(REQUIRE_OK(d.find_app(f.app.id)).value().rtdn_token.empty());

  const auto before = REQUIRE_OK(d.auth_revision());
  auto a = f.app;
  a.rtdn_token = std::string(64, 'a');
  REQUIRE(REQUIRE_OK(d.update_app(a)));
  CHECK(REQUIRE_OK(d.auth_revision()) > before);
  CHECK(REQUIRE_OK(d.find_app(f.app.id)).value().rtdn_token == std::string(64, 'a'));
  CHECK(REQUIRE_OK(d.find_app(f.app.name)).value().rtdn_token == std::string(64, 'a'));
  auto listed = REQUIRE_OK(d.list_apps());
  REQUIRE(listed.size() == 1);
  CHECK(listed.front().rtdn_token == std::string(64, 'a'));

  // A rotation replaces it; other columns are unchanged.
  a.rtdn_token = std::string(64, 'b');
  REQUIRE(REQUIRE_OK(d.update_app(a)));
  auto got = REQUIRE_OK(d.find_app(f.app.id)).value();
  CHECK(got.rtdn_token == std::string(64, 'b'));
  CHECK(got.name == f.app.name);
  CHECK(got.package_name == f.app.package_name);

  // create_app writes it too.
  model::app c;
  c.name = "created with a token";
  c.rtdn_token = "c0ffee";
  auto created = REQUIRE_OK(d.create_app(c));
  CHECK(REQUIRE_OK(d.find_app(created.id)).value().rtdn_token == "c0ffee");
}

} // namespace receiptd::test
