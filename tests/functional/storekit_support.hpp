#pragma once
// What the StoreKit 2 functional tests share: App Store notifications signed as
// Apple signs them (with the suite's trusted Apple-shaped test chain), transactions
// registered with the emulator and the same ones as signed transactions, uploads
// and reads of the transaction resource.
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <string>

#include "harness.hpp"
#include "model/encoding.hpp"
#include "tests/support/crypto/test_jws.hpp"

namespace receiptd::test::storekit {

namespace json = boost::json;
inline constexpr const char* transactions = "/client/store_a/transactions";
inline constexpr std::int64_t day = 86400000;

inline std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

inline std::string fresh_uuid() {
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

inline std::string signed_payload(const notification_spec& n, const test_support::test_pki& pki) {
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

inline http_response notify(suite& s, const test_app& app, const notification_spec& n) {
  return s.service.post("/notifications/store_a/" + app.id,
                        json::serialize(json::object{{"signedPayload", signed_payload(n, s.jws_pki)}}),
                        "");
}

inline json::value get_transaction(suite& s, const test_app& app, const std::string& record_id) {
  auto r = s.service.get(std::string(transactions) + "/" + record_id, app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

// A subscription bought yesterday for 30 days (so active now), as the emulator
// registers it and Apple would sign it.
inline json::object current_subscription(const storekit_app& app, const std::string& id) {
  const auto bought = now_ms() - day;
  return json::object{{"transaction_id", id},
                      {"bundle_id", app.bundle_id},
                      {"product_id", app.bundle_id + ".monthly"},
                      {"environment", "Sandbox"},
                      {"purchase_date_ms", bought},
                      {"expires_date_ms", bought + 30 * day}};
}

// The same transaction as a notification's signedTransactionInfo.
inline test_support::transaction_fields as_signed(const json::object& registered) {
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

inline json::value upload(suite& s, const test_app& app, const std::string& jws, int expect) {
  auto r = s.service.post(transactions, transaction_body(jws), app.token);
  INFO(r.body);
  REQUIRE(r.status == expect);
  return r.json();
}

} // namespace receiptd::test::storekit
