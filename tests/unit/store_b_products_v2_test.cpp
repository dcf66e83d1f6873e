// Play one-time products v2 (purchases.productsv2) and orders (orders.get /
// orders.batchGet): answers → purchase, line items → purchases, Money → price.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include "model/purchases/observation.hpp"
#include "model/store_b/line_items.hpp"
#include "model/store_b/orders.hpp"
#include "model/store_b/play_api.hpp"

using namespace receiptd::model;
using namespace receiptd::model::store_b;

namespace {

constexpr const char* two_items = R"({
  "kind": "androidpublisher#productPurchaseV2",
  "productLineItem": [
    {"productId": "premium", "productOfferDetails": {"quantity": 1, "refundableQuantity": 1,
      "consumptionState": "CONSUMPTION_STATE_YET_TO_BE_CONSUMED", "purchaseOptionId": "buy",
      "offerId": "launch-offer"}},
    {"productId": "gems_100", "productOfferDetails": {"quantity": 3, "refundableQuantity": 3,
      "consumptionState": "CONSUMPTION_STATE_CONSUMED", "purchaseOptionId": "pack"}}],
  "purchaseStateContext": {"purchaseState": "PURCHASED"},
  "orderId": "GPA.3301-0000-0000-00001",
  "regionCode": "DE",
  "purchaseCompletionTime": "2025-09-01T10:00:00.123Z",
  "acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"})";

store_verdict classify_v2(play_purchase& p, std::string_view body, int status = 200) {
  return classify_purchase_response(purchase_api::products_v2, status, body, "", p);
}

} // namespace

TEST_CASE("productsv2's URL names no product", "[store_b][productsv2]") {
  CHECK(purchase_url("https://androidpublisher.googleapis.com", purchase_api::products_v2,
                     "com.ex", "ignored", "a/b")
        == "https://androidpublisher.googleapis.com/androidpublisher/v3/applications/com.ex/"
           "purchases/productsv2/tokens/a%2Fb");
}

TEST_CASE("a productsv2 answer of two line items: the claimed one's fields, both kept",
          "[store_b][productsv2]") {
  play_purchase p;
  p.product_id = "gems_100";
  auto v = classify_v2(p, two_items);
  REQUIRE(v.outcome == store_outcome::confirmed);
  CHECK(v.env == environment::production);
  CHECK(p.kind == product_kind::product);
  CHECK(p.purchase_state == purchase_state::purchased);
  CHECK(p.quantity == 3);
  CHECK(p.consumed == true);
  CHECK(p.purchase_option_id == std::optional<std::string>("pack"));
  CHECK_FALSE(p.offer_id);
  CHECK(p.acknowledged == true);
  CHECK(p.latest_order_id == std::optional<std::string>("GPA.3301-0000-0000-00001"));
  CHECK(p.region_code == std::optional<std::string>("DE"));
  CHECK(p.purchase_time == 1756720800123);
  REQUIRE(p.line_items.size() == 2);
  CHECK(p.line_items[0].product_id == "premium");
  CHECK(p.line_items[0].offer_id == std::optional<std::string>("launch-offer"));
  CHECK(p.line_items[1].quantity == 3);
  // Stored and read back as they are.
  auto text = line_items_json(p.line_items);
  REQUIRE(text);
  CHECK(parse_line_items_json(*text) == p.line_items);
}

TEST_CASE("productsv2: the claimed product must be a line item; states by name",
          "[store_b][productsv2]") {
  play_purchase p;
  p.product_id = "gold";
  auto v = classify_v2(p, two_items);
  CHECK(v.outcome == store_outcome::rejected);
  CHECK(v.detail.find("\"premium\", not \"gold\"") != std::string::npos);

  auto state_of = [](const char* state) {
    play_purchase q;
    q.product_id = "premium";
    auto body = std::string(R"({"productLineItem":[{"productId":"premium"}],)")
      + R"("purchaseStateContext":{"purchaseState":")" + state + R"("},)"
      + R"("testPurchaseContext":{"fopType":"TEST"}})";
    auto verdict = classify_v2(q, body);
    CHECK(verdict.outcome == store_outcome::confirmed);
    CHECK(verdict.env == environment::sandbox);
    CHECK(q.line_items.empty()); // one product: nothing more to keep
    return q.purchase_state;
  };
  CHECK(state_of("PENDING") == purchase_state::pending);
  CHECK(state_of("CANCELLED") == purchase_state::cancelled);
  CHECK(state_of("PURCHASED") == purchase_state::purchased);
  CHECK(state_of("SOMETHING_NEW") == purchase_state::unknown);
}

TEST_CASE("a purchase order of two line items observes two purchases, keyed by token and "
          "token:product",
          "[store_b][productsv2][purchases]") {
  purchase_order_record r;
  r.id = "r1";
  r.app_id = "app";
  r.package_name = "com.ex";
  r.purchase_token = "tok";
  r.state = validation_state::validated;
  r.purchase.product_id = "gems_100";
  REQUIRE(classify_v2(r.purchase, two_items).outcome == store_outcome::confirmed);
  r.purchase.line_items[1].cost = {3980, "EUR", 630, std::nullopt};
  auto seen = purchases::observe(r, {});
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].key == "tok");
  CHECK(seen[0].product_id == std::optional<std::string>("premium"));
  CHECK(seen[0].quantity == std::optional<std::optional<int>>(1));
  CHECK_FALSE(seen[0].type);
  CHECK_FALSE(seen[0].price);
  CHECK(seen[1].key == "tok:gems_100");
  CHECK(seen[1].quantity == std::optional<std::optional<int>>(3));
  CHECK(seen[1].type == std::optional<std::optional<purchases::purchase_type>>(
          purchases::purchase_type::consumable));
  CHECK(seen[1].price == std::optional<std::optional<std::int64_t>>(3980));
  CHECK(seen[1].currency_code == std::optional<std::optional<std::string>>("EUR"));
  // Whichever product the upload names, the keys are the same.
  r.purchase.product_id = "premium";
  REQUIRE(classify_v2(r.purchase, two_items).outcome == store_outcome::confirmed);
  auto again = purchases::observe(r, {});
  REQUIRE(again.size() == 2);
  CHECK(again[0].key == "tok");
  CHECK(again[1].key == "tok:gems_100");
  // The purchase order's cost survives a new productsv2 answer.
  CHECK(r.purchase.line_items[1].cost.price == 3980);
}

