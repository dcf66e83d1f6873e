// The stores' refund requests answered: the bodies (model/purchases/refund_request.hpp).
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/purchases/refund_request.hpp"

using namespace receiptd::model;
using namespace receiptd::model::purchases;
namespace json = boost::json;

namespace {

refund_settings settings(refund_preference p, bool consent = true) {
  refund_settings s;
  s.preference = p;
  s.customer_consent = consent;
  return s;
}

} // namespace

TEST_CASE("refund preferences by name", "[refund]") {
  CHECK(parse_refund_preference("grant-prorated") == refund_preference::grant_prorated);
  CHECK(parse_refund_preference("none") == refund_preference::none);
  CHECK_FALSE(parse_refund_preference("GRANT"));
  CHECK(to_string(refund_preference::decline) == "decline");
}

TEST_CASE("Apple: no answer without a preference or the customer's consent", "[refund]") {
  refund_facts delivered{true, false};
  auto none = store_a_consumption_body(settings(refund_preference::none), delivered, {});
  CHECK_FALSE(none.body);
  CHECK(none.skipped == "preference_none");
  // Apple refuses customerConsented other than true: nothing of the customer's is sent.
  auto no_consent
    = store_a_consumption_body(settings(refund_preference::decline, false), delivered, {});
  CHECK_FALSE(no_consent.body);
  CHECK(no_consent.skipped == "no_consent");
}

TEST_CASE("Apple: the v2 body from the records and the backend's report", "[refund]") {
  SECTION("receiptd's records alone: delivered, no percentage") {
    auto a = store_a_consumption_body(settings(refund_preference::decline), {true, false}, {});
    REQUIRE(a.body);
    CHECK(json::serialize(*a.body)
          == R"({"customerConsented":true,"deliveryStatus":"DELIVERED",)"
             R"("sampleContentProvided":false,"refundPreference":"DECLINE"})");
  }
  SECTION("revoked or never validated: undelivered, percentage 0") {
    auto a = store_a_consumption_body(settings(refund_preference::grant), {false, false}, {});
    REQUIRE(a.body);
    CHECK(a.body->at("deliveryStatus") == "UNDELIVERED_OTHER");
    CHECK(a.body->at("consumptionPercentage") == 0);
    CHECK(a.body->at("refundPreference") == "GRANT_FULL");
  }
  SECTION("the backend's report wins") {
    consumption_report r;
    r.consumption_milliunits = 45200;
    r.delivery_status = "DELIVERED";
    r.sample_content_provided = true;
    auto a = store_a_consumption_body(settings(refund_preference::grant_prorated), {false, false}, r);
    REQUIRE(a.body);
    CHECK(a.body->at("deliveryStatus") == "DELIVERED");
    CHECK(a.body->at("consumptionPercentage") == 45200);
    CHECK(a.body->at("sampleContentProvided") == true);
    CHECK(a.body->at("refundPreference") == "GRANT_PRORATED");
  }
  SECTION("an auto-renewable subscription with GRANT_PRORATED: Apple computes the share") {
    consumption_report r;
    r.consumption_milliunits = 30000;
    auto a = store_a_consumption_body(settings(refund_preference::grant_prorated), {true, true}, r);
    REQUIRE(a.body);
    CHECK_FALSE(a.body->contains("consumptionPercentage"));
  }
  SECTION("undelivered by the backend's word: percentage 0 whatever it said") {
    consumption_report r;
    r.consumption_milliunits = 30000;
    r.delivery_status = "UNDELIVERED_SERVER_OUTAGE";
    auto a = store_a_consumption_body(settings(refund_preference::decline), {true, false}, r);
    REQUIRE(a.body);
    CHECK(a.body->at("consumptionPercentage") == 0);
  }
}

TEST_CASE("Play: the orders.reviewrefund body", "[refund]") {
  consumption_report r;
  r.consumption_milliunits = 100000;
  auto a = store_b_review_body(settings(refund_preference::decline, false), {true, false}, r, "prt-1");
  REQUIRE(a.body); // Play asks for no consent
  CHECK(json::serialize(*a.body)
        == R"({"pendingRefundToken":"prt-1","sampleContentProvided":false,)"
           R"("refundPreference":"DECLINE","consumptionPercentageMilliunits":100000})");
  CHECK(store_b_review_body(settings(refund_preference::grant), {}, {}, "t").body->at(
          "refundPreference")
        == "APPROVE");
  CHECK(store_b_review_body(settings(refund_preference::grant_prorated), {}, {}, "t").body->at(
          "refundPreference")
        == "NEUTRAL");
  CHECK_FALSE(store_b_review_body(settings(refund_preference::none), {}, {}, "t").body);
}

TEST_CASE("the backend's consumption report", "[refund]") {
  auto r = parse_consumption_report(
    R"({"consumption_percentage":45.2,"delivery_status":"undelivered_wrong_item","sample_content_provided":true})");
  REQUIRE(r);
  CHECK(r->consumption_milliunits == 45200);
  CHECK(r->delivery_status == "UNDELIVERED_WRONG_ITEM");
  CHECK(r->sample_content_provided == true);
  auto back = read_consumption_report(to_json_text(*r));
  CHECK(back.consumption_milliunits == 45200);
  CHECK(back.delivery_status == "UNDELIVERED_WRONG_ITEM");

  auto field_of = [](std::string_view body) {
    auto parsed = parse_consumption_report(body);
    REQUIRE_FALSE(parsed);
    return parsed.errors().front().field;
  };
  CHECK(field_of(R"({"consumption_percentage":101})") == "consumption_percentage");
  CHECK(field_of(R"({"consumption_percentage":"50"})") == "consumption_percentage");
  CHECK(field_of(R"({"delivery_status":"lost"})") == "delivery_status");
  CHECK(field_of(R"({"sample_content_provided":1})") == "sample_content_provided");
  CHECK(field_of(R"({"other":1})") == "other");
  CHECK(field_of("{}") == "");
  CHECK(field_of("[1]") == "");
  CHECK(parse_consumption_report(R"({"consumption_percentage":null})"));
}

TEST_CASE("a refund request's deadline and its resource", "[refund]") {
  auto a = new_refund_request("r1", "app", "p1", "store_a", "sandbox", "t1", 5000, 1000);
  CHECK(a.deadline_at == 1000 + store_a_answer_window_ms);
  auto b = new_refund_request("r2", "app", "p1", "store_b", "production", "GPA.1", 5000, std::nullopt);
  CHECK(b.deadline_at == 5000 + store_b_answer_window_ms);
  a.sent = R"({"customerConsented":true})";
  a.state = "answered";
  a.answered_at = 6000;
  a.store_status = 202;
  auto o = json::parse(refund_request_text(a)).as_object();
  CHECK(o.at("state") == "answered");
  CHECK(o.at("sent").at("customerConsented") == true);
  CHECK(o.at("answered_at").at("ms") == 6000);
  CHECK(o.at("store_status") == 202);
  CHECK(store_a_consumption_url("https://api.storekit.apple.com/", "2000 1")
        == "https://api.storekit.apple.com/inApps/v2/transactions/consumption/2000%201");
  CHECK(store_b_review_url("https://androidpublisher.googleapis.com", "com.x", "GPA.1-2")
        == "https://androidpublisher.googleapis.com/androidpublisher/v3/applications/com.x/"
           "orders/GPA.1-2:reviewrefund");
}
