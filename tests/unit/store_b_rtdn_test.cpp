// Google Play Real-time developer notifications (model/store_b/rtdn.hpp):
// every Pub/Sub push body in tests/data/google-play-rtdn parsed against its
// expected.json (the five valid ones field by field, the four negative ones
// refused with bad_request on the field the header names), hand-made malformed
// pushes, and which Play Developer API call a notification asks for.

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "model/encoding.hpp"
#include "model/store_b/rtdn.hpp"
#include "tests/unit/test_files.hpp"

using namespace receiptd::model;
using namespace receiptd::model::store_b;
using receiptd::test::data_file;
namespace json = boost::json;

namespace {

std::string dir_of(const std::string& name) {
  return "google-play-rtdn/" + name;
}

// A key of a JSON object; null when it is absent.
json::value field(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v != nullptr ? *v : json::value();
}

std::optional<rtdn_kind> kind_named(const json::value& v) {
  if (v == "subscriptionNotification")
    return rtdn_kind::subscription;
  if (v == "oneTimeProductNotification")
    return rtdn_kind::one_time_product;
  if (v == "voidedPurchaseNotification")
    return rtdn_kind::voided_purchase;
  if (v == "testNotification")
    return rtdn_kind::test;
  return std::nullopt;
}

// Whether the error lists `field` with `code`.
bool names(const result<rtdn>& r, const std::string& field, const std::string& code) {
  const auto& errors = r.errors();
  return std::any_of(errors.begin(), errors.end(),
                     [&](const field_error& e) { return e.field == field && e.code == code; });
}

std::string messages(const result<rtdn>& r) {
  if (r)
    return "parsed";
  std::string out;
  for (const auto& e : r.errors())
    out += e.field + " " + e.code + ": " + e.message + "\n";
  return out;
}

// A push whose message.data is base64(developer_notification), as Pub/Sub sends it.
std::string push_of(const std::string& developer_notification,
                    const std::string& message_id = "136969346945") {
  json::object message{{"data", base64_encode(developer_notification)},
                       {"messageId", message_id},
                       {"publishTime", "2025-05-08T05:58:05.617Z"}};
  json::object body{{"message", message},
                    {"subscription", "projects/myproject/subscriptions/mysubscription"}};
  return json::serialize(body);
}

// A DeveloperNotification with `kind_json` as its one notification.
std::string developer_notification(const std::string& kind_json) {
  return R"({"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1746683885460",)"
    + kind_json + "}";
}

const std::string subscription_json
  = R"("subscriptionNotification":{"version":"1.0","notificationType":3,)"
    R"("purchaseToken":"token-1","subscriptionId":"monthly"})";

// Parses and requires the error shape: bad_request, and `field` with `code`.
void require_refused(const std::string& body, const std::string& field, const std::string& code) {
  INFO(body);
  auto r = parse_rtdn_push(body);
  INFO(messages(r));
  REQUIRE_FALSE(r);
  CHECK(r.err().code() == errc::bad_request);
  CHECK(names(r, field, code));
}

} // namespace

