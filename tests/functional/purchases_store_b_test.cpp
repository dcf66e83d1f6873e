// A Google Play purchase's life as the In-App Purchase resource and the customer
// answer tell it, through the real binary on the database under test: real-time
// developer notifications pushed over HTTP, each answered by what the emulator's
// Play Developer API says (androidpublisher#subscriptionPurchaseV2 bodies in
// Google's shape), time passing, the voided purchases list, a token chain
// (linkedPurchaseToken), a legacy upload, and a push too old to apply.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

#include "harness.hpp"
#include "model/encoding.hpp"
#include "model/timestamp.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";
constexpr std::int64_t second = 1000;
constexpr std::int64_t day = 86400000;

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// RFC 3339 with milliseconds, as the Play Developer API writes times
// ("2023-09-26T15:11:54.434Z").
std::string rfc3339(std::int64_t ms) {
  auto text = model::format_utc(ms).substr(0, 19); // "YYYY-MM-DD hh:mm:ss"
  text[10] = 'T';
  auto frac = std::to_string(1000 + ms % 1000).substr(1);
  return text + "." + frac + "Z";
}

// An app with the test licence key, a service account, its push URL (with its
// ?token=) and entitlements: premium for gold, pro for platinum and lifetime.
struct play_app {
  test_app app;
  std::string package;
  std::string push_path;
};

play_app fresh_app(suite& s, const std::string& name) {
  play_app a;
  a.package = unique_package(name);
  a.app = create_store_b_app(s, a.package, test_licence_key());
  auto base = s.service.url("");
  auto url = s.ctl({"app", "rtdn-url", a.app.id, "--base-url=" + base});
  INFO(url.out << url.err);
  REQUIRE(url.code == 0);
  a.push_path = str(url.json.at("url")).substr(base.size());
  for (const auto& [entitlement, offering, pattern] :
       {std::tuple{"premium", "monthly", "^gold$"}, std::tuple{"pro", "monthly", "^platinum$"},
        std::tuple{"pro", "lifetime", "^lifetime$"}}) {
    auto r = s.ctl({"entitlement", "set", a.app.name, entitlement,
                    std::string("--offering=") + offering, std::string("--pattern=") + pattern});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
  }
  return a;
}

// What subscriptionsv2.get answers about a token.
struct play_subscription {
  std::string state = "SUBSCRIPTION_STATE_ACTIVE";
  std::string product = "gold";
  std::int64_t start = 0;
  std::int64_t expiry = 0; // the line item's expiryTime
  bool auto_renew = true;
  std::optional<std::string> linked; // linkedPurchaseToken
  json::object context;              // canceledStateContext, pausedStateContext, …
};

// Active: bought at `start`, paid until `expiry`, renewing.
play_subscription running(std::int64_t start, std::int64_t expiry) {
  play_subscription p;
  p.start = start;
  p.expiry = expiry;
  return p;
}

void play_answers(suite& s, const play_app& a, const std::string& token,
                  const play_subscription& p) {
  json::object line{{"productId", p.product},
                    {"expiryTime", rfc3339(p.expiry)},
                    {"autoRenewingPlan", json::object{{"autoRenewEnabled", p.auto_renew}}},
                    {"offerDetails", json::object{{"basePlanId", "p1m"}}}};
  json::object body{{"kind", "androidpublisher#subscriptionPurchaseV2"},
                    {"startTime", rfc3339(p.start)},
                    {"regionCode", "US"},
                    {"subscriptionState", p.state},
                    {"latestOrderId", "GPA.3301-2345-6789-01234"},
                    {"acknowledgementState", "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"},
                    {"lineItems", json::array{line}}};
  if (p.linked)
    body["linkedPurchaseToken"] = *p.linked;
  for (const auto& [k, v] : p.context)
    body[k] = v;
  s.emulator.control("POST", "/control/store_b/purchases",
                     json::object{{"package_name", a.package},
                                  {"product_id", p.product},
                                  {"token", token},
                                  {"kind", "subscription"},
                                  {"body", body}});
}

