// Scheduled refresh of Play subscriptions: final states, and how a
// refresh's answer lands on a validated purchase order without downgrading it.
#include <catch2/catch.hpp>

#include <string>

#include "model/store_b/play_api.hpp"
#include "model/store_b/refresh.hpp"

using namespace receiptd::model;
using namespace receiptd::model::store_b;

namespace {

constexpr unix_ms expired_at = 1700000000000; // 2023-11-14 22:13:20 UTC

// A validated subscription whose expiry has passed while it still says active:
// what the sweep gives a refresh job.
purchase_order_record stale_subscription() {
  purchase_order_record r;
  r.id = "0b7c3f2e-4a5d-4c1e-9a8b-1c2d3e4f5a6b";
  r.app_id = "app";
  r.package_name = "com.example.app";
  r.purchase_token = "tok";
  r.env = environment::production;
  r.purchase.product_id = "pro.monthly";
  r.purchase.kind = product_kind::subscription;
  r.purchase.purchase_state = purchase_state::purchased;
  r.purchase.purchase_time = expired_at - 30LL * 86400000;
  r.purchase.expiry_time = expired_at;
  r.purchase.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
  r.purchase.auto_renewing = true;
  r.purchase.acknowledged = true;
  r.state = validation_state::validated;
  r.acknowledgement = acknowledgement_state::acknowledged;
  r.store_detail = "HTTP 200";
  return r;
}

store_verdict verdict(store_outcome outcome, std::string detail,
                      std::optional<environment> env = std::nullopt) {
  store_verdict v;
  v.outcome = outcome;
  v.detail = std::move(detail);
  v.env = env;
  return v;
}

} // namespace

TEST_CASE("final subscription states are never refreshed", "[refresh]") {
  CHECK(is_final_subscription_state("SUBSCRIPTION_STATE_EXPIRED"));
  CHECK(is_final_subscription_state("SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"));
  for (auto s : {"SUBSCRIPTION_STATE_ACTIVE", "SUBSCRIPTION_STATE_CANCELED",
                 "SUBSCRIPTION_STATE_IN_GRACE_PERIOD", "SUBSCRIPTION_STATE_ON_HOLD",
                 "SUBSCRIPTION_STATE_PAUSED", "SUBSCRIPTION_STATE_PENDING", "",
                 "subscription_state_expired", "SUBSCRIPTION_STATE_EXPIRED "}) {
    INFO(s);
    CHECK_FALSE(is_final_subscription_state(s));
  }
}

TEST_CASE("a refresh the store confirms takes the API's purchase", "[refresh]") {
  auto r = stale_subscription();
  auto answered = r.purchase;
  answered.expiry_time = expired_at + 30LL * 86400000;
  answered.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
  CHECK(apply_refresh(r, verdict(store_outcome::confirmed, "HTTP 200"), answered));
  CHECK(r.purchase.expiry_time == expired_at + 30LL * 86400000);
  CHECK(r.state == validation_state::validated);
  CHECK(r.env == environment::production); // the verdict did not say
  CHECK(r.store_detail == "HTTP 200");
  CHECK(purpose_of(r) == job_purpose::refresh);
  CHECK_FALSE(needs_job(r));

  // The verdict's environment wins when it tells.
  answered.subscription_state = "SUBSCRIPTION_STATE_EXPIRED";
  answered.purchase_state = purchase_state::cancelled;
  answered.auto_renewing = false;
  CHECK(apply_refresh(r, verdict(store_outcome::confirmed, "HTTP 200 (test)", environment::sandbox),
                      answered));
  CHECK(r.env == environment::sandbox);
  CHECK(r.purchase.subscription_state == std::string("SUBSCRIPTION_STATE_EXPIRED"));
  CHECK(r.purchase.purchase_state == purchase_state::cancelled);
  CHECK(r.purchase.auto_renewing == false);
  CHECK(r.store_detail == "HTTP 200 (test)");
  CHECK(r.state == validation_state::validated);
  CHECK(r.acknowledgement == acknowledgement_state::acknowledged);
}