TEST_CASE("every valid RTDN push body parses as its expected.json says", "[rtdn]") {
  const char* const valid[] = {
    "bat-go-one-time-product-purchased-docs",
    "bat-go-subscription-purchased-docs",
    "bat-go-test-notification-docs",
    "bat-go-voided-purchase-docs",
    "dmzlingyin-aitubo-subscription-canceled-2025",
  };
  for (const std::string name : valid) {
    INFO(name);
    const auto expected = json::parse(data_file(dir_of(name) + "/expected.json")).as_object();
    REQUIRE(expected.at("valid") == true);
    auto r = parse_rtdn_push(data_file(dir_of(name) + "/body.json"));
    INFO(messages(r));
    REQUIRE(r);
    CHECK(r->message_id == expected.at("messageId").as_string());
    CHECK(r->package_name == expected.at("packageName").as_string());
    REQUIRE(r->event_time);
    CHECK(std::to_string(*r->event_time) == expected.at("eventTimeMillis").as_string());
    const auto kind = kind_named(expected.at("notificationKind"));
    REQUIRE(kind);
    CHECK(r->kind == *kind);

    const auto type = field(expected, "notificationType");
    CHECK(r->notification_type == (type.is_null() ? 0 : type.to_number<int>()));
    const auto token = field(expected, "purchaseToken");
    CHECK(r->purchase_token == (token.is_null() ? "" : std::string(token.as_string())));
    // subscriptionId for subscriptions, sku for one-time products.
    auto product = field(expected, "subscriptionId");
    if (product.is_null())
      product = field(expected, "sku");
    CHECK(r->product_id == (product.is_null() ? "" : std::string(product.as_string())));
    const auto order = field(expected, "orderId");
    CHECK(r->order_id
          == (order.is_null() ? std::nullopt : std::optional<std::string>(order.as_string())));
    const auto product_type = field(expected, "productType");
    CHECK(r->product_type
          == (product_type.is_null() ? std::nullopt
                                     : std::optional<int>(product_type.to_number<int>())));
    const auto refund_type = field(expected, "refundType");
    CHECK(
      r->refund_type
      == (refund_type.is_null() ? std::nullopt : std::optional<int>(refund_type.to_number<int>())));
  }
}

TEST_CASE("the real production push is a subscription cancellation to re-fetch", "[rtdn]") {
  auto r = parse_rtdn_push(
    data_file(dir_of("dmzlingyin-aitubo-subscription-canceled-2025") + "/body.json"));
  REQUIRE(r);
  CHECK(r->message_id == "14697227525191478");
  CHECK(r->package_name == "com.aitubo.image.creator");
  CHECK(r->event_time == 1746683885460);
  CHECK(r->kind == rtdn_kind::subscription);
  CHECK(r->notification_type == 3); // SUBSCRIPTION_CANCELED
  CHECK(r->product_id == "subscribe_annual");
  CHECK(r->purchase_token
        == "cklihdacecnlmaaccachgmic.AO-J1OyYaybsEEnYz_F7gXkOpxNOFcYmRx49za5pUtTf34_Ty9_m1jGxyzKRa9"
           "PvmDBVyXTko1szQYG7inHRIvgHy0gJwxPHcWppC9Megnfic_eHqhv9Zec");
  CHECK(asks_subscriptions(*r));
}

TEST_CASE("every negative RTDN push body is refused on the field the header names", "[rtdn]") {
  struct negative {
    const char* name;
    const char* field;
    const char* code;
  };
  // not-base64: message.data is "not-base64"; the others decode to bytes that
  // are not a JSON DeveloperNotification ("test", "fsdfsdfsd", Google's schema
  // placeholder with type names for values).
  const negative negatives[] = {
    {"bat-go-negative-data-not-base64", "message", "invalid_base64"},
    {"bat-go-negative-data-not-json", "message.data", "not_an_object"},
    {"imdhemy-negative-weird-data-2020", "message.data", "not_an_object"},
    {"google-docs-reference-envelope", "message.data", "not_an_object"},
  };
  for (const auto& n : negatives) {
    INFO(n.name);
    const auto expected = json::parse(data_file(dir_of(n.name) + "/expected.json")).as_object();
    REQUIRE(expected.at("valid") == false);
    require_refused(data_file(dir_of(n.name) + "/body.json"), n.field, n.code);
  }
}

TEST_CASE("the bat-go negatives also lack a messageId, and say so", "[rtdn]") {
  auto r = parse_rtdn_push(data_file(dir_of("bat-go-negative-data-not-json") + "/body.json"));
  REQUIRE_FALSE(r);
  CHECK(names(r, "message", "missing"));
  CHECK(names(r, "message.data", "not_an_object"));
}