TEST_CASE("Money as milliunits", "[store_b][orders]") {
  auto m = [](const char* text) {
    auto v = boost::json::parse(text);
    return money_milliunits(&v);
  };
  CHECK(m(R"({"currencyCode":"EUR","units":"1","nanos":990000000})") == 1990);
  CHECK(m(R"({"currencyCode":"EUR","units":12})") == 12000);
  CHECK(m(R"({"currencyCode":"EUR","nanos":500000})") == 0); // below a milliunit
  // An order's amounts are never negative (a refund is its own positive total).
  CHECK_FALSE(m(R"({"currencyCode":"EUR","units":"-1","nanos":-750000000})"));
  CHECK_FALSE(m(R"({"units":"1","nanos":-1})"));        // signs differ
  CHECK_FALSE(m(R"({"units":"1","nanos":1000000000})")); // nanos out of range
  CHECK_FALSE(m(R"({"units":"9223372036854775807"})"));  // overflows
  CHECK_FALSE(m(R"("1.99")"));
}

TEST_CASE("orders: an order's line items price each purchase; refunds are the order's",
          "[store_b][orders]") {
  auto order = parse_order(200, R"({
    "orderId": "GPA.1", "purchaseToken": "tok", "state": "PARTIALLY_REFUNDED",
    "total": {"currencyCode": "EUR", "units": "5", "nanos": 970000000},
    "tax": {"currencyCode": "EUR", "nanos": 950000000},
    "lineItems": [
      {"productId": "premium", "total": {"currencyCode": "EUR", "units": "1", "nanos": 990000000},
       "tax": {"currencyCode": "EUR", "nanos": 320000000}},
      {"productId": "gems_100", "total": {"currencyCode": "EUR", "units": "3", "nanos": 980000000},
       "tax": {"currencyCode": "EUR", "nanos": 630000000}}],
    "orderHistory": {"partialRefundEvents": [
      {"refundDetails": {"total": {"currencyCode": "EUR", "units": "1"}}},
      {"refundDetails": {"total": {"currencyCode": "EUR", "nanos": 500000000}}}]}})",
                           "");
  REQUIRE(order);
  CHECK(order->cost.price == 5970);
  CHECK(order->cost.refunded == 1500);
  play_purchase p;
  p.product_id = "premium";
  p.line_items = {{"premium", 1, 1, false, {}, {}, {}}, {"gems_100", 3, 3, true, {}, {}, {}}};
  CHECK(apply_order(p, *order, 42));
  CHECK(p.cost == play_price{1990, "EUR", 320, 1500});
  CHECK(p.line_items[1].cost == play_price{3980, "EUR", 630, 1500});
  CHECK(p.order_read_at == 42);
  CHECK_FALSE(apply_order(p, *order, 43)); // nothing new
  CHECK(p.order_read_at == 43);

  // One product: the order's total is its price, whatever the line item says.
  auto single = parse_order(200, R"({"orderId":"GPA.2","total":{"currencyCode":"USD","units":"9",)"
                                 R"("nanos":990000000},"orderHistory":{"refundEvent":{)"
                                 R"("refundDetails":{"total":{"currencyCode":"USD","units":"9",)"
                                 R"("nanos":990000000}}}}})",
                            "");
  REQUIRE(single);
  play_purchase q;
  q.product_id = "gold";
  apply_order(q, *single, 1);
  CHECK(q.cost == play_price{9990, "USD", std::nullopt, 9990});
}

TEST_CASE("orders: failures and batches", "[store_b][orders]") {
  CHECK(parse_order(404, "{}", "").err().code() == errc::not_found);
  CHECK(parse_order(503, "{}", "").err().code() == errc::store_unavailable);
  CHECK(parse_order(0, "", "timeout").err().message().find("no answer: timeout")
        != std::string::npos);
  CHECK_FALSE(parse_order(200, "[]", ""));
  CHECK_FALSE(parse_order(200, R"({"total":{}})", "")); // no orderId
  auto empty = parse_orders(200, "{}", "");
  REQUIRE(empty);
  CHECK(empty->empty());
  auto two = parse_orders(200, R"({"orders":[{"orderId":"a"},{"orderId":"b"}]})", "");
  REQUIRE(two);
  CHECK(two->size() == 2);
  CHECK_FALSE(parse_orders(200, R"({"orders":[{"orderId":"a"},{}]})", ""));
  CHECK(orders_batch_url("https://x.test/", "com.ex", {"GPA.1", "GPA 2"})
        == "https://x.test/androidpublisher/v3/applications/com.ex/orders:batchGet"
           "?orderIds=GPA.1&orderIds=GPA%202");
  CHECK(order_url("https://x.test", "com.ex", "GPA.1")
        == "https://x.test/androidpublisher/v3/applications/com.ex/orders/GPA.1");
}
