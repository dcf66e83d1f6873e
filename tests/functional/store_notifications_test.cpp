// App Store Server Notifications V2 through the real binary: signed
// with an Apple-shaped test chain the suite's receiptd trusts (forgeries with one
// it does not), applied to StoreKit 2 transactions and receipts on the database
// under test, idempotently, answering only after the commit.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "model/encoding.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* transactions = "/client/store_a/transactions";

std::string fresh_uuid() {
  auto h = model::hex_encode(model::random_bytes(16));
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-"
    + h.substr(20);
}

constexpr std::int64_t june_2024 = 1717243200000; // 2024-06-01T12:00:00Z
constexpr std::int64_t day = 86400000;

// A transaction as Apple signs it inside a notification.
test_support::transaction_fields transaction(const std::string& bundle, const std::string& id,
                                             const std::string& original) {
  test_support::transaction_fields t;
  t.transaction_id = id;
  t.original_transaction_id = original;
  t.bundle_id = bundle;
  t.product_id = bundle + ".monthly";
  t.purchase_date = june_2024;
  t.original_purchase_date = june_2024;
  t.expires_date = june_2024 + 30 * day;
  t.signed_date = june_2024 + 1000;
  return t;
}

struct notification_spec {
  notification_spec(std::string t, std::string sub, std::string b)
    : type(std::move(t)), subtype(std::move(sub)), bundle(std::move(b)) {}
  std::string type;
  std::string subtype;
  std::string bundle;
  std::string uuid = fresh_uuid();
  std::int64_t signed_date = june_2024 + 40 * day;
  std::optional<test_support::transaction_fields> tx;
  std::optional<json::object> renewal;
  std::optional<int> status;
};

// The signedPayload, signed by `pki`'s leaf (nested JWS too).
std::string signed_payload(const notification_spec& n, const test_support::test_pki& pki) {
  json::object data{{"appAppleId", 1234567890},
                    {"bundleId", n.bundle},
                    {"bundleVersion", "1"},
                    {"environment", "Sandbox"}};
  if (n.tx)
    data["signedTransactionInfo"]
      = test_support::make_storekit_jws(test_support::transaction_payload_json(*n.tx), pki);
  if (n.renewal)
    data["signedRenewalInfo"] = test_support::make_storekit_jws(json::serialize(*n.renewal), pki);
  if (n.status)
    data["status"] = *n.status;
  json::object payload{{"notificationType", n.type}};
  if (!n.subtype.empty())
    payload["subtype"] = n.subtype;
  payload["notificationUUID"] = n.uuid;
  payload["data"] = std::move(data);
  payload["version"] = "2.0";
  payload["signedDate"] = n.signed_date;
  return test_support::make_storekit_jws(json::serialize(payload), pki);
}

std::string path_for(const test_app& app) {
  return "/notifications/store_a/" + app.id;
}

http_response notify(suite& s, const test_app& app, const std::string& jws) {
  return s.service.post(path_for(app), json::serialize(json::object{{"signedPayload", jws}}), "");
}

json::value get_transaction(suite& s, const test_app& app, const std::string& record_id) {
  auto r = s.service.get(std::string(transactions) + "/" + record_id, app.token);
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.json();
}

std::string code_of(const json::value& v) {
  return str(v.at("errors").at(0).at("code"));
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

} // namespace

TEST_CASE("a refund notification revokes the StoreKit 2 transaction, not as fraud, once",
          "[notifications][storekit2]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("refund"));
  auto id = fresh_transaction_id();
  auto record = upload_confirmed_transaction(s, app, id);
  auto record_id = str(record.at("id"));
  CHECK(record.at("revocation_date").is_null());

  notification_spec n{"REFUND", "", app.bundle_id};
  n.tx = transaction(app.bundle_id, id, id);
  n.tx->revocation_date = june_2024 + 10 * day;
  n.tx->revocation_reason = 1;
  n.tx->signed_date = june_2024 + 10 * day + 5;
  auto jws = signed_payload(n, s.jws_pki);

  auto r = notify(s, app, jws);
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(str(r.json().at("status")) == "applied");
  CHECK(r.json().at("records_changed") == 1);

  auto after = get_transaction(s, app, record_id);
  CHECK(after.at("revocation_date").at("ms") == june_2024 + 10 * day);
  CHECK(after.at("revocation_reason") == 1);
  CHECK(after.at("is_fraud") == false);
  CHECK(str(after.at("validation_state")) == "validated");

  // Apple retries until it gets a 200: the same notification again changes nothing.
  auto again = notify(s, app, jws);
  INFO(again.body);
  REQUIRE(again.status == 200);
  CHECK(str(again.json().at("status")) == "duplicate");
  CHECK(again.json().at("records_changed") == 0);
  CHECK(get_transaction(s, app, record_id).at("updated_at") == after.at("updated_at"));
}