TEST_CASE("a malformed envelope is refused on field message", "[rtdn]") {
  const std::string good_data = base64_encode(developer_notification(subscription_json));
  SECTION("not JSON") {
    require_refused("{\"message\":", "message", "invalid_json");
  }
  SECTION("not an object") {
    require_refused("[]", "message", "invalid_json");
  }
  SECTION("empty body") {
    require_refused("", "message", "invalid_json");
  }
  SECTION("no message") {
    require_refused(R"({"subscription":"s"})", "message", "missing");
  }
  SECTION("message not an object") {
    require_refused(R"({"message":"hello"})", "message", "not_an_object");
  }
  SECTION("no messageId") {
    require_refused(R"({"message":{"data":")" + good_data + R"("}})", "message", "missing");
  }
  SECTION("empty messageId") {
    require_refused(R"({"message":{"messageId":"","data":")" + good_data + R"("}})", "message",
                    "missing");
  }
  SECTION("messageId a number") {
    require_refused(R"({"message":{"messageId":136969346945,"data":")" + good_data + R"("}})",
                    "message", "not_a_string");
  }
  SECTION("messageId over 256 bytes") {
    require_refused(push_of(developer_notification(subscription_json), std::string(257, '7')),
                    "message", "too_long");
  }
  SECTION("no data") {
    require_refused(R"({"message":{"messageId":"1"}})", "message", "missing");
  }
  SECTION("data not a string") {
    require_refused(R"({"message":{"messageId":"1","data":{}}})", "message", "not_a_string");
  }
}

TEST_CASE("message.data must be strict base64", "[rtdn]") {
  const std::string decoded = developer_notification(subscription_json);
  const std::string strict = base64_encode(decoded);
  REQUIRE(strict.back() == '='); // the cases below strip or move padding
  auto with_data = [](const std::string& data) {
    return R"({"message":{"messageId":"1","data":")" + data + R"("}})";
  };
  REQUIRE(parse_rtdn_push(with_data(strict)));

  SECTION("no padding") {
    auto unpadded = strict;
    unpadded.erase(unpadded.find('='));
    REQUIRE(base64_decode(unpadded)); // the lenient decoder would take it
    require_refused(with_data(unpadded), "message", "invalid_base64");
  }
  SECTION("a line break") {
    auto wrapped = strict;
    wrapped.insert(8, "\\n");
    require_refused(with_data(wrapped), "message", "invalid_base64");
  }
  SECTION("a space") {
    auto spaced = strict;
    spaced.insert(4, " ");
    require_refused(with_data(spaced), "message", "invalid_base64");
  }
  SECTION("the url-safe alphabet") {
    // "?" "?>" encodes to "Pz8+": '+' in the standard alphabet, '-' in base64url.
    const auto url_safe = base64url_encode(std::string("?") + "?>" + decoded);
    REQUIRE(url_safe.find('-') != std::string::npos);
    require_refused(with_data(url_safe), "message", "invalid_base64");
  }
  SECTION("padding in the middle") {
    require_refused(with_data("QQ==" + strict), "message", "invalid_base64");
  }
  SECTION("three padding characters") {
    require_refused(with_data("QQ==="), "message", "invalid_base64");
  }
  SECTION("empty") {
    require_refused(with_data(""), "message", "missing");
  }
}

