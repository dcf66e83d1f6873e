// The App Store Server API 1.15–1.21 transaction fields through the real binary
// on the database under test: confirmed by the emulator's Server API, stored,
// answered on the transaction and on its In-App Purchase; and a prorated refund,
// notified as Apple signs it (the suite's trusted Apple-shaped test chain), that
// revokes only its share.
#include <catch2/catch.hpp>

#include <chrono>

#include "harness.hpp"
#include "model/encoding.hpp"
#include "tests/support/crypto/test_jws.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* transactions = "/client/store_a/transactions";
constexpr std::int64_t day = 86400000;

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string fresh_uuid() {
  auto h = model::hex_encode(model::random_bytes(16));
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-"
    + h.substr(20);
}

// A notification as Apple signs it: `part` names the app ("data", "appData", …),
// with the nested signed transaction and renewal info when given.
struct notification_spec {
  std::string type;
  std::string subtype;
  std::string bundle;
  std::string part = "data";
  std::int64_t signed_date = now_ms();
  std::optional<test_support::transaction_fields> tx = std::nullopt;
  std::optional<json::object> renewal = std::nullopt;
  std::optional<int> status = std::nullopt;
};

std::string signed_payload(const notification_spec& n, const test_support::test_pki& pki) {
  json::object about{{"appAppleId", 1234567890}, {"bundleId", n.bundle}, {"environment", "Sandbox"}};
  if (n.tx)
    about["signedTransactionInfo"]
      = test_support::make_storekit_jws(test_support::transaction_payload_json(*n.tx), pki);
  if (n.renewal)
    about["signedRenewalInfo"] = test_support::make_storekit_jws(json::serialize(*n.renewal), pki);
  if (n.status)
    about["status"] = *n.status;
  json::object payload{{"notificationType", n.type}, {"notificationUUID", fresh_uuid()}};
  if (!n.subtype.empty())
    payload["subtype"] = n.subtype;
  payload[n.part] = std::move(about);
  payload["version"] = "2.0";
  payload["signedDate"] = n.signed_date;
  return test_support::make_storekit_jws(json::serialize(payload), pki);
}

http_response notify(suite& s, const test_app& app, const notification_spec& n) {
  return s.service.post("/notifications/store_a/" + app.id,
                        json::serialize(json::object{{"signedPayload", signed_payload(n, s.jws_pki)}}),
                        "");
}

json::value get_transaction(suite& s, const test_app& app, const std::string& record_id) {
  auto r = s.service.get(std::string(transactions) + "/" + record_id, app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

// A subscription bought yesterday for 30 days (so active now), as the emulator
// registers it and Apple would sign it.
json::object current_subscription(const storekit_app& app, const std::string& id) {
  const auto bought = now_ms() - day;
  return json::object{{"transaction_id", id},
                      {"bundle_id", app.bundle_id},
                      {"product_id", app.bundle_id + ".monthly"},
                      {"environment", "Sandbox"},
                      {"purchase_date_ms", bought},
                      {"expires_date_ms", bought + 30 * day}};
}

// The same transaction as a notification's signedTransactionInfo.
test_support::transaction_fields as_signed(const json::object& registered) {
  test_support::transaction_fields t;
  t.transaction_id = t.original_transaction_id = str(registered.at("transaction_id"));
  t.bundle_id = str(registered.at("bundle_id"));
  t.product_id = str(registered.at("product_id"));
  t.purchase_date = t.original_purchase_date = registered.at("purchase_date_ms").to_number<std::int64_t>();
  if (const auto* expires = registered.if_contains("expires_date_ms"))
    t.expires_date = expires->to_number<std::int64_t>();
  if (const auto* type = registered.if_contains("type"))
    t.type = str(*type);
  return t;
}

json::value upload(suite& s, const test_app& app, const std::string& jws, int expect) {
  auto r = s.service.post(transactions, transaction_body(jws), app.token);
  INFO(r.body);
  REQUIRE(r.status == expect);
  return r.json();
}

} // namespace

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