TEST_CASE("forged, foreign and malformed notifications change nothing",
          "[notifications][hostile]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("forged"));
  auto id = fresh_transaction_id();
  auto record_id = str(upload_confirmed_transaction(s, app, id).at("id"));
  auto before = get_transaction(s, app, record_id);

  notification_spec n{"REFUND", "", app.bundle_id};
  n.tx = transaction(app.bundle_id, id, id);
  n.tx->revocation_date = june_2024 + 10 * day;
  n.tx->revocation_reason = 0;

  SECTION("signed by a chain receiptd does not trust") {
    auto r = notify(s, app, signed_payload(n, s.rogue_jws_pki));
    INFO(r.body);
    CHECK(r.status == 401);
    CHECK(code_of(r.json()) == "unauthorized");
  }
  SECTION("a trusted outer JWS around a forged transaction") {
    notification_spec forged = n;
    auto outer_pki = &s.jws_pki;
    // The nested transaction signed by the rogue chain, the envelope by the trusted one.
    json::object data{{"bundleId", app.bundle_id},
                      {"environment", "Sandbox"},
                      {"signedTransactionInfo",
                       test_support::make_storekit_jws(
                         test_support::transaction_payload_json(*forged.tx), s.rogue_jws_pki)}};
    json::object payload{{"notificationType", "REFUND"},
                         {"notificationUUID", fresh_uuid()},
                         {"data", data},
                         {"version", "2.0"},
                         {"signedDate", june_2024 + 40 * day}};
    auto r = notify(s, app, test_support::make_storekit_jws(json::serialize(payload), *outer_pki));
    INFO(r.body);
    CHECK(r.status == 401);
  }
  SECTION("for another app's bundle id") {
    notification_spec foreign = n;
    foreign.bundle = "com.example.someone-else";
    foreign.tx->bundle_id = "com.example.someone-else";
    auto r = notify(s, app, signed_payload(foreign, s.jws_pki));
    INFO(r.body);
    CHECK(r.status == 401);
  }
  SECTION("for an app that does not exist") {
    test_app nobody = app;
    nobody.id = "00000000-0000-4000-8000-000000000000";
    auto r = notify(s, nobody, signed_payload(n, s.jws_pki));
    CHECK(r.status == 404);
    CHECK(code_of(r.json()) == "not_found");
  }
  SECTION("bodies that are not {\"signedPayload\": JWS}") {
    for (std::string body : {"", "{", "[]", "{}", R"({"signedPayload":7})",
                             R"({"signedPayload":"not a jws"})", R"({"signed_payload":"a.b.c"})"}) {
      auto r = s.service.post(path_for(app), body, "");
      INFO(body << " → " << r.body);
      CHECK(r.status == 400);
      CHECK(code_of(r.json()).size() > 0);
    }
  }
  SECTION("GET is not allowed") {
    CHECK(s.service.get(path_for(app), "").status == 405);
  }
  auto after = get_transaction(s, app, record_id);
  CHECK(after == before);
}

TEST_CASE("a flood of forged notifications writes a line a minute, not one each",
          "[notifications][hostile][log]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("flood"));
  notification_spec n{"REFUND", "", app.bundle_id};
  n.tx = transaction(app.bundle_id, fresh_transaction_id(), fresh_transaction_id());
  for (int i = 0; i < 50; ++i) {
    n.uuid = fresh_uuid();
    auto r = notify(s, app, signed_payload(n, s.rogue_jws_pki));
    INFO(r.body);
    REQUIRE(r.status == 401);
  }
  // Each refusal is logged (or left out) before it is answered.
  CHECK(count_of(s.service.log(), "store notification refused for app " + app.id) == 1);
}

TEST_CASE("a TEST notification is answered and changes nothing", "[notifications]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("test-notification"));
  notification_spec n{"TEST", "", app.bundle_id};
  auto r = notify(s, app, signed_payload(n, s.jws_pki));
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.json().at("records_changed") == 0);
}