TEST_CASE("a malformed DeveloperNotification is refused on field message.data", "[rtdn]") {
  SECTION("a JSON array") {
    require_refused(push_of("[]"), "message.data", "not_an_object");
  }
  SECTION("a JSON string") {
    require_refused(push_of(R"("hello")"), "message.data", "not_an_object");
  }
  SECTION("nested too deep") {
    std::string deep = std::string(100, '[') + std::string(100, ']');
    require_refused(push_of(R"({"packageName":"p","testNotification":{},"x":)" + deep + "}"),
                    "message.data", "not_an_object");
  }
  SECTION("no packageName") {
    require_refused(push_of(R"({"testNotification":{"version":"1.0"}})"), "message.data",
                    "missing");
  }
  SECTION("packageName a number") {
    require_refused(push_of(R"({"packageName":7,"testNotification":{}})"), "message.data",
                    "not_a_string");
  }
  SECTION("packageName over 256 bytes") {
    require_refused(
      push_of(R"({"packageName":")" + std::string(257, 'a') + R"(","testNotification":{}})"),
      "message.data", "too_long");
  }
  SECTION("eventTimeMillis not a time") {
    require_refused(
      push_of(R"({"packageName":"p","eventTimeMillis":"soon","testNotification":{}})"),
      "message.data", "invalid_time");
  }
  SECTION("eventTimeMillis before 1970") {
    require_refused(
      push_of(R"({"packageName":"p","eventTimeMillis":-1746683885460,"testNotification":{}})"),
      "message.data", "invalid_time");
  }
  SECTION("two of them") {
    require_refused(
      push_of(developer_notification(subscription_json + R"(,"testNotification":{})")),
      "message.data", "several_notifications");
  }
  SECTION("a notification that is not an object") {
    require_refused(push_of(developer_notification(R"("subscriptionNotification":[1])")),
                    "message.data", "not_an_object");
  }
  SECTION("a subscription without purchaseToken") {
    require_refused(push_of(developer_notification(
                      R"("subscriptionNotification":{"notificationType":3,"subscriptionId":"m"})")),
                    "message.data", "missing");
  }
  SECTION("a subscription without notificationType") {
    require_refused(push_of(developer_notification(
                      R"("subscriptionNotification":{"purchaseToken":"t","subscriptionId":"m"})")),
                    "message.data", "missing");
  }
  SECTION("notificationType a string") {
    require_refused(
      push_of(developer_notification(
        R"("subscriptionNotification":{"notificationType":"3","purchaseToken":"t"})")),
      "message.data", "not_an_integer");
  }
  SECTION("notificationType negative") {
    require_refused(push_of(developer_notification(
                      R"("subscriptionNotification":{"notificationType":-1,"purchaseToken":"t"})")),
                    "message.data", "not_an_integer");
  }
  SECTION("a one-time product with an empty purchaseToken") {
    require_refused(push_of(developer_notification(
                      R"("oneTimeProductNotification":{"notificationType":1,"purchaseToken":""})")),
                    "message.data", "missing");
  }
  SECTION("a purchaseToken over 2,048 bytes") {
    require_refused(push_of(developer_notification(
                      R"("oneTimeProductNotification":{"notificationType":1,"purchaseToken":")"
                      + std::string(2049, 't') + R"("})")),
                    "message.data", "too_long");
  }
  SECTION("a sku over 256 bytes") {
    require_refused(
      push_of(developer_notification(
        R"("oneTimeProductNotification":{"notificationType":1,"purchaseToken":"t","sku":")"
        + std::string(257, 's') + R"("})")),
      "message.data", "too_long");
  }
  SECTION("a voided purchase with productType a string") {
    require_refused(push_of(developer_notification(
                      R"("voidedPurchaseNotification":{"purchaseToken":"t","productType":"1"})")),
                    "message.data", "not_an_integer");
  }
  SECTION("a voided purchase with orderId a number") {
    require_refused(push_of(developer_notification(
                      R"("voidedPurchaseNotification":{"purchaseToken":"t","orderId":12})")),
                    "message.data", "not_a_string");
  }
}