// A one-time product as products.get answers it (purchaseState 0 purchased,
// 1 cancelled, 2 pending).
void play_product(suite& s, const play_app& a, const std::string& token, const std::string& product,
                  int purchase_state) {
  s.emulator.control("POST", "/control/store_b/purchases",
                     json::object{{"package_name", a.package},
                                  {"product_id", product},
                                  {"token", token},
                                  {"kind", "product"},
                                  {"purchase_state", purchase_state},
                                  {"acknowledged", purchase_state == 0}});
}

// Signed purchase data as the device has it, bought at `bought`, uploaded for `user`.
http_response upload(suite& s, const play_app& a, const std::string& token,
                     const std::string& product, std::int64_t bought, const std::string& user,
                     bool subscription = true) {
  auto data = purchase_data_json(a.package, product, token, subscription);
  const std::string fixed_time = "\"purchaseTime\":1700000000000";
  auto at = data.find(fixed_time);
  REQUIRE(at != std::string::npos);
  data.replace(at, fixed_time.size(), "\"purchaseTime\":" + std::to_string(bought));
  return s.service.post(
    orders, store_b_body(data, sign_purchase(data), "\"user_identifier\":\"" + user + "\""),
    a.app.token);
}

// The purchase an accepted upload's answer embeds: its id.
std::string uploaded(suite& s, const play_app& a, const std::string& token,
                     const std::string& product, std::int64_t bought, const std::string& user,
                     bool subscription = true) {
  auto r = upload(s, a, token, product, bought, user, subscription);
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return str(r.json().at("in_app_purchase").at("id"));
}

std::string message_id() {
  auto hex = model::hex_encode(model::random_bytes(6));
  return std::to_string(std::stoull(hex, nullptr, 16));
}

// A Pub/Sub push of a DeveloperNotification carrying `notification`, sent at `event_time`.
std::string push_body(const std::string& package, const json::object& notification,
                      std::int64_t event_time, const std::string& id) {
  json::object data{
    {"version", "1.0"}, {"packageName", package}, {"eventTimeMillis", std::to_string(event_time)}};
  for (const auto& [k, v] : notification)
    data[k] = v;
  json::object message{{"data", model::base64_encode(json::serialize(data))},
                       {"messageId", id},
                       {"publishTime", rfc3339(event_time)}};
  return json::serialize(
    json::object{{"message", message}, {"subscription", "projects/p/subscriptions/play-rtdn"}});
}

// SubscriptionNotification.notificationType (Play's RTDN reference).
enum rtdn_type : int {
  subscription_recovered = 1,
  subscription_renewed = 2,
  subscription_canceled = 3,
  subscription_on_hold = 5,
  subscription_in_grace_period = 6,
  subscription_paused = 10,
  subscription_revoked = 12,
  subscription_expired = 13,
};

std::string subscription_push(const play_app& a, const std::string& token, int type,
                              std::int64_t event_time = now_ms(),
                              const std::string& product = "gold",
                              const std::string& id = message_id()) {
  return push_body(a.package,
                   json::object{{"subscriptionNotification",
                                 json::object{{"version", "1.0"},
                                              {"notificationType", type},
                                              {"purchaseToken", token},
                                              {"subscriptionId", product}}}},
                   event_time, id);
}

