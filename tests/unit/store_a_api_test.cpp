// verifyReceipt: every status class of DESIGN.md §2, the 21007/21008 flip, and
// enrichment of in-app purchases from a real answer.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include "model/encoding.hpp"
#include "model/store_a/receipt.hpp"
#include "model/store_a/receipt_record.hpp"
#include "model/store_a/verify_receipt_api.hpp"
#include "test_files.hpp"

using namespace receiptd::model;
using namespace receiptd::model::store_a;
using receiptd::test::data_file;

namespace {

store_outcome outcome_of(int http, const std::string& body,
                         verify_endpoint at = verify_endpoint::production) {
  return classify_verify_receipt(http, body, "", at).verdict.outcome;
}

std::string status_body(int status) {
  return "{\"status\":" + std::to_string(status) + "}";
}

} // namespace

TEST_CASE("verifyReceipt status classes", "[store_a][api][status]") {
  CHECK(outcome_of(200, status_body(0)) == store_outcome::confirmed);
  CHECK(outcome_of(200, status_body(21006)) == store_outcome::confirmed);
  CHECK(outcome_of(200, status_body(21003)) == store_outcome::rejected);
  CHECK(outcome_of(200, status_body(21010)) == store_outcome::rejected);
  for (int s : {21000, 21001, 21002, 21005, 21009, 21100, 21150, 21199, 21999})
    CHECK(outcome_of(200, status_body(s)) == store_outcome::unreachable);
  auto secret = classify_verify_receipt(200, status_body(21004), "", verify_endpoint::production);
  CHECK(secret.verdict.outcome == store_outcome::unreachable);
  CHECK(secret.verdict.operator_problem);
  CHECK(outcome_of(200, R"({"status":21199,"is-retryable":true})") == store_outcome::unreachable);
  CHECK(outcome_of(200, R"({"status":21003,"is_retryable":true})") == store_outcome::unreachable);
  CHECK(outcome_of(500, "") == store_outcome::unreachable);
  CHECK(outcome_of(503, status_body(0)) == store_outcome::unreachable);
  CHECK(outcome_of(200, "<html><body>maintenance</body></html>") == store_outcome::unreachable);
  CHECK(outcome_of(200, "{}") == store_outcome::unreachable);
  CHECK(outcome_of(0, "") == store_outcome::unreachable);
  CHECK(
    outcome_of(200, data_file("responses/apple-verifyReceipt/aporat-status-21002-malformed.json"))
    == store_outcome::unreachable);
}

TEST_CASE("21007 and 21008 name the other endpoint", "[store_a][api][flip]") {
  auto a = classify_verify_receipt(200, status_body(21007), "", verify_endpoint::production);
  CHECK(a.retry_on == verify_endpoint::sandbox);
  auto b = classify_verify_receipt(200, status_body(21008), "", verify_endpoint::sandbox);
  CHECK(b.retry_on == verify_endpoint::production);
  CHECK_FALSE(
    classify_verify_receipt(200, status_body(0), "", verify_endpoint::production).retry_on);
}

TEST_CASE("the store's environment wins, else the endpoint that answered", "[store_a][api]") {
  auto v = classify_verify_receipt(200, R"({"status":0,"environment":"Sandbox"})", "",
                                   verify_endpoint::production);
  CHECK(v.verdict.env == environment::sandbox);
  v = classify_verify_receipt(200, status_body(0), "", verify_endpoint::sandbox);
  CHECK(v.verdict.env == environment::sandbox);
  v = classify_verify_receipt(200, R"({"status":0,"environment":"Production"})", "",
                              verify_endpoint::sandbox);
  CHECK(v.verdict.env == environment::production);
}

TEST_CASE("the request body", "[store_a][api]") {
  auto b = boost::json::parse(verify_receipt_body("AAAA", "secret", true));
  CHECK(b.at("receipt-data") == "AAAA");
  CHECK(b.at("password") == "secret");
  CHECK(b.at("exclude-old-transactions") == true);
  CHECK_FALSE(
    boost::json::parse(verify_receipt_body("AAAA", "", false)).as_object().contains("password"));
}

TEST_CASE("the real RevenueCat answer enriches the real RevenueCat receipt",
          "[store_a][api][vectors]") {
  auto bytes
    = *base64_decode(data_file("apple-unified/revenuecat-sample1-sandbox-ios/receipt.b64"));
  auto decoded = decode_receipt(bytes);
  REQUIRE(decoded);
  auto purchases = decoded->in_app;
  REQUIRE(purchases.size() == 9);
  auto body = data_file("responses/apple-verifyReceipt/revenuecat-verifyReceiptSample1.json");
  auto v = classify_verify_receipt(200, body, "", verify_endpoint::sandbox);
  CHECK(v.verdict.outcome == store_outcome::confirmed);
  CHECK(v.verdict.env == environment::sandbox);
  enrich_in_app(purchases, body);
  int with_expiry = 0, with_trial_flag = 0;
  for (const auto& p : purchases) {
    with_expiry += p.expires_date.has_value();
    with_trial_flag += p.is_trial_period.has_value();
  }
  CHECK(with_expiry == 9);
  CHECK(with_trial_flag == 9);
}

TEST_CASE("a transaction receipt's answer enriches its one purchase", "[store_a][api]") {
  apple_in_app_purchase p;
  p.transaction_id = "1000000181298734";
  std::vector<apple_in_app_purchase> purchases{p};
  enrich_in_app(purchases, R"({"status":0,"receipt":{"transaction_id":"1000000181298734",
    "expires_date":"1448346881000","is_trial_period":"false","web_order_line_item_id":"1000000030938713"}})");
  CHECK(purchases[0].expires_date == 1448346881000);
  CHECK(purchases[0].is_trial_period == false);
  CHECK(purchases[0].web_order_line_item_id == std::string("1000000030938713"));
}

TEST_CASE("store verdicts on a receipt record", "[store_a][status]") {
  receipt_record r;
  r.env = environment::production;
  apple_in_app_purchase p;
  p.product_id = "x";
  store_verdict v;
  v.outcome = store_outcome::confirmed;
  v.env = environment::sandbox;
  apply_store_verdict(r, v, {p});
  CHECK(r.state == validation_state::validated);
  CHECK(r.env == environment::sandbox);
  CHECK(r.in_app_purchases.size() == 1);
  v.outcome = store_outcome::rejected;
  apply_store_verdict(r, v, {});
  CHECK(r.state == validation_state::rejected);
  CHECK(r.fraud == fraud_reason::store_rejected);
  v.outcome = store_outcome::unreachable;
  receipt_record pending;
  apply_store_verdict(pending, v, {});
  CHECK(pending.state == validation_state::pending);
  CHECK_FALSE(pending.is_fraud());
}