TEST_CASE("what a push may vary in is accepted", "[rtdn]") {
  SECTION("message_id alone (the snake_case spelling)") {
    const auto data = base64_encode(developer_notification(subscription_json));
    auto r = parse_rtdn_push(R"({"message":{"message_id":"42","data":")" + data + R"("}})");
    INFO(messages(r));
    REQUIRE(r);
    CHECK(r->message_id == "42");
  }
  SECTION("messageId wins over message_id") {
    const auto data = base64_encode(developer_notification(subscription_json));
    auto r = parse_rtdn_push(R"({"message":{"messageId":"1","message_id":"2","data":")" + data
                             + R"("}})");
    REQUIRE(r);
    CHECK(r->message_id == "1");
  }
  SECTION("eventTimeMillis as a JSON number, unknown fields, a later notificationType") {
    auto r = parse_rtdn_push(push_of(
      R"({"version":"1.0","packageName":"p","eventTimeMillis":1746683885460,"futureField":[1],)"
      R"("subscriptionNotification":{"notificationType":99,"purchaseToken":"t","extra":{}}})"));
    INFO(messages(r));
    REQUIRE(r);
    CHECK(r->event_time == 1746683885460);
    CHECK(r->notification_type == 99);
    CHECK(r->product_id.empty()); // subscriptionId is optional
  }
  SECTION("no eventTimeMillis") {
    auto r = parse_rtdn_push(push_of(R"({"packageName":"p","testNotification":{}})"));
    REQUIRE(r);
    CHECK_FALSE(r->event_time);
    CHECK(r->kind == rtdn_kind::test);
    CHECK(r->purchase_token.empty());
  }
  SECTION("a null notification counts as absent") {
    auto r = parse_rtdn_push(
      push_of(developer_notification(subscription_json + R"(,"testNotification":null)")));
    INFO(messages(r));
    REQUIRE(r);
    CHECK(r->kind == rtdn_kind::subscription);
  }
  SECTION("a purchaseToken of exactly 2,048 bytes") {
    const std::string token(2048, 't');
    auto r = parse_rtdn_push(push_of(developer_notification(
      R"("oneTimeProductNotification":{"notificationType":1,"purchaseToken":")" + token
      + R"(","sku":"coins"})")));
    REQUIRE(r);
    CHECK(r->purchase_token == token);
    CHECK(r->product_id == "coins");
  }
}

TEST_CASE("asks_subscriptions picks the Play Developer API call", "[rtdn]") {
  rtdn n;
  n.kind = rtdn_kind::subscription;
  CHECK(asks_subscriptions(n));
  n.kind = rtdn_kind::one_time_product;
  CHECK_FALSE(asks_subscriptions(n));
  n.kind = rtdn_kind::test;
  CHECK_FALSE(asks_subscriptions(n));
  n.kind = rtdn_kind::voided_purchase;
  n.product_type = 1; // PRODUCT_TYPE_SUBSCRIPTION
  CHECK(asks_subscriptions(n));
  n.product_type = 2; // PRODUCT_TYPE_ONE_TIME
  CHECK_FALSE(asks_subscriptions(n));
  n.product_type.reset();
  CHECK_FALSE(asks_subscriptions(n));

  auto voided = parse_rtdn_push(data_file(dir_of("bat-go-voided-purchase-docs") + "/body.json"));
  REQUIRE(voided);
  CHECK(asks_subscriptions(*voided));
}

TEST_CASE("rtdn kinds have stable names", "[rtdn]") {
  CHECK(to_string(rtdn_kind::subscription) == "subscription");
  CHECK(to_string(rtdn_kind::one_time_product) == "one_time_product");
  CHECK(to_string(rtdn_kind::voided_purchase) == "voided_purchase");
  CHECK(to_string(rtdn_kind::test) == "test");
  CHECK(to_string(rtdn_kind::pending_refund_review) == "pending_refund_review");
  CHECK(to_string(rtdn_kind::other) == "other");
}