// Pushes to the app's URL; the answer's body.
json::value push(suite& s, const std::string& path, const std::string& body) {
  auto r = s.service.post(path, body, "");
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

// Play's API says `now` of the token from now on, and a push of `type` about it arrives.
json::value notify(suite& s, const play_app& a, const std::string& token,
                   const play_subscription& now, int type) {
  play_answers(s, a, token, now);
  auto answer = push(s, a.push_path, subscription_push(a, token, type));
  CHECK(str(answer.at("status")) == "applied");
  return answer;
}

json::value purchase(suite& s, const play_app& a, const std::string& id) {
  auto r = s.service.get("/client/in_app_purchases/" + id, a.app.token);
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return r.json().at("in_app_purchase");
}

json::value customer(suite& s, const play_app& a, const std::string& user) {
  auto r = s.service.get("/client/customers/" + user, a.app.token);
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return r.json().at("customer");
}

json::value entitlement(suite& s, const play_app& a, const std::string& user,
                        const std::string& name) {
  return customer(s, a, user).at("entitlements").at(name);
}

// The customer.entitlements_changed events the endpoint received, each as its
// set of active entitlements after the change, once at least `count` arrived.
std::vector<std::vector<std::string>> entitlement_changes(suite& s, const hook_endpoint& e,
                                                          std::size_t count) {
  std::vector<std::vector<std::string>> out;
  eventually([&] {
    out.clear();
    for (const auto& d : received(s, e)) {
      auto body = json::parse(str(d.at("body")));
      const auto* name = body.as_object().if_contains("name");
      if (!name || str(*name) != "customer.entitlements_changed")
        continue;
      std::vector<std::string> active;
      for (const auto& n : body.at("new_attributes").at("active_entitlements").as_array())
        active.emplace_back(n.as_string());
      out.push_back(std::move(active));
    }
    return out.size() >= count;
  });
  return out;
}

using names = std::vector<std::string>;

} // namespace

TEST_CASE("a Play subscription paused and resumed, on hold and recovered, in its grace period",
          "[purchases][store_b][rtdn][lifecycle]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "play-life");
  auto hook = add_endpoint(s, a.app, "customer");
  const auto user = unique("user");
  const auto token = unique("tok");
  const auto now = now_ms();
  auto sub = running(now - 20 * day, now + 10 * day);
  play_answers(s, a, token, sub);
  const auto id = uploaded(s, a, token, "gold", sub.start, user);
  auto p = purchase(s, a, id);
  CHECK(p.at("is_active") == true);
  CHECK(str(p.at("type")) == "subscription");
  CHECK(p.at("current_period_end_at").at("ms") == sub.expiry);
  CHECK(entitlement(s, a, user, "premium").at("is_active") == true);

  // Paused at the end of the paid period (Play: SUBSCRIPTION_PAUSED, state
  // PAUSED until its autoResumeTime): no access meanwhile.
  sub.state = "SUBSCRIPTION_STATE_PAUSED";
  sub.expiry = now - second;
  sub.context = {{"pausedStateContext", json::object{{"autoResumeTime", rfc3339(now + 20 * day)}}}};
  CHECK(notify(s, a, token, sub, subscription_paused).at("records_changed") == 1);
  p = purchase(s, a, id);
  CHECK(p.at("is_paused") == true);
  CHECK(p.at("is_active") == false);
  CHECK(entitlement(s, a, user, "premium").at("is_active") == false);

  // Resumed: a new period (SUBSCRIPTION_RENEWED).
  sub.state = "SUBSCRIPTION_STATE_ACTIVE";
  sub.expiry = now + 30 * day;
  sub.context = {};
  notify(s, a, token, sub, subscription_renewed);
  p = purchase(s, a, id);
  CHECK(p.at("is_paused") == false);
  CHECK(p.at("is_active") == true);
  CHECK(p.at("current_period_end_at").at("ms") == sub.expiry);
  CHECK(entitlement(s, a, user, "premium").at("is_active") == true);

  // A renewal payment failed, no grace period: account hold, no access.
  sub.state = "SUBSCRIPTION_STATE_ON_HOLD";
  sub.expiry = now - second;
  notify(s, a, token, sub, subscription_on_hold);
  p = purchase(s, a, id);
  CHECK(p.at("is_on_hold") == true);
  CHECK(p.at("in_billing_retry") == true);
  CHECK(p.at("is_active") == false);
  auto premium = entitlement(s, a, user, "premium");
  CHECK(premium.at("is_active") == false);

  // Recovered: paid, a new period.
  sub.state = "SUBSCRIPTION_STATE_ACTIVE";
  sub.expiry = now + 30 * day;
  notify(s, a, token, sub, subscription_recovered);
  p = purchase(s, a, id);
  CHECK(p.at("is_on_hold") == false);
  CHECK(p.at("in_billing_retry") == false);
  CHECK(p.at("is_active") == true);
  CHECK(entitlement(s, a, user, "premium").at("is_active") == true);

  // The next renewal payment fails with a grace period: access goes on while
  // Play retries; the line item's expiryTime is extended to the grace period's end.
  sub.state = "SUBSCRIPTION_STATE_IN_GRACE_PERIOD";
  sub.expiry = now + 37 * day;
  notify(s, a, token, sub, subscription_in_grace_period);
  p = purchase(s, a, id);
  CHECK(p.at("in_grace_period") == true);
  CHECK(p.at("in_billing_retry") == true);
  CHECK(p.at("is_active") == true);
  REQUIRE(p.at("grace_period_end_at").is_object());
  CHECK(p.at("grace_period_end_at").at("ms") == sub.expiry);
  premium = entitlement(s, a, user, "premium");
  CHECK(premium.at("is_active") == true);
  CHECK(premium.at("in_billing_retry") == true);
  CHECK(premium.at("grace_period_end_at") == p.at("grace_period_end_at"));

  // Paid again: out of the grace period.
  sub.state = "SUBSCRIPTION_STATE_ACTIVE";
  sub.expiry = now + 60 * day;
  notify(s, a, token, sub, subscription_recovered);
  p = purchase(s, a, id);
  CHECK(p.at("in_grace_period") == false);
  CHECK(p.at("grace_period_end_at").is_null());
  CHECK(p.at("is_active") == true);

  // The app's backend heard each change of what the customer may unlock.
  auto changes = entitlement_changes(s, hook, 5);
  CHECK(changes == std::vector<names>{{"premium"}, {}, {"premium"}, {}, {"premium"}});
}

