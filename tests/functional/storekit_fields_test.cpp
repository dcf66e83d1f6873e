// The App Store Server API 1.15–1.21 transaction fields through the real binary
// on the database under test: confirmed by the emulator's Server API, stored,
// answered on the transaction and on its In-App Purchase; and a prorated refund,
// notified as Apple signs it (the suite's trusted Apple-shaped test chain), that
// revokes only its share.
#include <catch2/catch.hpp>

#include "storekit_support.hpp"

using namespace receiptd;
using namespace receiptd::test;
using namespace receiptd::test::storekit;
namespace json = boost::json;

TEST_CASE("App Store Server API 1.15–1.21 fields: stored, on the record and its purchase",
          "[storekit2][api_2026]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("fields"));
  auto id = fresh_transaction_id();
  auto f = current_subscription(app, id);
  // A win-back offer paid up front for three months, on a monthly plan with a
  // 12-month commitment (JWSTransactionDecodedPayload's names).
  f["payload_extra"] = json::object{{"appTransactionId", "704289572311513217"},
                                    {"offerType", 4},
                                    {"offerDiscountType", "PAY_UP_FRONT"},
                                    {"offerPeriod", "P3M"},
                                    {"billingPlanType", "MONTHLY"},
                                    {"commitmentInfo",
                                     {{"billingPeriodNumber", 2},
                                      {"totalBillingPeriods", 12},
                                      {"commitmentExpiresDate", now_ms() + 300 * day},
                                      {"commitmentPrice", 119880}}}};
  auto answered = upload(s, app, register_transaction(s, f), 200);
  const auto record_id = str(answered.at("id"));

  // Read back from the database, not the upload's own answer.
  for (const auto& t : {answered, get_transaction(s, app, record_id)}) {
    CHECK(str(t.at("app_transaction_id")) == "704289572311513217");
    CHECK(t.at("offer_type") == 4);
    CHECK(str(t.at("offer_discount_type")) == "PAY_UP_FRONT");
    CHECK(str(t.at("offer_period")) == "P3M");
    CHECK(str(t.at("billing_plan_type")) == "MONTHLY");
    CHECK(t.at("commitment_info").at("billing_period_number") == 2);
    CHECK(t.at("commitment_info").at("total_billing_periods") == 12);
    CHECK(t.at("commitment_info").at("commitment_price") == 119880);
    CHECK(t.at("revocation_type").is_null());
    const auto& p = t.at("in_app_purchase");
    CHECK(str(p.at("offer_type")) == "win_back");
    CHECK(str(p.at("offer_discount_type")) == "pay_up_front");
    CHECK(str(p.at("offer_period")) == "P3M");
    CHECK(str(p.at("billing_plan_type")) == "monthly");
    CHECK(str(p.at("app_transaction_id")) == "704289572311513217");
    CHECK(p.at("commitment").at("billing_period_number") == 2);
    CHECK(p.at("commitment").at("price") == 119880);
    CHECK(p.at("is_active") == true);
  }
  auto purchase = s.service.get("/client/in_app_purchases/"
                                  + str(answered.at("in_app_purchase").at("id")),
                                app.token);
  INFO(purchase.body);
  REQUIRE(purchase.status == 200);
  const auto resource = purchase.json().at("in_app_purchase");
  CHECK(str(resource.at("offer_type")) == "win_back");
  CHECK(resource.at("commitment").at("total_billing_periods") == 12);
}

TEST_CASE("a prorated refund revokes only its share: the purchase stays active; a full one "
          "ends it",
          "[notifications][storekit2][api_2026]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("prorated"));
  auto id = fresh_transaction_id();
  auto f = current_subscription(app, id);
  auto record_id = str(upload(s, app, register_transaction(s, f), 200).at("id"));

  notification_spec refund{"REFUND", "", app.bundle_id};
  refund.tx = as_signed(f);
  refund.tx->revocation_date = now_ms() - 3600'000;
  refund.tx->revocation_reason = 0;
  refund.tx->extra = {{"revocationType", "REFUND_PRORATED"}, {"revocationPercentage", 40000}};
  refund.signed_date = now_ms() + 1000; // after the Server API's answer
  refund.tx->signed_date = refund.signed_date;
  auto r = notify(s, app, refund);
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.json().at("records_changed") == 1);

  auto t = get_transaction(s, app, record_id);
  CHECK(t.at("revocation_date").at("ms") == *refund.tx->revocation_date);
  CHECK(str(t.at("revocation_type")) == "REFUND_PRORATED");
  CHECK(t.at("revocation_percentage") == 40000);
  const auto& p = t.at("in_app_purchase");
  CHECK(p.at("revoked_at").at("ms") == *refund.tx->revocation_date);
  CHECK(str(p.at("revocation_type")) == "refund_prorated");
  CHECK(p.at("revocation_percentage") == 40000);
  CHECK(p.at("is_active") == true);

  // Apple refunds the rest: the whole of it is revoked.
  notification_spec full = refund;
  full.tx->extra = {{"revocationType", "REFUND_FULL"}, {"revocationPercentage", 100000}};
  full.signed_date = refund.signed_date + 1000;
  full.tx->signed_date = full.signed_date;
  r = notify(s, app, full);
  INFO(r.body);
  REQUIRE(r.status == 200);
  t = get_transaction(s, app, record_id);
  CHECK(str(t.at("revocation_type")) == "REFUND_FULL");
  CHECK(str(t.at("in_app_purchase").at("revocation_type")) == "refund_full");
  CHECK(t.at("in_app_purchase").at("is_active") == false);
}