TEST_CASE("a kind receiptd does not know is kind other, never refused", "[rtdn]") {
  SECTION("a kind Google adds later: its key is kept") {
    auto r = parse_rtdn_push(push_of(developer_notification(
      R"("futurePurchaseNotification":{"version":"1.0","purchaseToken":"t","x":[1,2]})")));
    INFO(messages(r));
    REQUIRE(r);
    CHECK(r->kind == rtdn_kind::other);
    CHECK(r->kind_key == "futurePurchaseNotification");
    CHECK(r->purchase_token.empty());
    CHECK_FALSE(names_purchase(*r));
    CHECK(notification_subtype(*r) == "futurePurchaseNotification");
    CHECK(notification_type_name(*r).empty());
  }
  SECTION("no kind at all") {
    auto r = parse_rtdn_push(push_of(R"({"packageName":"p","version":"1.0"})"));
    INFO(messages(r));
    REQUIRE(r);
    CHECK(r->kind == rtdn_kind::other);
    CHECK(r->kind_key.empty());
    CHECK(notification_subtype(*r).empty());
  }
  SECTION("a key that is not a kind's name is not kept") {
    auto r = parse_rtdn_push(push_of(
      R"({"packageName":"p","odd key Notification":{},"long":{},")" + std::string(80, 'a')
      + R"(Notification":{}})"));
    INFO(messages(r));
    REQUIRE(r);
    CHECK(r->kind == rtdn_kind::other);
    CHECK(r->kind_key.empty());
  }
  SECTION("two known kinds are still refused") {
    require_refused(push_of(developer_notification(
                      R"("pendingRefundReviewNotification":{},"testNotification":{})")),
                    "message.data", "several_notifications");
  }
}

TEST_CASE("a pending refund review is recorded with its order id", "[rtdn]") {
  // Play's RTDN reference (2026): PendingRefundReviewNotification.
  auto r = parse_rtdn_push(push_of(developer_notification(
    R"("pendingRefundReviewNotification":{"version":"1.0","pendingRefundToken":"prt-1",)"
    R"("orderId":"GPA.1234-5678-9012-34567","refundReason":7,"obfuscatedAccountId":"a"})")));
  INFO(messages(r));
  REQUIRE(r);
  CHECK(r->kind == rtdn_kind::pending_refund_review);
  CHECK(r->order_id == "GPA.1234-5678-9012-34567");
  CHECK(r->refund_token == "prt-1"); // what orders.reviewrefund answers
  CHECK(r->purchase_token.empty());
  CHECK_FALSE(names_purchase(*r));
  CHECK_FALSE(asks_subscriptions(*r));
  CHECK(notification_subtype(*r).empty());
}

TEST_CASE("notification types have Play's names, the new ones included", "[rtdn]") {
  rtdn n;
  n.kind = rtdn_kind::subscription;
  const std::pair<int, const char*> named[] = {
    {1, "SUBSCRIPTION_RECOVERED"},
    {3, "SUBSCRIPTION_CANCELED"},
    {12, "SUBSCRIPTION_REVOKED"},
    {13, "SUBSCRIPTION_EXPIRED"},
    {19, "SUBSCRIPTION_PRICE_CHANGE_UPDATED"},
    {20, "SUBSCRIPTION_PENDING_PURCHASE_CANCELED"},
    {22, "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED"},
  };
  for (auto [type, name] : named) {
    n.notification_type = type;
    CHECK(notification_type_name(n) == name);
    CHECK(notification_subtype(n) == std::to_string(type));
  }
  for (int unnamed : {0, 14, 21, 23, 1000}) {
    n.notification_type = unnamed;
    CHECK(notification_type_name(n).empty());
  }
  n.kind = rtdn_kind::one_time_product;
  n.notification_type = 1;
  CHECK(notification_type_name(n) == "ONE_TIME_PRODUCT_PURCHASED");
  n.notification_type = 2;
  CHECK(notification_type_name(n) == "ONE_TIME_PRODUCT_CANCELED");
  n.kind = rtdn_kind::voided_purchase;
  CHECK(notification_type_name(n).empty());

  // A type Google adds later is kept and still names its purchase.
  auto r = parse_rtdn_push(push_of(developer_notification(
    R"("subscriptionNotification":{"notificationType":99,"purchaseToken":"t"})")));
  REQUIRE(r);
  CHECK(r->notification_type == 99);
  CHECK(names_purchase(*r));
}