TEST_CASE("a cancelled Play subscription grants until its period ends, then expires by time alone",
          "[purchases][store_b][rtdn][lifecycle]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "play-cancel");
  auto hook = add_endpoint(s, a.app, "customer");
  const auto user = unique("user");
  const auto token = unique("tok");
  const auto now = now_ms();
  // The period ends in a few seconds: long enough to see it still granted.
  auto sub = running(now - 30 * day, now + 10 * second);
  play_answers(s, a, token, sub);
  const auto id = uploaded(s, a, token, "gold", sub.start, user);

  // Cancelled by the user (SUBSCRIPTION_CANCELED): no renewal, access until expiryTime.
  sub.state = "SUBSCRIPTION_STATE_CANCELED";
  sub.auto_renew = false;
  sub.context
    = {{"canceledStateContext",
        json::object{{"userInitiatedCancellation",
                      json::object{{"cancelTime", rfc3339(now)},
                                   {"cancelSurveyResult",
                                    json::object{{"reason", "CANCEL_SURVEY_REASON_OTHERS"}}}}}}}};
  notify(s, a, token, sub, subscription_canceled);
  auto p = purchase(s, a, id);
  CHECK(p.at("is_auto_renewing") == false);
  REQUIRE(p.at("canceled_at").is_object());
  CHECK(p.at("canceled_at").at("ms").to_number<std::int64_t>() >= now - second);
  CHECK(p.at("current_period_end_at").at("ms") == sub.expiry);
  auto answer = customer(s, a, user);
  const auto asked = answer.at("requested_at").at("ms").to_number<std::int64_t>();
  const auto& premium = answer.at("entitlements").at("premium");
  // Granted while its period runs (the answer says when it was computed).
  CHECK(premium.at("is_active") == (asked < sub.expiry));
  CHECK(premium.at("will_renew") == false);
  CHECK(premium.at("expires_at").at("ms") == sub.expiry);

  // No message from Play: the period's end alone ends it, in every answer and
  // as an event from the purchase's timer.
  REQUIRE(eventually([&] { return purchase(s, a, id).at("is_active") == false; },
                     std::chrono::milliseconds(sub.expiry - now_ms()) + std::chrono::seconds(20)));
  CHECK(now_ms() >= sub.expiry);
  CHECK(entitlement(s, a, user, "premium").at("is_active") == false);
  CHECK(entitlement_changes(s, hook, 2) == std::vector<names>{{"premium"}, {}});

  // Play's word comes later (SUBSCRIPTION_EXPIRED): still inactive, still cancelled.
  sub.state = "SUBSCRIPTION_STATE_EXPIRED";
  sub.context = {};
  notify(s, a, token, sub, subscription_expired);
  p = purchase(s, a, id);
  CHECK(p.at("is_active") == false);
  CHECK(p.at("canceled_at").is_object());
  auto after = customer(s, a, user);
  CHECK(after.at("entitlements").at("premium").at("is_active") == false);
  CHECK(str(after.at("entitlements").at("premium").at("in_app_purchase_id")) == id);
}

