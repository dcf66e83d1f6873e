// Google Play real-time developer notifications of the kinds and types added
// since receiptd's first model, through the real binary on the database under
// test: a voided purchase notification voids what the Play Developer API then
// confirms (a one-time product whole, or only the quantity a quantity-based
// partial refund took; a revoked subscription), the subscription types 19, 20
// and 22 ask Play like every other, and a pending refund review or a kind or
// type Google adds later is recorded and answered 200, never refused.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "model/encoding.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";
constexpr std::int64_t event_ms = 1746683885460; // the pushes' eventTimeMillis
constexpr std::int64_t far_expiry = 1924992000000; // 2031-01-01

struct rtdn_app {
  test_app app;
  std::string package;
  std::string push_path;
};

rtdn_app fresh_app(suite& s, const std::string& name) {
  rtdn_app a;
  a.package = unique_package(name);
  a.app = create_store_b_app(s, a.package, test_licence_key());
  auto base = s.service.url("");
  auto r = s.ctl({"app", "rtdn-url", a.app.id, "--base-url=" + base});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  a.push_path = str(r.json.at("url")).substr(base.size());
  return a;
}

std::string message_id() {
  auto hex = model::hex_encode(model::random_bytes(6));
  return std::to_string(std::stoull(hex, nullptr, 16));
}

// A Pub/Sub push of a DeveloperNotification holding `notification`.
std::string push_body(const std::string& package, const json::object& notification,
                      const std::string& id) {
  json::object data{
    {"version", "1.0"}, {"packageName", package}, {"eventTimeMillis", std::to_string(event_ms)}};
  for (auto& [k, v] : notification)
    data[k] = v;
  json::object message{{"data", model::base64_encode(json::serialize(data))},
                       {"messageId", id},
                       {"publishTime", "2025-05-08T05:58:05.617Z"}};
  return json::serialize(
    json::object{{"message", message}, {"subscription", "projects/p/subscriptions/play-rtdn"}});
}

std::string voided_push(const std::string& package, const std::string& token, int product_type,
                        int refund_type) {
  return push_body(package,
                   json::object{{"voidedPurchaseNotification",
                                 json::object{{"purchaseToken", token},
                                              {"orderId", "GPA.1234-5678-9012-34567"},
                                              {"productType", product_type},
                                              {"refundType", refund_type}}}},
                   message_id());
}

std::string subscription_push(const std::string& package, const std::string& token, int type) {
  return push_body(package,
                   json::object{{"subscriptionNotification",
                                 json::object{{"version", "1.0"},
                                              {"notificationType", type},
                                              {"purchaseToken", token},
                                              {"subscriptionId", "gold"}}}},
                   message_id());
}

http_response push(suite& s, const rtdn_app& a, const std::string& body) {
  auto r = s.service.post(a.push_path, body, "");
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r;
}

// What the emulator's Play API answers about `token` from now on.
void play_api_says(suite& s, const rtdn_app& a, const std::string& token, json::object fields) {
  json::object o{{"package_name", a.package}, {"token", token}, {"acknowledged", true}};
  for (auto& [k, v] : fields)
    o[k] = v;
  s.emulator.control("POST", "/control/store_b/purchases", o);
}

// A one-time product of `quantity` coins, uploaded and validated.
std::string uploaded_coins(suite& s, const rtdn_app& a, const std::string& token, int quantity) {
  play_api_says(s, a, token,
                {{"product_id", "coins"}, {"kind", "product"}, {"quantity", quantity}});
  auto data = purchase_data_json(a.package, "coins", token);
  auto r = s.service.post(orders, store_b_body(data, sign_purchase(data)), a.app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.json().at("in_app_purchase").at("quantity") == quantity);
  CHECK(r.json().at("in_app_purchase").at("refundable_quantity") == quantity);
  return str(r.json().at("id"));
}

json::value get_order(suite& s, const rtdn_app& a, const std::string& id) {
  auto r = s.service.get(std::string(orders) + "/" + id, a.app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json().at("in_app_purchase");
}

} // namespace

TEST_CASE("a voided one-time product notification voids what Play confirms, whole or in part",
          "[rtdn][store_b][voided]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "rtdn-voided");

  SECTION("a full refund: the purchase is refunded and revoked") {
    auto token = unique("tok");
    auto id = uploaded_coins(s, a, token, 1);
    play_api_says(s, a, token,
                  {{"product_id", "coins"}, {"kind", "product"}, {"quantity", 1},
                   {"purchase_state", 1}});
    auto r = push(s, a, voided_push(a.package, token, 2, 1));
    CHECK(str(r.json().at("notification_type")) == "voided_purchase");
    CHECK(r.json().at("records_changed") == 1);
    auto p = get_order(s, a, id);
    CHECK(str(p.at("purchase_state")) == "refunded");
    CHECK(p.at("voided_at").at("ms") == event_ms);
    CHECK(p.at("voided_quantity").is_null());
    CHECK(p.at("refundable_quantity") == 0);
    CHECK(p.at("revoked_at").at("ms") == event_ms);
    CHECK(p.at("revocation_type").is_null());
    CHECK(p.at("is_active") == false);
  }

  SECTION("a quantity-based partial refund: two of three voided, the rest still held") {
    auto token = unique("tok");
    auto id = uploaded_coins(s, a, token, 3);
    play_api_says(s, a, token,
                  {{"product_id", "coins"}, {"kind", "product"}, {"quantity", 3},
                   {"refundable_quantity", 1}});
    auto r = push(s, a, voided_push(a.package, token, 2, 2));
    CHECK(r.json().at("records_changed") == 1);
    auto p = get_order(s, a, id);
    CHECK(str(p.at("purchase_state")) == "refunded");
    CHECK(p.at("voided_quantity") == 2);
    CHECK(p.at("refundable_quantity") == 1);
    CHECK(p.at("revoked_at").at("ms") == event_ms);
    CHECK(str(p.at("revocation_type")) == "refund_partial_quantity");
    CHECK(p.at("revocation_percentage") == 66666);
    CHECK(p.at("is_active") == true);
  }

  SECTION("the push alone voids nothing: Play says the purchase stands") {
    auto token = unique("tok");
    auto id = uploaded_coins(s, a, token, 2);
    auto r = push(s, a, voided_push(a.package, token, 2, 1));
    CHECK(r.json().at("records_changed") == 0);
    auto p = get_order(s, a, id);
    CHECK(str(p.at("purchase_state")) == "purchased");
    CHECK(p.at("voided_at").is_null());
    CHECK(p.at("revoked_at").is_null());
    CHECK(p.at("is_active") == true);
  }
}