TEST_CASE("a voided purchase notification carries refundType", "[rtdn]") {
  for (int refund_type : {1, 2}) {
    auto r = parse_rtdn_push(push_of(developer_notification(
      R"("voidedPurchaseNotification":{"purchaseToken":"t","orderId":"GPA.1","productType":2,)"
      R"("refundType":)"
      + std::to_string(refund_type) + "}")));
    REQUIRE(r);
    CHECK(r->kind == rtdn_kind::voided_purchase);
    CHECK(r->refund_type == refund_type);
    CHECK(r->product_type == 2);
    CHECK(names_purchase(*r));
  }
}

namespace {

rtdn voided_push(std::optional<unix_ms> event_time = 1746683885460) {
  rtdn n;
  n.kind = rtdn_kind::voided_purchase;
  n.purchase_token = "t";
  n.event_time = event_time;
  return n;
}

play_purchase coins(int quantity, std::optional<int> refundable) {
  play_purchase p;
  p.product_id = "coins";
  p.kind = product_kind::product;
  p.purchase_state = purchase_state::purchased;
  p.quantity = quantity;
  p.refundable_quantity = refundable;
  return p;
}

} // namespace

TEST_CASE("a voided purchase notification applies what the API's answer confirms",
          "[rtdn][voided]") {
  constexpr unix_ms now = 1750000000000;
  SECTION("a one-time product the API says is cancelled: voided whole at the event time") {
    auto p = coins(1, std::nullopt);
    p.purchase_state = purchase_state::cancelled;
    CHECK(apply_voided_notification(p, voided_push(), now));
    CHECK(p.purchase_state == purchase_state::refunded);
    CHECK(p.voided_time == 1746683885460);
    CHECK_FALSE(p.voided_quantity);
    CHECK_FALSE(p.voided_reason);
    CHECK_FALSE(p.voided_source);
    // Again: nothing new.
    CHECK_FALSE(apply_voided_notification(p, voided_push(), now));
  }
  SECTION("nothing left to refund: whole; no event time: now") {
    auto p = coins(3, 0);
    CHECK(apply_voided_notification(p, voided_push(std::nullopt), now));
    CHECK(p.voided_time == now);
    CHECK_FALSE(p.voided_quantity);
  }
  SECTION("a quantity-based partial refund: that quantity only, then the rest") {
    auto p = coins(3, 1);
    CHECK(apply_voided_notification(p, voided_push(), now));
    CHECK(p.purchase_state == purchase_state::refunded);
    CHECK(p.voided_quantity == 2);
    CHECK(p.voided_time == 1746683885460);
    CHECK_FALSE(apply_voided_notification(p, voided_push(), now));
    // A later refund of the rest makes it whole.
    p.refundable_quantity = 0;
    CHECK(apply_voided_notification(p, voided_push(1746683999000), now));
    CHECK_FALSE(p.voided_quantity);
    CHECK(p.voided_time == 1746683999000);
  }
  SECTION("the API says it stands: nothing, whatever the push says") {
    auto p = coins(3, 3);
    auto n = voided_push();
    n.refund_type = 2;
    CHECK_FALSE(apply_voided_notification(p, n, now));
    auto single = coins(1, std::nullopt); // an answer without refundableQuantity
    CHECK_FALSE(apply_voided_notification(single, n, now));
    CHECK(single.purchase_state == purchase_state::purchased);
    CHECK_FALSE(single.voided_time);
  }
  SECTION("a subscription: voided when the API says it expired, not while it runs") {
    play_purchase s;
    s.kind = product_kind::subscription;
    s.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
    CHECK_FALSE(apply_voided_notification(s, voided_push(), now));
    s.subscription_state = "SUBSCRIPTION_STATE_EXPIRED";
    CHECK(apply_voided_notification(s, voided_push(), now));
    CHECK(s.purchase_state == purchase_state::refunded);
    CHECK(s.voided_time == 1746683885460);
  }
  SECTION("what the voided purchases list said of the same voiding stays") {
    auto p = coins(1, 0);
    p.voided_time = 1746000000000;
    p.voided_reason = 7;
    p.voided_source = 2;
    p.purchase_state = purchase_state::refunded;
    CHECK_FALSE(apply_voided_notification(p, voided_push(), now));
    CHECK(p.voided_reason == 7);
    CHECK(p.voided_time == 1746000000000);
  }
  SECTION("another kind of notification changes nothing") {
    auto p = coins(1, 0);
    auto n = voided_push();
    n.kind = rtdn_kind::one_time_product;
    CHECK_FALSE(apply_voided_notification(p, n, now));
    CHECK_FALSE(p.voided_time);
  }
}