TEST_CASE("a revoked Play subscription ends at once; Play's voided list marks it revoked",
          "[purchases][store_b][rtdn][voided]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "play-revoked");
  const auto user = unique("user");
  const auto token = unique("tok");
  const auto now = now_ms();
  auto sub = running(now - 5 * day, now + 25 * day);
  play_answers(s, a, token, sub);
  const auto id = uploaded(s, a, token, "gold", sub.start, user);
  REQUIRE(entitlement(s, a, user, "premium").at("is_active") == true);

  // Refunded and revoked from the Play Console (SUBSCRIPTION_REVOKED): Play
  // ends the subscription now.
  sub.state = "SUBSCRIPTION_STATE_EXPIRED";
  sub.auto_renew = false;
  sub.expiry = now - second;
  sub.context
    = {{"canceledStateContext", json::object{{"developerInitiatedCancellation", json::object{}}}}};
  notify(s, a, token, sub, subscription_revoked);
  auto p = purchase(s, a, id);
  CHECK(p.at("is_active") == false);
  CHECK(entitlement(s, a, user, "premium").at("is_active") == false);

  // The voided purchases list says why: a refund (voidedReason 1, remorse),
  // read by a receiptd with the poll on, on the same database.
  const auto voided_at = now - 500;
  s.emulator.control("POST", "/control/store_b/voided",
                     json::object{{"package_name", a.package},
                                  {"token", token},
                                  {"kind", "subscription"},
                                  {"voided_time_ms", voided_at},
                                  {"voided_source", 1},
                                  {"voided_reason", 1}});
  auto args = standard_service_args(s);
  std::erase(args, std::string("--store-b.voided-purchases=false"));
  args.push_back("--store-b.voided-purchases-interval=1s");
  service_process polling(make_temp_dir("receiptd-voided"), s.db_url, args);
  polling.start();
  REQUIRE(eventually([&] { return purchase(s, a, id).at("revoked_at").is_object(); }));
  p = purchase(s, a, id);
  CHECK(p.at("revoked_at").at("ms") == voided_at);
  CHECK(p.at("revocation_reason") == 1);
  CHECK(p.at("is_active") == false);
  CHECK(polling.stop() == 0);

  // A voided one-time product: the push (productType 2) makes receiptd ask
  // products.get, which says cancelled.
  const auto item = unique("tok");
  play_product(s, a, item, "lifetime", 0);
  const auto item_id = uploaded(s, a, item, "lifetime", now - day, user, false);
  REQUIRE(entitlement(s, a, user, "pro").at("is_active") == true);
  play_product(s, a, item, "lifetime", 1);
  auto answer = push(s, a.push_path,
                     push_body(a.package,
                               json::object{{"voidedPurchaseNotification",
                                             json::object{{"purchaseToken", item},
                                                          {"orderId", "GPA.1234-5678-9012-34567"},
                                                          {"productType", 2},
                                                          {"refundType", 1}}}},
                               now_ms(), message_id()));
  CHECK(answer.at("records_changed") == 1);
  auto voided = purchase(s, a, item_id);
  CHECK(voided.at("revoked_at").is_object());
  CHECK(voided.at("is_active") == false);
  CHECK(entitlement(s, a, user, "pro").at("is_active") == false);
}