TEST_CASE("subscription notifications keep the subscription's state and expiry",
          "[notifications][storekit2]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("renew"));
  auto original = fresh_transaction_id();
  auto record_id = str(upload_confirmed_transaction(s, app, original).at("id"));
  auto signed_at = june_2024 + 31 * day;

  // DID_RENEW: a new transaction of the same subscription, a month later.
  notification_spec renew{"DID_RENEW", "", app.bundle_id};
  renew.tx = transaction(app.bundle_id, fresh_transaction_id(), original);
  renew.tx->purchase_date = june_2024 + 30 * day;
  renew.tx->expires_date = june_2024 + 60 * day;
  renew.renewal = json::object{{"originalTransactionId", original},
                               {"autoRenewProductId", app.bundle_id + ".monthly"},
                               {"productId", app.bundle_id + ".monthly"},
                               {"autoRenewStatus", 1},
                               {"signedDate", signed_at},
                               {"environment", "Sandbox"}};
  renew.status = 1;
  renew.signed_date = signed_at;
  auto r = notify(s, app, signed_payload(renew, s.jws_pki));
  INFO(r.body);
  REQUIRE(r.status == 200);
  auto t = get_transaction(s, app, record_id);
  CHECK(str(t.at("subscription_status")) == "active");
  CHECK(t.at("subscription_expires_date").at("ms") == june_2024 + 60 * day);
  CHECK(t.at("auto_renew") == true);
  CHECK(t.at("expires_date").at("ms") == june_2024 + 30 * day); // its own period's

  // The buyer turns auto-renew off, then the subscription expires.
  notification_spec off{"DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", app.bundle_id};
  off.tx = renew.tx;
  off.renewal = renew.renewal;
  (*off.renewal)["autoRenewStatus"] = 0;
  off.status = 1;
  off.signed_date = signed_at + day;
  REQUIRE(notify(s, app, signed_payload(off, s.jws_pki)).status == 200);
  CHECK(get_transaction(s, app, record_id).at("auto_renew") == false);

  notification_spec expired{"EXPIRED", "VOLUNTARY", app.bundle_id};
  expired.tx = renew.tx;
  expired.renewal = off.renewal;
  expired.status = 2;
  expired.signed_date = june_2024 + 61 * day;
  REQUIRE(notify(s, app, signed_payload(expired, s.jws_pki)).status == 200);
  t = get_transaction(s, app, record_id);
  CHECK(str(t.at("subscription_status")) == "expired");

  // A late, older notification does not bring the subscription back.
  notification_spec late = renew;
  late.uuid = fresh_uuid();
  REQUIRE(notify(s, app, signed_payload(late, s.jws_pki)).status == 200);
  CHECK(str(get_transaction(s, app, record_id).at("subscription_status")) == "expired");
}

TEST_CASE("a refund notification cancels the receipt's in-app purchase",
          "[notifications][store_a]") {
  auto& s = the_suite();
  auto bundle = unique_package("receipt-refund");
  auto app = create_store_a_app(s, bundle);
  auto tx_id = unique("1000");
  test_support::unified_receipt_params p;
  p.bundle_id = bundle;
  p.receipt_type = "ProductionSandbox";
  p.in_app.push_back(test_support::purchase(bundle + ".pro", tx_id, test_support::utc(2024, 5, 1)));
  p.in_app.push_back(
    test_support::purchase(bundle + ".extra", unique("1001"), test_support::utc(2024, 5, 2)));
  auto receipt = model::base64_encode(
    test_support::make_unified_receipt(p, test_support::apple_like_signer(s.pki)));
  auto up = s.service.post("/client/store_a/receipts",
                           json::serialize(json::object{{"receipt", receipt}}), app.token);
  INFO(up.body);
  REQUIRE((up.status == 200 || up.status == 206));
  auto record_id = str(up.json().at("id"));

  notification_spec n{"REFUND", "", bundle};
  n.tx = transaction(bundle, tx_id, tx_id);
  n.tx->product_id = bundle + ".pro";
  n.tx->type = "Non-Consumable";
  n.tx->expires_date.reset();
  n.tx->revocation_date = june_2024 + 3 * day;
  n.tx->revocation_reason = 0;
  auto r = notify(s, app, signed_payload(n, s.jws_pki));
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.json().at("records_changed") == 1);

  auto got = s.service.get("/client/store_a/receipts/" + record_id, app.token);
  REQUIRE(got.status == 200);
  auto purchases = got.json().at("in_app_purchases").as_array();
  REQUIRE(purchases.size() == 2);
  for (auto& purchase : purchases) {
    if (str(purchase.at("transaction_id")) == tx_id) {
      CHECK(purchase.at("cancellation_date").at("ms") == june_2024 + 3 * day);
      CHECK(purchase.at("cancellation_reason") == 0);
    } else {
      CHECK(purchase.at("cancellation_date").is_null());
    }
  }
  CHECK(got.json().at("is_fraud") == false);
}

TEST_CASE("the emulator signs and sends a notification as Apple does",
          "[notifications][emulator]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("emulated"));
  auto id = fresh_transaction_id();
  auto record_id = str(upload_confirmed_transaction(s, app, id).at("id"));
  auto sent
    = s.emulator.control("POST", "/control/store_a/notifications",
                         json::object{{"notification_type", "REFUND"},
                                      {"bundle_id", app.bundle_id},
                                      {"transaction",
                                       json::object{{"transaction_id", id},
                                                    {"product_id", app.bundle_id + ".monthly"},
                                                    {"purchase_date_ms", june_2024},
                                                    {"expires_date_ms", june_2024 + 30 * day},
                                                    {"revocation_date_ms", june_2024 + 2 * day},
                                                    {"revocation_reason", 1}}},
                                      {"send_to", s.service.url(path_for(app))}});
  INFO(json::serialize(sent));
  REQUIRE(sent.at("status") == 200);
  CHECK(str(json::parse(str(sent.at("body"))).at("status")) == "applied");
  auto t = get_transaction(s, app, record_id);
  CHECK(t.at("revocation_date").at("ms") == june_2024 + 2 * day);
  CHECK(t.at("revocation_reason") == 1);
}
