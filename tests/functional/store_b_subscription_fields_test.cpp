// Play subscriptionsv2 line item fields since 2024 through the real binary on
// the database under test: latestSuccessfulOrderId (the deprecated
// latestOrderId only when absent), offerPhase, prepaid plans, installment plans
// and deferred replacements, as the emulator's Play Developer API answers them,
// kept on the purchase order and read by its In-App Purchase.
#include <catch2/catch.hpp>

#include "harness.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";

// A subscription whose line item carries `line_item` (merged into the
// emulator's own), uploaded and validated: its in_app_purchase.
json::value uploaded(suite& s, const std::string& package, const test_app& app,
                     const json::object& line_item, const std::string& order_id) {
  auto token = unique("tok");
  s.emulator.control("POST", "/control/store_b/purchases",
                     json::object{{"package_name", package},
                                  {"product_id", "gold"},
                                  {"token", token},
                                  {"kind", "subscription"},
                                  {"order_id", order_id},
                                  {"line_item", line_item}});
  auto data = purchase_data_json(package, "gold", token, true);
  auto r = s.service.post(orders, store_b_body(data, sign_purchase(data)), app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  auto id = str(r.json().at("id"));
  // As stored: read back, not the upload's own answer.
  auto got = s.service.get(std::string(orders) + "/" + id, app.token);
  INFO(got.body);
  REQUIRE(got.status == 200);
  return got.json().at("in_app_purchase");
}

} // namespace

TEST_CASE("subscriptionsv2 line item fields are kept on the purchase order and its purchase",
          "[store_b][subscriptions]") {
  auto& s = the_suite();
  auto package = unique_package("sub-fields");
  auto app = create_store_b_app(s, package, test_licence_key());

  SECTION("an installment plan in its introductory phase, with a deferred replacement") {
    auto p = uploaded(
      s, package, app,
      json::object{
        {"latestSuccessfulOrderId", "GPA.3300-0000-0000-00001..2"},
        {"offerPhase", json::object{{"introductoryPrice", json::object{}}}},
        {"autoRenewingPlan",
         json::object{{"autoRenewEnabled", true},
                      {"installmentDetails",
                       json::object{{"initialCommittedPaymentsCount", 12},
                                    {"subsequentCommittedPaymentsCount", 12},
                                    {"remainingCommittedPaymentsCount", 10},
                                    {"pendingCancellation", json::object{}}}}}},
        {"deferredItemReplacement", json::object{{"productId", "gold.yearly"}}}},
      "GPA.3300-0000-0000-00001");
    CHECK(str(p.at("latest_order_id")) == "GPA.3300-0000-0000-00001..2");
    CHECK(str(p.at("offer_phase")) == "introductory_price");
    CHECK(p.at("prepaid") == false);
    CHECK(p.at("auto_renewing") == true);
    CHECK(p.at("allow_extend_after").is_null());
    CHECK(p.at("installments")
          == json::value{{"initial_committed_payments", 12},
                         {"subsequent_committed_payments", 12},
                         {"remaining_committed_payments", 10},
                         {"pending_cancellation", true}});
    CHECK(str(p.at("deferred_replacement_product_id")) == "gold.yearly");
    // The In-App Purchase: its terms, and cancelled (it ends with its commitment).
    CHECK(str(p.at("billing_plan_type")) == "installments");
    CHECK(p.at("commitment").at("total_billing_periods") == 12);
    CHECK(p.at("commitment").at("billing_period_number") == 2);
    CHECK(p.at("in_intro_period") == true);
    CHECK_FALSE(p.at("canceled_at").is_null());
    CHECK(p.at("is_active") == true);
  }

  SECTION("a prepaid plan never renews, and may be topped up after a time") {
    auto p = uploaded(s, package, app,
                      json::object{{"autoRenewingPlan", nullptr},
                                   {"prepaidPlan", json::object{{"allowExtendAfterTime",
                                                                 "2030-01-01T00:00:00Z"}}}},
                      "GPA.3300-0000-0000-00002");
    CHECK(p.at("prepaid") == true);
    CHECK(p.at("auto_renewing") == false);
    CHECK(p.at("allow_extend_after").at("ms") == 1893456000000);
    CHECK(p.at("installments").is_null());
    CHECK(str(p.at("billing_plan_type")) == "prepaid");
    CHECK(p.at("is_auto_renewing") == false);
  }

  SECTION("without latestSuccessfulOrderId, the deprecated latestOrderId") {
    auto p = uploaded(s, package, app, json::object{{"latestSuccessfulOrderId", nullptr}},
                      "GPA.3300-0000-0000-00003");
    CHECK(str(p.at("latest_order_id")) == "GPA.3300-0000-0000-00003");
    CHECK(p.at("offer_phase").is_null());
    CHECK(p.at("prepaid") == false);
    CHECK(p.at("billing_plan_type").is_null());
  }
}