TEST_CASE("a pending Play purchase grants nothing until Play says it is purchased",
          "[purchases][store_b][rtdn][pending]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "play-pending");
  const auto user = unique("user");
  const auto token = unique("tok");
  play_product(s, a, token, "lifetime", 2); // paid in cash at a shop, later
  auto r = upload(s, a, token, "lifetime", now_ms() - 60000, user, false);
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(str(r.json().at("in_app_purchase").at("purchase_state")) == "pending");
  const auto id = str(r.json().at("in_app_purchase").at("id"));
  auto p = purchase(s, a, id);
  CHECK(p.at("is_pending") == true);
  CHECK(p.at("is_active") == false);
  CHECK(entitlement(s, a, user, "pro").at("is_active") == false);

  // Paid: ONE_TIME_PRODUCT_PURCHASED, products.get says purchased.
  play_product(s, a, token, "lifetime", 0);
  auto answer = push(s, a.push_path,
                     push_body(a.package,
                               json::object{{"oneTimeProductNotification",
                                             json::object{{"version", "1.0"},
                                                          {"notificationType", 1},
                                                          {"purchaseToken", token},
                                                          {"sku", "lifetime"}}}},
                               now_ms(), message_id()));
  CHECK(str(answer.at("status")) == "applied");
  CHECK(answer.at("records_changed") == 1);
  p = purchase(s, a, id);
  CHECK(p.at("is_pending") == false);
  CHECK(p.at("is_active") == true);
  auto pro = entitlement(s, a, user, "pro");
  CHECK(pro.at("is_active") == true);
  CHECK(str(pro.at("offering")) == "lifetime");
  CHECK(str(pro.at("in_app_purchase_id")) == id);
}