TEST_CASE("a voided subscription notification revokes it once Play says it ended",
          "[rtdn][store_b][voided]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "rtdn-voided-sub");
  auto token = unique("tok");
  register_purchase(s, a.package, "gold", token, "subscription");
  auto data = purchase_data_json(a.package, "gold", token, true);
  auto up = s.service.post(orders, store_b_body(data, sign_purchase(data)), a.app.token);
  INFO(up.body);
  REQUIRE(up.status == 200);
  auto id = str(up.json().at("id"));

  play_api_says(s, a, token,
                {{"product_id", "gold"}, {"kind", "subscription"},
                 {"subscription_state", "SUBSCRIPTION_STATE_EXPIRED"}, {"expiry_ms", event_ms}});
  auto r = push(s, a, voided_push(a.package, token, 1, 1));
  CHECK(r.json().at("records_changed") == 1);
  auto p = get_order(s, a, id);
  CHECK(str(p.at("purchase_state")) == "refunded");
  CHECK(p.at("voided_at").at("ms") == event_ms);
  CHECK(p.at("revoked_at").at("ms") == event_ms);
  CHECK(p.at("is_active") == false);
}

TEST_CASE("the subscription types since 2024 ask Play and are named in the answer",
          "[rtdn][store_b]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "rtdn-types");
  auto token = unique("tok");
  register_purchase(s, a.package, "gold", token, "subscription");
  auto data = purchase_data_json(a.package, "gold", token, true);
  auto up = s.service.post(orders, store_b_body(data, sign_purchase(data)), a.app.token);
  INFO(up.body);
  REQUIRE(up.status == 200);
  auto id = str(up.json().at("id"));

  // SUBSCRIPTION_PENDING_PURCHASE_CANCELED: Play's answer lands.
  play_api_says(s, a, token,
                {{"product_id", "gold"}, {"kind", "subscription"},
                 {"subscription_state", "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"},
                 {"expiry_ms", far_expiry}});
  auto r = push(s, a, subscription_push(a.package, token, 20));
  CHECK(str(r.json().at("status")) == "applied");
  CHECK(str(r.json().at("notification_subtype")) == "SUBSCRIPTION_PENDING_PURCHASE_CANCELED");
  CHECK(r.json().at("records_changed") == 1);
  CHECK(str(get_order(s, a, id).at("subscription_state"))
        == "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED");

  // SUBSCRIPTION_PRICE_CHANGE_UPDATED, SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED
  // and a type Play adds later: asked, applied as Play says.
  const std::pair<int, const char*> types[] = {
    {19, "SUBSCRIPTION_PRICE_CHANGE_UPDATED"},
    {22, "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED"},
    {99, "99"},
  };
  for (auto [type, name] : types) {
    INFO(type);
    auto calls = s.emulator.calls().at("store_b").at("subscriptionsv2").to_number<int>();
    auto t = push(s, a, subscription_push(a.package, token, type));
    CHECK(str(t.json().at("status")) == "applied");
    CHECK(str(t.json().at("notification_subtype")) == name);
    CHECK(s.emulator.calls().at("store_b").at("subscriptionsv2").to_number<int>() == calls + 1);
  }
}

TEST_CASE("a pending refund review and a kind Play adds later are recorded, not refused",
          "[rtdn][store_b]") {
  auto& s = the_suite();
  auto a = fresh_app(s, "rtdn-other");
  auto review = push_body(a.package,
                          json::object{{"pendingRefundReviewNotification",
                                        json::object{{"version", "1.0"},
                                                     {"pendingRefundToken", "prt-1"},
                                                     {"orderId", "GPA.1234-5678-9012-34567"},
                                                     {"refundReason", 7}}}},
                          message_id());
  auto future = push_body(
    a.package,
    json::object{{"futureThingNotification", json::object{{"purchaseToken", "x"}, {"n", 1}}}},
    message_id());
  const std::pair<std::string, const char*> pushes[] = {
    {review, "pending_refund_review"},
    {future, "other"},
  };
  for (const auto& [body, kind] : pushes) {
    INFO(kind);
    auto calls = s.emulator.calls().at("store_b");
    auto r = push(s, a, body);
    CHECK(str(r.json().at("status")) == "applied");
    CHECK(str(r.json().at("notification_type")) == kind);
    CHECK(r.json().at("records_changed") == 0);
    CHECK(s.emulator.calls().at("store_b") == calls); // Play is not asked
    // Recorded: the same messageId again is a duplicate.
    auto again = push(s, a, body);
    CHECK(str(again.json().at("status")) == "duplicate");
  }
}