TEST_CASE("a refreshed voided subscription stays voided", "[refresh][voided]") {
  auto r = stale_subscription();
  r.purchase.purchase_state = purchase_state::refunded;
  r.purchase.voided_time = expired_at - 86400000;
  r.purchase.voided_reason = 7;
  r.purchase.voided_source = 2;

  // The answer as the caller builds it: the record's purchase, enriched.
  auto answered = r.purchase;
  auto v = classify_purchase_response(
    purchase_api::subscriptions_v2, 200,
    R"({"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[{"productId":"pro.monthly",)"
    R"("expiryTime":"2023-12-14T22:13:20Z"}]})",
    "", answered);
  REQUIRE(v.outcome == store_outcome::confirmed);
  CHECK(apply_refresh(r, v, answered));
  CHECK(r.purchase.purchase_state == purchase_state::refunded);
  CHECK(r.purchase.voided_time == expired_at - 86400000);
  CHECK(r.purchase.voided_reason == 7);
  CHECK(r.purchase.expiry_time == 1702592000000);

  // Even an answer built without the voided fields keeps them.
  play_purchase bare;
  bare.product_id = "pro.monthly";
  bare.kind = product_kind::subscription;
  bare.purchase_state = purchase_state::purchased;
  CHECK(apply_refresh(r, verdict(store_outcome::confirmed, "HTTP 200"), bare));
  CHECK(r.purchase.purchase_state == purchase_state::refunded);
  CHECK(r.purchase.voided_source == 2);

  // Play forgetting the token: expired, still refunded.
  CHECK(apply_refresh(r, verdict(store_outcome::rejected, "HTTP 404"), r.purchase));
  CHECK(r.purchase.subscription_state == std::string("SUBSCRIPTION_STATE_EXPIRED"));
  CHECK(r.purchase.purchase_state == purchase_state::refunded);
}

TEST_CASE("a token Play no longer knows expires the subscription, never fraud", "[refresh]") {
  auto r = stale_subscription();
  auto answered = r.purchase;
  auto v = classify_purchase_response(purchase_api::subscriptions_v2, 404, "", "", answered);
  REQUIRE(v.outcome == store_outcome::rejected);
  CHECK(apply_refresh(r, v, answered));
  CHECK(r.purchase.subscription_state == std::string("SUBSCRIPTION_STATE_EXPIRED"));
  CHECK(r.purchase.purchase_state == purchase_state::cancelled);
  CHECK(r.state == validation_state::validated);
  CHECK(r.fraud == fraud_reason::none);
  CHECK_FALSE(r.is_fraud());
  CHECK(r.store_detail == "HTTP 404");
  CHECK(r.env == environment::production);
  CHECK(r.purchase.expiry_time == expired_at);
  // Expired is final: the sweep leaves it alone from now on.
  CHECK(is_final_subscription_state(*r.purchase.subscription_state));
}

TEST_CASE("an unreachable store changes nothing but the detail", "[refresh]") {
  auto r = stale_subscription();
  auto answered = r.purchase;
  auto v = classify_purchase_response(purchase_api::subscriptions_v2, 0, "", "timeout", answered);
  REQUIRE(v.outcome == store_outcome::unreachable);
  answered.subscription_state = "SUBSCRIPTION_STATE_EXPIRED"; // must not be taken
  CHECK_FALSE(apply_refresh(r, v, answered));
  auto expected = stale_subscription();
  CHECK(r.store_detail == "store unreachable: timeout");
  CHECK(r.purchase.subscription_state == expected.purchase.subscription_state);
  CHECK(r.purchase.purchase_state == expected.purchase.purchase_state);
  CHECK(r.purchase.expiry_time == expected.purchase.expiry_time);
  CHECK(r.state == validation_state::validated);
  CHECK(r.env == expected.env);

  CHECK_FALSE(apply_refresh(r, verdict(store_outcome::unreachable, "HTTP 503"), answered));
  CHECK(r.store_detail == "HTTP 503");
  CHECK(r.state == validation_state::validated);
}