TEST_CASE("an upgrade's token (linkedPurchaseToken) joins the purchase it replaced",
          "[purchases][store_b][rtdn][upgrade]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "play-upgrade");
  auto hook = add_endpoint(s, a.app, "in_app_purchase");
  const auto user = unique("user");
  const auto old_token = unique("tok-gold");
  const auto new_token = unique("tok-platinum");
  const auto now = now_ms();
  auto gold = running(now - 10 * day, now + 20 * day);
  play_answers(s, a, old_token, gold);
  const auto id = uploaded(s, a, old_token, "gold", gold.start, user);
  REQUIRE(entitlement(s, a, user, "premium").at("is_active") == true);

  // Upgraded to platinum: a new token naming the old one; Play ends the old
  // subscription (replacementCancellation).
  auto platinum = running(now - 60000, now + 30 * day);
  platinum.product = "platinum";
  platinum.linked = old_token;
  play_answers(s, a, new_token, platinum);
  gold.state = "SUBSCRIPTION_STATE_EXPIRED";
  gold.auto_renew = false;
  gold.expiry = now - 60000;
  gold.context
    = {{"canceledStateContext", json::object{{"replacementCancellation", json::object{}}}}};
  play_answers(s, a, old_token, gold);
  auto r = upload(s, a, new_token, "platinum", platinum.start, user);
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(str(r.json().at("in_app_purchase").at("id")) == id);

  auto p = purchase(s, a, id);
  CHECK(str(p.at("product_id")) == "platinum");
  CHECK(p.at("is_active") == true);
  CHECK(p.at("is_upgraded") == false);
  CHECK(p.at("current_period_end_at").at("ms") == platinum.expiry);
  CHECK(p.at("versions") == 2);
  REQUIRE(p.at("sources").as_array().size() == 2);
  CHECK(str(p.at("sources").at(0).at("kind")) == "purchase_order");
  CHECK(str(p.at("sources").at(1).at("id")) == str(r.json().at("id")));
  CHECK(p.at("entitlements") == json::array{"pro/monthly"});
  auto answer = customer(s, a, user);
  CHECK(answer.at("entitlements").at("pro").at("is_active") == true);
  CHECK(str(answer.at("entitlements").at("pro").at("in_app_purchase_id")) == id);
  CHECK(answer.at("entitlements").at("premium").at("is_active") == false);
  CHECK(answer.at("in_app_purchases").as_array().size() == 1);

  // Play's word on the old token comes afterwards (SUBSCRIPTION_EXPIRED): it
  // speaks of the replaced period and changes nothing of the purchase.
  auto expired = push(s, a.push_path, subscription_push(a, old_token, subscription_expired));
  CHECK(expired.at("records_changed") == 1); // the old token's purchase order
  auto after = purchase(s, a, id);
  CHECK(after.at("versions") == p.at("versions"));
  after.as_object().erase("last_synced_at"); // Play did speak of the purchase
  p.as_object().erase("last_synced_at");
  CHECK(after == p);
  CHECK(entitlement(s, a, user, "pro").at("is_active") == true);

  // One purchase throughout: created, then updated by the upgrade.
  std::vector<std::string> events;
  eventually([&] {
    events.clear();
    for (const auto& d : received(s, hook))
      events.push_back(str(json::parse(str(d.at("body"))).at("name")));
    return events.size() >= 2;
  });
  CHECK(events == names{"in_app_purchase.created", "in_app_purchase.updated"});
}

TEST_CASE("a legacy Play upload builds its purchase once Play confirms it",
          "[purchases][store_b][legacy]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "play-legacy");
  const auto user = unique("user");
  const auto now = now_ms();
  auto body = [&](const std::string& token) {
    return json::serialize(json::object{{"package_name", a.package},
                                        {"purchase_token", token},
                                        {"product_id", "gold"},
                                        {"user_identifier", user}});
  };
  const std::string legacy = std::string(orders) + "/legacy";

  // Play is away: stored pending, and a signature-less proof proves nothing yet.
  const auto token = unique("tok");
  auto sub = running(now - day, now + 29 * day);
  play_answers(s, a, token, sub);
  struct store_b_back_up {
    suite& s;
    ~store_b_back_up() { s.emulator.set_mode("store_b", "up"); }
  } restore{s};
  s.emulator.set_mode("store_b", "down");
  auto pending = s.service.post(legacy, body(token), a.app.token);
  INFO(pending.body);
  REQUIRE(pending.status == 206);
  CHECK(pending.json().at("in_app_purchase").as_object().if_contains("id") == nullptr);
  auto nothing = customer(s, a, user);
  CHECK(nothing.at("entitlements").at("premium").at("is_active") == false);
  CHECK(nothing.at("in_app_purchases").as_array().empty());

  // Play answers the retry: the purchase is built from the confirmed record.
  s.emulator.set_mode("store_b", "up");
  const auto order = str(pending.json().at("id"));
  json::value confirmed;
  REQUIRE(eventually([&] {
    confirmed = s.service.get(std::string(orders) + "/" + order, a.app.token).json();
    return str(confirmed.at("validation_state")) == "validated";
  }));
  const auto id = str(confirmed.at("in_app_purchase").at("id"));
  auto p = purchase(s, a, id);
  CHECK(str(p.at("marketplace")) == "store_b");
  CHECK(str(p.at("type")) == "subscription");
  CHECK(str(p.at("user_identifier")) == user);
  CHECK(p.at("is_active") == true);
  CHECK(p.at("current_period_end_at").at("ms") == sub.expiry);
  REQUIRE(p.at("sources").as_array().size() == 1);
  CHECK(str(p.at("sources").at(0).at("kind")) == "purchase_order");
  CHECK(str(p.at("sources").at(0).at("id")) == order);
  auto premium = entitlement(s, a, user, "premium");
  CHECK(premium.at("is_active") == true);
  CHECK(str(premium.at("in_app_purchase_id")) == id);

  // Play up from the start: 200 with its purchase at once.
  const auto other = unique("tok");
  play_answers(s, a, other, sub);
  auto direct = s.service.post(legacy, body(other), a.app.token);
  INFO(direct.body);
  REQUIRE(direct.status == 200);
  CHECK(direct.json().at("is_legacy") == true);
  const auto other_id = str(direct.json().at("in_app_purchase").at("id"));
  CHECK(other_id != id);
  CHECK(purchase(s, a, other_id).at("is_active") == true);
}