TEST_CASE("an RTDN lands only the API's answer on the purchase order as stored now",
          "[rtdn][store_b]") {
  purchase_order_record read; // as the handler read it
  read.state = validation_state::validated;
  read.purchase.product_id = "gold";
  read.purchase.kind = product_kind::subscription;
  read.purchase.purchase_state = purchase_state::purchased;
  read.purchase.acknowledged = false;
  read.purchase.auto_renewing = true;
  read.purchase.subscription_state = "SUBSCRIPTION_STATE_ACTIVE";
  read.acknowledgement = acknowledgement_state::pending;
  read.store_detail = "Play 200";
  read.echo.user_identifier = "user-1";

  auto answered = read; // the API: cancelled
  answered.purchase.auto_renewing = false;
  answered.purchase.subscription_state = "SUBSCRIPTION_STATE_CANCELED";
  answered.purchase.purchase_state = purchase_state::cancelled;
  answered.store_detail = "Play 200: cancelled";

  SECTION("what was written since the read stays") {
    auto now = read;
    now.acknowledgement = acknowledgement_state::acknowledged;
    now.purchase.acknowledged = true;
    now.purchase.voided_time = 1700000000000;
    now.purchase.voided_reason = 7;
    now.purchase.voided_source = 2;
    now.purchase.purchase_state = purchase_state::refunded;
    now.echo.user_identifier = "user-2"; // a re-upload's
    CHECK(land_rtdn_answer(now, answered));
    CHECK(now.purchase.auto_renewing == false);
    CHECK(now.purchase.subscription_state == "SUBSCRIPTION_STATE_CANCELED");
    CHECK(now.store_detail == "Play 200: cancelled");
    CHECK(now.acknowledgement == acknowledgement_state::acknowledged);
    CHECK(now.purchase.acknowledged == true);
    CHECK(now.purchase.voided_time == 1700000000000);
    CHECK(now.purchase.voided_reason == 7);
    CHECK(now.purchase.voided_source == 2);
    CHECK(now.purchase.purchase_state == purchase_state::refunded);
    CHECK(now.echo.user_identifier == "user-2");
  }
  SECTION("an answer the record holds already changes nothing") {
    auto now = answered;
    now.store_detail = "Play 200";
    CHECK_FALSE(land_rtdn_answer(now, answered));
    CHECK(now.store_detail == "Play 200: cancelled"); // the last answer's words, not a change
    auto acknowledged = answered;
    acknowledged.purchase.acknowledged = true; // Play read unacknowledged a moment ago
    CHECK_FALSE(land_rtdn_answer(acknowledged, answered));
    CHECK(acknowledged.purchase.acknowledged == true);
  }
  SECTION("a verdict that changes: validated from pending") {
    auto now = read;
    now.state = validation_state::pending;
    CHECK(land_rtdn_answer(now, read));
    CHECK(now.state == validation_state::validated);
  }
}