TEST_CASE("an RTDN older than notifications.max-age is recorded, not applied",
          "[purchases][store_b][rtdn][hostile]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "play-replay");
  const auto user = unique("user");
  const auto token = unique("tok");
  const auto now = now_ms();
  auto sub = running(now - 20 * day, now + 10 * day);
  play_answers(s, a, token, sub);
  auto stored = upload(s, a, token, "gold", sub.start, user);
  REQUIRE(stored.status == 200);
  const auto id = str(stored.json().at("in_app_purchase").at("id"));
  const auto order = std::string(orders) + "/" + str(stored.json().at("id"));
  const auto order_before = s.service.get(order, a.app.token).json();
  const auto before = purchase(s, a, id);

  // A receiptd with the default bound (10 days) on the suite's database; Play
  // now says the subscription is on hold, which an applied push would take.
  auto args = standard_service_args(s);
  std::erase_if(args, [](const std::string& arg) { return arg.starts_with("--notifications."); });
  service_process bounded(make_temp_dir("receiptd-rtdn-max-age"), s.db_url, args);
  bounded.start();
  sub.state = "SUBSCRIPTION_STATE_ON_HOLD";
  sub.expiry = now - second;
  play_answers(s, a, token, sub);
  auto calls = s.emulator.calls().at("store_b").at("subscriptionsv2").to_number<int>();

  // Sent eleven days ago (Pub/Sub retries for seven): a replay.
  const auto id_old = message_id();
  const auto replay
    = subscription_push(a, token, subscription_on_hold, now - 11 * day, "gold", id_old);
  auto r = bounded.post(a.push_path, replay, "");
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.json()
        == json::object{{"status", "recorded"},
                        {"notification_type", "subscription"},
                        {"notification_subtype", "SUBSCRIPTION_ON_HOLD"},
                        {"records_changed", 0}});
  CHECK(s.emulator.calls().at("store_b").at("subscriptionsv2").to_number<int>() == calls);
  CHECK(purchase(s, a, id) == before);
  CHECK(s.service.get(order, a.app.token).json() == order_before);
  CHECK(entitlement(s, a, user, "premium").at("is_active") == true);

  // Delivered again: a duplicate, as any push is.
  auto again = bounded.post(a.push_path, replay, "");
  INFO(again.body);
  REQUIRE(again.status == 200);
  CHECK(str(again.json().at("status")) == "duplicate");

  // A push sent now is applied: the bound was about the age.
  auto fresh = bounded.post(a.push_path, subscription_push(a, token, subscription_on_hold), "");
  INFO(fresh.body);
  REQUIRE(fresh.status == 200);
  CHECK(str(fresh.json().at("status")) == "applied");
  CHECK(purchase(s, a, id).at("is_on_hold") == true);
  CHECK(bounded.stop() == 0);
}
