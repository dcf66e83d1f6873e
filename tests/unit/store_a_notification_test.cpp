// App Store Server Notifications V2 (model/store_a/notification.hpp):
// every public Apple notification in tests/data/apple-jws-notification verified
// at its signedDate under Apple Root CA - G3 and parsed against its
// expected.json and payload.json, with the signed transaction and renewal info
// nested in it; malformed payloads; and what each kind of notification does to
// hand-built transaction and receipt records.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "model/encoding.hpp"
#include "model/resource_json.hpp"
#include "model/store_a/jws.hpp"
#include "model/store_a/notification.hpp"
#include "tests/unit/store_a_fixtures.hpp"

using namespace store_a_fixtures;
using namespace receiptd::model;
namespace json = boost::json;

namespace {

std::string dir_of(const std::string& name) {
  return "apple-jws-notification/" + name;
}

json::value json_file(const std::string& dir, const char* file) {
  return json::parse(read_file(data_path(dir + "/" + file)));
}

// A key of a JSON object; null when it is absent.
json::value field(const json::value& o, const char* key) {
  const auto* v = o.as_object().if_contains(key);
  return v != nullptr ? *v : json::value();
}

// The trust the brief names: Apple Root CA - G3 alone.
const sa::trust_anchors& apple_root_g3() {
  static const auto anchors = load({{trust_pem("apple-root-ca-g3.pem")}, {}, {}});
  return *anchors;
}

std::string verified_payload(const std::string& jws) {
  // At the payload's signedDate (jws_options default): most of these leaves
  // have expired since.
  auto v = sa::verify_jws(jws, apple_root_g3());
  INFO(v.detail);
  REQUIRE_FALSE(v.internal_error);
  REQUIRE(v.reason == fraud_reason::none);
  REQUIRE_FALSE(v.xcode);
  return v.payload;
}

std::optional<environment> env_named(const json::value& v) {
  if (v == "Production")
    return environment::production;
  if (v == "Sandbox")
    return environment::sandbox;
  if (v == "Xcode")
    return environment::xcode;
  return std::nullopt;
}

// What the endpoint does with a signedPayload: the outer JWS verified and
// parsed, then each nested one.
sa::verified_notification verified_vector(const std::string& name) {
  INFO(name);
  const auto payload = verified_payload(read_file(data_path(dir_of(name) + "/jws.txt")));
  auto n = sa::parse_notification(payload);
  INFO((n ? std::string() : n.errors().front().message));
  REQUIRE(n);
  sa::verified_notification v{*n, std::nullopt, std::nullopt};
  if (!n->signed_transaction_info.empty()) {
    auto t = sa::parse_signed_transaction(verified_payload(n->signed_transaction_info));
    INFO((t ? std::string() : t.errors().front().message));
    REQUIRE(t);
    v.transaction = *t;
  }
  if (!n->signed_renewal_info.empty()) {
    auto r = sa::parse_renewal_info(verified_payload(n->signed_renewal_info));
    INFO((r ? std::string() : r.errors().front().message));
    REQUIRE(r);
    v.renewal = *r;
  }
  return v;
}

// Verified once per run (a map: references stay valid as it grows).
const sa::verified_notification& vector_named(const std::string& name) {
  static std::map<std::string, sa::verified_notification> cache;
  auto it = cache.find(name);
  if (it == cache.end())
    it = cache.emplace(name, verified_vector(name)).first;
  return it->second;
}

// ---- malformed payloads ---------------------------------------------------------

// A well-formed notification payload to break one field of.
json::object good_payload() {
  return json::parse(R"({
    "notificationType": "DID_RENEW",
    "subtype": "BILLING_RECOVERY",
    "notificationUUID": "1a7cdc3d-9360-49c3-ae37-0423e4c6e7c7",
    "data": {
      "appAppleId": 1470168868,
      "bundleId": "com.example.app",
      "bundleVersion": "637",
      "environment": "Sandbox",
      "signedTransactionInfo": "aaa.bbb.ccc",
      "signedRenewalInfo": "ddd.eee.fff",
      "status": 1
    },
    "version": "2.0",
    "signedDate": 1759302518835
  })")
    .as_object();
}

// The notification's errors: each with the field and code the endpoint answers.
std::vector<std::string> malformed(const json::object& payload) {
  auto n = sa::parse_notification(json::serialize(payload));
  CHECK_FALSE(n);
  std::vector<std::string> messages;
  if (n)
    return messages;
  for (const auto& e : n.errors()) {
    CHECK(e.field == "signedPayload");
    CHECK(e.code == "malformed_notification");
    messages.push_back(e.message);
  }
  return messages;
}

bool mentions(const std::vector<std::string>& messages, const std::string& key) {
  return std::any_of(messages.begin(), messages.end(),
                     [&](const std::string& m) { return m.find(key) != std::string::npos; });
}

// ---- records ------------------------------------------------------------------------

const std::string session_bundle = "com.loki-project.loki-messenger";
const std::string session_original = "2000001024993299";
// REFUND (2025-10-16): transaction 2000001032604840 refunded at 1760591999000.
const std::string refunded_transaction = "2000001032604840";
constexpr unix_ms refund_signed = 1760592122788;
constexpr unix_ms refund_revoked_at = 1760591999000;
// The transaction of UPGRADE, AUTO_RENEW_DISABLED, DOWNGRADE and EXPIRED.
const std::string upgraded_transaction = "2000001027701928";
// DID_RENEW (2025-10-01): transaction 2000001024998954, expiring 1759302732000.
const std::string renewal_transaction = "2000001024998954";
constexpr unix_ms renewed_until = 1759302732000;

// A validated StoreKit 2 record of session-pro's subscription, as an upload made it.
transaction_record session_record(const std::string& transaction_id) {
  transaction_record r;
  r.id = "0b7c3f2e-4a5d-4c1e-9a8b-" + transaction_id.substr(4);
  r.app_id = "app-1";
  r.transaction_key = transaction_id;
  r.env = environment::sandbox;
  r.state = validation_state::validated;
  r.created_at = 1759301900000;
  r.updated_at = 1759301900000;
  auto& t = r.transaction;
  t.transaction_id = transaction_id;
  t.original_transaction_id = session_original;
  t.bundle_id = session_bundle;
  t.product_id = "com.getsession.org.pro_sub";
  t.type = "Auto-Renewable Subscription";
  t.purchase_date = 1759301833000;
  t.original_purchase_date = 1759301833000;
  t.expires_date = 1759302013000;
  t.quantity = 1;
  return r;
}

// Everything a record shows or keeps about a notification.
struct snapshot {
  json::object resource;
  std::optional<unix_ms> notified_at;
  validation_state state;
  fraud_reason fraud;
  bool operator==(const snapshot&) const = default;
};

snapshot snap(const transaction_record& r) {
  return {transaction_json(r), r.transaction.notified_at, r.state, r.fraud};
}

receipt_record session_receipt() {
  receipt_record r;
  r.id = "5f0e2c1a-0000-4000-8000-000000000001";
  r.app_id = "app-1";
  r.bundle_id = session_bundle;
  r.env = environment::sandbox;
  r.state = validation_state::validated;
  apple_in_app_purchase refunded;
  refunded.product_id = "com.getsession.org.pro_sub";
  refunded.transaction_id = refunded_transaction;
  refunded.original_transaction_id = session_original;
  refunded.purchase_date = 1760335129000;
  apple_in_app_purchase other = refunded;
  other.transaction_id = renewal_transaction;
  other.purchase_date = 1759302552000;
  r.in_app_purchases = {refunded, other};
  return r;
}

// The REFUND vector as Apple would send its reversal later: the transaction
// signed again without its revocation.
sa::verified_notification refund_reversed() {
  auto v = vector_named("session-pro-refund-sandbox-2025");
  v.n.type = "REFUND_REVERSED";
  v.n.notification_uuid = "7d1c6b0e-1111-4222-8333-944455556666";
  v.n.signed_date = refund_signed + 86'400'000;
  v.transaction->revocation_date.reset();
  v.transaction->revocation_reason.reset();
  v.transaction->signed_date = v.n.signed_date;
  return v;
}

} // namespace

// ---- every public vector ---------------------------------------------------------------

TEST_CASE("the vector list is every folder of apple-jws-notification", "[notification]") {
  std::set<std::string> on_disk;
  for (const auto& e : std::filesystem::directory_iterator(data_path("apple-jws-notification")))
    if (e.is_directory())
      on_disk.insert(e.path().filename().string());
  const std::set<std::string> listed(std::begin(notification_vectors),
                                     std::end(notification_vectors));
  CHECK(on_disk == listed);
  CHECK(listed.size() == 11);
}

TEST_CASE("every Apple-signed notification verifies and parses as its expected.json says",
          "[notification]") {
  int with_data = 0;
  for (const char* name : notification_vectors) {
    const std::string dir = dir_of(name);
    INFO(dir);
    const auto expected = json_file(dir, "expected.json");
    const auto payload = json_file(dir, "payload.json");
    const auto& data = payload.at("data");

    const auto& v = vector_named(name);
    const auto& n = v.n;
    CHECK(n.notification_uuid == payload.at("notificationUUID").as_string());
    CHECK(n.notification_uuid == expected.at("notificationUUID").as_string());
    CHECK(n.type == expected.at("notificationType").as_string());
    const auto subtype = field(expected, "subtype");
    CHECK(n.subtype == (subtype.is_null() ? std::string() : std::string(subtype.as_string())));
    CHECK(n.version == payload.at("version").as_string());
    CHECK(n.signed_date == expected.at("signedDateMillis").to_number<unix_ms>());
    CHECK(n.bundle_id == expected.at("bundleId").as_string());
    CHECK(n.env == env_named(expected.at("environment")));
    const auto apple_id = field(data, "appAppleId");
    CHECK(n.app_apple_id
          == (apple_id.is_null()
                ? std::nullopt
                : std::optional<std::int64_t>(apple_id.to_number<std::int64_t>())));
    const auto status = field(data, "status");
    CHECK(n.status
          == (status.is_null() ? std::nullopt : std::optional<int>(status.to_number<int>())));
    const auto reason = field(data, "consumptionRequestReason");
    CHECK(n.consumption_request_reason
          == (reason.is_null() ? std::nullopt
                               : std::optional<std::string>(reason.as_string().c_str())));

    const auto nested = field(expected, "nested");
    CHECK(nested.is_null() == n.signed_transaction_info.empty());
    CHECK(nested.is_null() == n.signed_renewal_info.empty());
    CHECK(v.transaction.has_value() == !nested.is_null());
    CHECK(v.renewal.has_value() == !nested.is_null());
    if (nested.is_null())
      continue;
    ++with_data;
    // The nested JWS are the exact strings of the payload.
    CHECK(n.signed_transaction_info == data.at("signedTransactionInfo").as_string());
    CHECK(n.signed_renewal_info == data.at("signedRenewalInfo").as_string());

    const auto& et = nested.at("signedTransactionInfo");
    CHECK(sha256_hex(n.signed_transaction_info) == et.at("sha256OfJws").as_string());
    CHECK(v.transaction->transaction_id == et.at("transactionId").as_string());
    CHECK(v.transaction->original_transaction_id == et.at("originalTransactionId").as_string());
    CHECK(v.transaction->bundle_id == n.bundle_id);
    CHECK(v.transaction->product_id == et.at("productId").as_string());
    CHECK(v.transaction->env == n.env);
    CHECK(v.transaction->signed_date == et.at("signedDateMillis").to_number<unix_ms>());

    const auto& er = nested.at("signedRenewalInfo");
    CHECK(sha256_hex(n.signed_renewal_info) == er.at("sha256OfJws").as_string());
    CHECK(v.renewal->original_transaction_id == er.at("originalTransactionId").as_string());
    CHECK(v.renewal->original_transaction_id == v.transaction->original_transaction_id);
    CHECK(v.renewal->product_id == std::string(er.at("productId").as_string()));
    CHECK(v.renewal->auto_renew_product_id == std::string(er.at("autoRenewProductId").as_string()));
    CHECK(v.renewal->auto_renew_status == er.at("autoRenewStatus").to_number<int>());
    CHECK(v.renewal->env == env_named(er.at("environment")));
    CHECK(v.renewal->signed_date == er.at("signedDateMillis").to_number<unix_ms>());
  }
  CHECK(with_data == 9); // JWS-SOURCES.md: 9 notifications carry data
}

TEST_CASE("the fields the vectors carry beyond the summary", "[notification]") {
  const auto& consumption = vector_named("session-pro-consumption-request-sandbox-2025");
  CHECK(consumption.n.consumption_request_reason == std::string("UNINTENDED_PURCHASE"));
  CHECK(consumption.n.app_apple_id == 1470168868);

  const auto& expired = vector_named("session-pro-expired-voluntary-sandbox-2025");
  CHECK(expired.n.status == 2);
  CHECK(expired.renewal->expiration_intent == 1);
  CHECK(expired.renewal->is_in_billing_retry_period == false);
  CHECK(expired.renewal->auto_renew_status == 0);
  CHECK(expired.renewal->renewal_date == 1759727970000);

  const auto& refund = vector_named("session-pro-refund-sandbox-2025");
  CHECK(refund.transaction->revocation_date == refund_revoked_at);
  CHECK(refund.transaction->revocation_reason == 0);

  const auto& production
    = vector_named("dmzlingyin-aitubo-did-change-renewal-status-production-2025");
  CHECK(production.n.env == environment::production);
  CHECK(production.n.app_apple_id == 6449269673);
  CHECK(production.renewal->env == environment::production);
  CHECK_FALSE(production.renewal->grace_period_expires_date);

  const auto& test = vector_named("aporat-test-sandbox-2022");
  CHECK_FALSE(test.n.app_apple_id);
  CHECK_FALSE(test.n.status);
}

TEST_CASE("every Apple-signed renewal info parses; the one signed over null does not",
          "[notification]") {
  for (const char* name : {"dmzlingyin-aitubo-production-2025", "go-iap-sandbox-2023",
                           "session-pro-downgrade-pending-sandbox-2025"}) {
    const std::string dir = std::string("apple-jws-renewal/") + name;
    INFO(dir);
    const auto payload = json_file(dir, "payload.json");
    auto r = sa::parse_renewal_info(verified_payload(read_file(data_path(dir + "/jws.txt"))));
    REQUIRE(r);
    CHECK(r->original_transaction_id == payload.at("originalTransactionId").as_string());
    CHECK(r->auto_renew_product_id == std::string(payload.at("autoRenewProductId").as_string()));
    CHECK(r->auto_renew_status == payload.at("autoRenewStatus").to_number<int>());
    CHECK(r->signed_date == payload.at("signedDate").to_number<unix_ms>());
    CHECK(r->env == env_named(payload.at("environment")));
  }
  // Apple signed the 4 bytes `null` as a signedRenewalInfo (JWS-SOURCES.md
  // finding 5): not renewal info; the caller takes it as none.
  auto null_payload = sa::parse_renewal_info("null");
  REQUIRE_FALSE(null_payload);
  CHECK(null_payload.errors().front().field == "signedPayload");
  CHECK(null_payload.errors().front().code == "malformed_notification");
}

// ---- malformed payloads ---------------------------------------------------------

TEST_CASE("a notification payload that is not Apple's shape is malformed_notification",
          "[notification]") {
  REQUIRE(sa::parse_notification(json::serialize(good_payload())));

  SECTION("not a JSON object") {
    for (const char* text : {"", "null", "[]", "\"x\"", "{", "{\"notificationType\":"}) {
      INFO(text);
      auto n = sa::parse_notification(text);
      REQUIRE_FALSE(n);
      CHECK(n.errors().front().field == "signedPayload");
      CHECK(n.errors().front().code == "malformed_notification");
    }
  }
  SECTION("missing notificationUUID") {
    auto p = good_payload();
    p.erase("notificationUUID");
    CHECK(mentions(malformed(p), "notificationUUID"));
    p["notificationUUID"] = nullptr;
    CHECK(mentions(malformed(p), "notificationUUID"));
    p["notificationUUID"] = "";
    CHECK(mentions(malformed(p), "notificationUUID"));
  }
  SECTION("wrong types") {
    struct breakage {
      const char* key;
      json::value value;
      bool in_data;
    };
    const breakage cases[] = {
      {"notificationUUID", 42, false},
      {"notificationType", json::array{"REFUND"}, false},
      {"subtype", 7, false},
      {"version", 2.0, false},
      {"signedDate", "1759302518835", false},
      {"signedDate", -1, false},
      {"data", "com.example.app", false},
      {"bundleId", 12, true},
      {"environment", true, true},
      {"appAppleId", "1470168868", true},
      {"appAppleId", -5, true},
      {"status", "1", true},
      {"status", 1.5, true},
      {"consumptionRequestReason", 3, true},
      {"signedTransactionInfo", json::object{}, true},
      {"signedRenewalInfo", 1, true},
    };
    for (const auto& c : cases) {
      INFO(c.key << " = " << json::serialize(c.value));
      auto p = good_payload();
      (c.in_data ? p["data"].as_object() : p)[c.key] = c.value;
      CHECK(mentions(malformed(p), c.key));
    }
  }
  SECTION("a type or subtype that is not a word of visible ASCII") {
    for (const char* type : {"DID RENEW", "", "RÉFUND", "DID\tRENEW", "DID\nRENEW"}) {
      INFO(type);
      auto p = good_payload();
      p["notificationType"] = type;
      CHECK(mentions(malformed(p), "notificationType"));
      auto q = good_payload();
      q["subtype"] = std::string(type) + " x";
      CHECK(mentions(malformed(q), "subtype"));
    }
  }
  SECTION("unknown environment") {
    for (const char* env : {"Staging", "production", "SANDBOX", ""}) {
      INFO(env);
      auto p = good_payload();
      p["data"].as_object()["environment"] = env;
      CHECK(mentions(malformed(p), "environment"));
    }
    auto p = good_payload();
    p["data"].as_object().erase("environment");
    CHECK(mentions(malformed(p), "environment"));
  }
  SECTION("no part that names the app, or no bundleId") {
    auto p = good_payload();
    p.erase("data");
    CHECK(mentions(malformed(p), "data"));
    p["somethingElse"] = json::object{{"environment", "Sandbox"}}; // names no bundle
    CHECK(mentions(malformed(p), "data"));
    auto q = good_payload();
    q["data"].as_object().erase("bundleId");
    CHECK(mentions(malformed(q), "bundleId"));
  }
  SECTION("oversized strings") {
    auto uuid = good_payload();
    uuid["notificationUUID"] = std::string(129, 'a');
    CHECK(mentions(malformed(uuid), "notificationUUID"));
    auto type = good_payload();
    type["notificationType"] = std::string(65, 'A');
    CHECK(mentions(malformed(type), "notificationType"));
    auto bundle = good_payload();
    bundle["data"].as_object()["bundleId"] = std::string(257, 'b');
    CHECK(mentions(malformed(bundle), "bundleId"));
    auto reason = good_payload();
    reason["data"].as_object()["consumptionRequestReason"] = std::string(257, 'R');
    CHECK(mentions(malformed(reason), "consumptionRequestReason"));
    // Larger than any JWS verify_jws would take.
    auto nested = good_payload();
    nested["data"].as_object()["signedTransactionInfo"] = std::string(200'000, 'a');
    CHECK(mentions(malformed(nested), "signedTransactionInfo"));
  }
  SECTION("every error is reported, not only the first") {
    auto p = good_payload();
    p.erase("notificationUUID");
    p["data"].as_object()["environment"] = "Staging";
    const auto messages = malformed(p);
    CHECK(messages.size() == 2);
    CHECK(mentions(messages, "notificationUUID"));
    CHECK(mentions(messages, "environment"));
  }
}

TEST_CASE("what Apple may add or leave out still parses", "[notification]") {
  SECTION("the largest strings allowed") {
    auto p = good_payload();
    p["notificationUUID"] = std::string(128, 'a');
    p["notificationType"] = std::string(64, 'A');
    p["data"].as_object()["bundleId"] = std::string(256, 'b');
    auto n = sa::parse_notification(json::serialize(p));
    REQUIRE(n);
    CHECK(n->notification_uuid.size() == 128);
  }
  SECTION("an unknown type and subtype are kept, unknown fields ignored") {
    auto p = good_payload();
    p["notificationType"] = "SOMETHING_NEW_2030";
    p["subtype"] = "ALSO_NEW";
    p["data"].as_object()["somethingElse"] = json::object{{"x", 1}};
    p["extra"] = json::array{1, 2};
    auto n = sa::parse_notification(json::serialize(p));
    REQUIRE(n);
    CHECK(n->type == "SOMETHING_NEW_2030");
    CHECK(n->subtype == "ALSO_NEW");
  }
  SECTION("absent or null optional fields") {
    auto p = good_payload();
    p.erase("subtype");
    p.erase("version");
    auto& data = p["data"].as_object();
    data.erase("appAppleId");
    data.erase("status");
    data["signedTransactionInfo"] = nullptr;
    data.erase("signedRenewalInfo");
    auto n = sa::parse_notification(json::serialize(p));
    REQUIRE(n);
    CHECK(n->subtype.empty());
    CHECK(n->version.empty());
    CHECK_FALSE(n->app_apple_id);
    CHECK_FALSE(n->status);
    CHECK(n->signed_transaction_info.empty());
    CHECK(n->signed_renewal_info.empty());
    CHECK(n->signed_date == 1759302518835);
  }
  SECTION("a summary notification names its app in summary") {
    auto p = good_payload();
    p["notificationType"] = "RENEWAL_EXTENSION";
    p["subtype"] = "SUMMARY";
    p.erase("data");
    p["summary"] = json::object{{"requestIdentifier", "a1b2"},
                                {"environment", "Production"},
                                {"appAppleId", 41234},
                                {"bundleId", "com.example.app"},
                                {"productId", "monthly"},
                                {"succeededCount", 5},
                                {"failedCount", 0}};
    auto n = sa::parse_notification(json::serialize(p));
    REQUIRE(n);
    CHECK(n->bundle_id == "com.example.app");
    CHECK(n->env == environment::production);
    CHECK(n->signed_transaction_info.empty());
  }
  SECTION("Xcode's environment") {
    auto p = good_payload();
    p["data"].as_object()["environment"] = "Xcode";
    auto n = sa::parse_notification(json::serialize(p));
    REQUIRE(n);
    CHECK(n->env == environment::xcode);
  }
  SECTION("a type or subtype Apple spells otherwise later is kept as it came") {
    for (const char* type : {"refund", "DID-RENEW", "Price.Change", "X"}) {
      INFO(type);
      auto p = good_payload();
      p["notificationType"] = type;
      p["subtype"] = std::string(type) + "_2";
      auto n = sa::parse_notification(json::serialize(p));
      REQUIRE(n);
      CHECK(n->type == type);
      CHECK(n->subtype == std::string(type) + "_2");
    }
  }
  SECTION("RESCIND_CONSENT names its app in appData") {
    // Apple, responseBodyV2DecodedPayload.appData (2026): appAppleId, bundleId,
    // environment, signedAppTransactionInfo; no data.
    auto p = good_payload();
    p["notificationType"] = "RESCIND_CONSENT";
    p.erase("subtype");
    p.erase("data");
    p["appData"] = json::object{{"appAppleId", 41234},
                                {"bundleId", "com.example.app"},
                                {"environment", "Production"},
                                {"signedAppTransactionInfo", "aaa.bbb.ccc"}};
    auto n = sa::parse_notification(json::serialize(p));
    REQUIRE(n);
    CHECK(n->type == "RESCIND_CONSENT");
    CHECK(n->bundle_id == "com.example.app");
    CHECK(n->env == environment::production);
    CHECK(n->app_apple_id == 41234);
    CHECK(n->signed_transaction_info.empty());
  }
  SECTION("a part Apple adds later names the app by its bundleId") {
    auto p = good_payload();
    p["notificationType"] = "SOMETHING_NEW_2030";
    p.erase("data");
    p["somethingNew"] = json::object{{"bundleId", "com.example.app"}, {"environment", "Sandbox"}};
    auto n = sa::parse_notification(json::serialize(p));
    REQUIRE(n);
    CHECK(n->bundle_id == "com.example.app");
    CHECK(n->env == environment::sandbox);
    p["somethingNew"].as_object().erase("environment"); // need not say one
    n = sa::parse_notification(json::serialize(p));
    REQUIRE(n);
    CHECK(n->env == environment::production);
  }
}

TEST_CASE("renewal info that is not Apple's shape is malformed_notification", "[notification]") {
  const auto good = json::parse(R"({"originalTransactionId":"2000001024993299",
    "autoRenewProductId":"monthly","productId":"monthly","autoRenewStatus":1,
    "signedDate":1759727838450,"environment":"Sandbox","renewalDate":1759727970000})")
                      .as_object();
  REQUIRE(sa::parse_renewal_info(json::serialize(good)));
  struct breakage {
    const char* key;
    json::value value;
  };
  const breakage cases[] = {
    {"originalTransactionId", nullptr},
    {"originalTransactionId", 2000001024993299},
    {"originalTransactionId", json::string(257, '1')},
    {"autoRenewStatus", "1"},
    {"autoRenewStatus", -1},
    {"autoRenewProductId", false},
    {"isInBillingRetryPeriod", 0},
    {"expirationIntent", "1"},
    {"renewalDate", "2025-10-06"},
    {"gracePeriodExpiresDate", true},
    {"environment", "Staging"},
    {"environment", nullptr},
  };
  for (const auto& c : cases) {
    INFO(c.key << " = " << json::serialize(c.value));
    auto p = good;
    p[c.key] = c.value;
    auto r = sa::parse_renewal_info(json::serialize(p));
    REQUIRE_FALSE(r);
    CHECK(r.errors().front().field == "signedPayload");
    CHECK(r.errors().front().code == "malformed_notification");
    CHECK(r.errors().front().message.find(c.key) != std::string::npos);
  }
}

TEST_CASE("subscription status names", "[notification]") {
  CHECK(sa::subscription_status_name(1) == std::string("active"));
  CHECK(sa::subscription_status_name(2) == std::string("expired"));
  CHECK(sa::subscription_status_name(3) == std::string("billing_retry"));
  CHECK(sa::subscription_status_name(4) == std::string("grace_period"));
  CHECK(sa::subscription_status_name(5) == std::string("revoked"));
  CHECK_FALSE(sa::subscription_status_name(0));
  CHECK_FALSE(sa::subscription_status_name(6));
  CHECK_FALSE(sa::subscription_status_name(-1));
}

// ---- applying to StoreKit 2 transaction records -----------------------------------------

TEST_CASE("a refund marks the very transaction revoked, and is not fraud", "[notification]") {
  const auto& refund = vector_named("session-pro-refund-sandbox-2025");
  for (auto state : {validation_state::validated, validation_state::pending}) {
    INFO(to_string(state));
    auto r = session_record(refunded_transaction);
    r.state = state;
    r.transaction.subscription_expires_date = 1760335309000;
    REQUIRE(sa::apply_notification(r, refund));
    CHECK(r.transaction.revocation_date == refund_revoked_at);
    CHECK(r.transaction.revocation_reason == 0);
    CHECK(r.transaction.expires_date == 1760335309000);
    CHECK(r.state == state);
    CHECK_FALSE(r.is_fraud());
    CHECK(r.transaction.notified_at == refund_signed);
    // The subscription: data.status 1 and the renewal info's preference; a
    // refund does not move its expiry.
    CHECK(r.transaction.subscription_status == std::string("active"));
    CHECK(r.transaction.subscription_expires_date == 1760335309000);
    CHECK(r.transaction.auto_renew == true);
    CHECK(r.transaction.auto_renew_product_id
          == std::string("com.getsession.org.pro_sub_3_months"));
    const auto o = transaction_json(r);
    CHECK(o.at("is_fraud") == false);
    CHECK(o.at("revocation_date").at("ms") == refund_revoked_at);
    CHECK(o.at("revocation_reason") == 0);
    // The same notification again changes nothing.
    const auto before = snap(r);
    CHECK_FALSE(sa::apply_notification(r, refund));
    CHECK(snap(r) == before);
  }
}

TEST_CASE("a refund of one transaction leaves the others of its subscription unrevoked",
          "[notification]") {
  const auto& refund = vector_named("session-pro-refund-sandbox-2025");
  auto r = session_record(session_original);
  r.transaction.expires_date = 1759302013000;
  REQUIRE(sa::apply_notification(r, refund));
  CHECK_FALSE(r.transaction.revocation_date);
  CHECK_FALSE(r.transaction.revocation_reason);
  CHECK(r.transaction.expires_date == 1759302013000); // its own, not the refunded one's
  CHECK(r.transaction.subscription_status == std::string("active"));
  CHECK_FALSE(r.transaction.subscription_expires_date); // a refund does not extend
  CHECK(r.transaction.notified_at == refund_signed);
}

TEST_CASE("a notification older than the newest applied changes nothing", "[notification]") {
  const auto& expired = vector_named("session-pro-expired-voluntary-sandbox-2025");
  auto r = session_record(upgraded_transaction);
  REQUIRE(sa::apply_notification(r, expired));
  REQUIRE(r.transaction.subscription_status == std::string("expired"));
  const auto after_newest = snap(r);
  // Every session-pro notification signed before EXPIRED, arriving late.
  for (const char* older :
       {"session-pro-did-renew-sandbox-2025", "session-pro-subscribed-resubscribe-sandbox-2025",
        "session-pro-did-change-renewal-pref-upgrade-sandbox-2025",
        "session-pro-did-change-renewal-status-disabled-sandbox-2025",
        "session-pro-did-change-renewal-pref-downgrade-sandbox-2025"}) {
    INFO(older);
    const auto& v = vector_named(older);
    REQUIRE(*v.n.signed_date < *expired.n.signed_date);
    CHECK_FALSE(sa::apply_notification(r, v));
    CHECK(snap(r) == after_newest);
  }
  // A late REFUND_REVERSED cannot undo a newer REFUND either.
  auto refunded = session_record(refunded_transaction);
  REQUIRE(sa::apply_notification(refunded, vector_named("session-pro-refund-sandbox-2025")));
  auto late_reversal = refund_reversed();
  late_reversal.n.signed_date = refund_signed - 1;
  const auto before = snap(refunded);
  CHECK_FALSE(sa::apply_notification(refunded, late_reversal));
  CHECK(snap(refunded) == before);
  CHECK(refunded.transaction.revocation_date == refund_revoked_at);
}

TEST_CASE("DID_RENEW moves the subscription's expiry later and makes it active", "[notification]") {
  const auto& renew = vector_named("session-pro-did-renew-sandbox-2025");
  SECTION("the original purchase's record") {
    auto r = session_record(session_original);
    r.transaction.subscription_status = "billing_retry";
    r.transaction.subscription_expires_date = 1759302013000;
    r.transaction.auto_renew = false;
    REQUIRE(sa::apply_notification(r, renew));
    CHECK(r.transaction.subscription_expires_date == renewed_until);
    CHECK(r.transaction.subscription_status == std::string("active"));
    CHECK(r.transaction.auto_renew == true);
    CHECK(r.transaction.auto_renew_product_id == std::string("com.getsession.org.pro_sub"));
    CHECK(r.transaction.expires_date == 1759302013000); // its own period stays
    const auto o = transaction_json(r);
    CHECK(o.at("subscription_expires_date").at("ms") == renewed_until);
    CHECK(o.at("subscription_status") == "active");
  }
  SECTION("the renewal's own record takes its transaction's fields") {
    auto r = session_record(renewal_transaction);
    r.transaction.expires_date.reset();
    r.transaction.price.reset();
    REQUIRE(sa::apply_notification(r, renew));
    CHECK(r.transaction.expires_date == renewed_until);
    CHECK(r.transaction.purchase_date == 1759302552000);
    CHECK(r.transaction.price == 1990);
    CHECK(r.transaction.currency == std::string("AUD"));
    CHECK(r.transaction.storefront == std::string("AUS"));
    CHECK(r.transaction.subscription_expires_date == renewed_until);
  }
  SECTION("an expiry already later stays") {
    auto r = session_record(session_original);
    r.transaction.subscription_expires_date = renewed_until + 1000;
    REQUIRE(sa::apply_notification(r, renew));
    CHECK(r.transaction.subscription_expires_date == renewed_until + 1000);
  }
}

TEST_CASE("EXPIRED/VOLUNTARY expires the subscription and turns auto-renew off", "[notification]") {
  const auto& expired = vector_named("session-pro-expired-voluntary-sandbox-2025");
  auto r = session_record(session_original);
  r.transaction.subscription_status = "active";
  r.transaction.auto_renew = true;
  REQUIRE(sa::apply_notification(r, expired));
  CHECK(r.transaction.subscription_status == std::string("expired"));
  CHECK(r.transaction.auto_renew == false);
  CHECK(r.transaction.subscription_expires_date == 1759727970000);
  CHECK(r.state == validation_state::validated);
  CHECK_FALSE(r.is_fraud());

  SECTION("without data.status the type says expired") {
    auto v = expired;
    v.n.status.reset();
    auto s = session_record(session_original);
    REQUIRE(sa::apply_notification(s, v));
    CHECK(s.transaction.subscription_status == std::string("expired"));
  }
  SECTION("a status Apple has no name for yet keeps the type's") {
    auto v = expired;
    v.n.status = 9;
    auto s = session_record(session_original);
    REQUIRE(sa::apply_notification(s, v));
    CHECK(s.transaction.subscription_status == std::string("expired"));
  }
}

TEST_CASE("DID_CHANGE_RENEWAL_STATUS turns auto-renew off", "[notification]") {
  SECTION("sandbox") {
    const auto& disabled
      = vector_named("session-pro-did-change-renewal-status-disabled-sandbox-2025");
    auto r = session_record(upgraded_transaction);
    r.transaction.auto_renew = true;
    REQUIRE(sa::apply_notification(r, disabled));
    CHECK(r.transaction.auto_renew == false);
    CHECK(r.transaction.subscription_status == std::string("active"));
  }
  SECTION("production, and only on a production record of that bundle") {
    const auto& disabled
      = vector_named("dmzlingyin-aitubo-did-change-renewal-status-production-2025");
    transaction_record r;
    r.id = "rec";
    r.app_id = "app-2";
    r.env = environment::production;
    r.state = validation_state::validated;
    r.transaction.transaction_id = "80002036248103";
    r.transaction.original_transaction_id = "80002036248103";
    r.transaction.bundle_id = "com.aitubo.image.creator";
    r.transaction.product_id = "subscribe_week";
    r.transaction.type = "Auto-Renewable Subscription";
    r.transaction.auto_renew = true;

    auto sandbox = r;
    sandbox.env = environment::sandbox;
    CHECK_FALSE(sa::apply_notification(sandbox, disabled));
    CHECK(sandbox.transaction.auto_renew == true);
    auto other_bundle = r;
    other_bundle.transaction.bundle_id = "com.example.other";
    CHECK_FALSE(sa::apply_notification(other_bundle, disabled));
    CHECK(other_bundle.transaction.auto_renew == true);

    REQUIRE(sa::apply_notification(r, disabled));
    CHECK(r.transaction.auto_renew == false);
    CHECK(r.transaction.auto_renew_product_id == std::string("subscribe_week"));
    CHECK(r.transaction.subscription_expires_date == 1747272948000);
    CHECK(r.transaction.expires_date == 1747272948000);
    CHECK(r.transaction.notified_at == 1746669019257);
  }
}

TEST_CASE("DID_CHANGE_RENEWAL_PREF records the product the subscription renews to",
          "[notification]") {
  auto r = session_record(upgraded_transaction);
  REQUIRE(sa::apply_notification(
    r, vector_named("session-pro-did-change-renewal-pref-upgrade-sandbox-2025")));
  CHECK(r.transaction.auto_renew_product_id == std::string("com.getsession.org.pro_sub"));
  REQUIRE(sa::apply_notification(
    r, vector_named("session-pro-did-change-renewal-pref-downgrade-sandbox-2025")));
  CHECK(r.transaction.auto_renew_product_id == std::string("com.getsession.org.pro_sub_3_months"));
}

TEST_CASE("the whole session-pro story, in the order Apple signed it", "[notification]") {
  auto first = session_record(session_original);
  auto upgraded = session_record(upgraded_transaction);
  std::vector<const sa::verified_notification*> story;
  for (const char* name : notification_vectors)
    if (std::string(name).rfind("session-pro-", 0) == 0)
      story.push_back(&vector_named(name));
  std::sort(story.begin(), story.end(),
            [](auto* a, auto* b) { return *a->n.signed_date < *b->n.signed_date; });
  for (auto* v : story) {
    sa::apply_notification(first, *v);
    sa::apply_notification(upgraded, *v);
  }
  // The last word is the REFUND's (data.status 1, auto-renew on, to the 3-month
  // product: the EXPIRED before it is superseded); the expiry is the latest any
  // of them named, RESUBSCRIBE's (a refund never extends it).
  for (const auto* r : {&first, &upgraded}) {
    INFO(r->transaction.transaction_id);
    CHECK(r->transaction.subscription_status == std::string("active"));
    CHECK(r->transaction.auto_renew == true);
    CHECK(r->transaction.auto_renew_product_id
          == std::string("com.getsession.org.pro_sub_3_months"));
    CHECK(r->transaction.subscription_expires_date == 1759728318000);
    CHECK(r->transaction.notified_at == refund_signed);
    CHECK_FALSE(r->transaction.revocation_date);
  }
  CHECK(upgraded.transaction.expires_date == 1759727970000);
}

TEST_CASE("REVOKE revokes; a revoked non-subscription gets no subscription status",
          "[notification]") {
  auto revoke = vector_named("session-pro-refund-sandbox-2025");
  revoke.n.type = "REVOKE";
  revoke.n.status.reset();
  auto r = session_record(refunded_transaction);
  REQUIRE(sa::apply_notification(r, revoke));
  CHECK(r.transaction.revocation_date == refund_revoked_at);
  CHECK(r.transaction.subscription_status == std::string("revoked"));
  CHECK_FALSE(r.is_fraud());

  auto consumable = revoke;
  consumable.transaction->type = "Non-Consumable";
  auto c = session_record(refunded_transaction);
  c.transaction.type = "Non-Consumable";
  REQUIRE(sa::apply_notification(c, consumable));
  CHECK(c.transaction.revocation_date == refund_revoked_at);
  CHECK_FALSE(c.transaction.subscription_status);
  CHECK_FALSE(c.transaction.subscription_expires_date);
  CHECK_FALSE(c.transaction.auto_renew);
}

TEST_CASE("REFUND_REVERSED clears the revocation", "[notification]") {
  auto r = session_record(refunded_transaction);
  REQUIRE(sa::apply_notification(r, vector_named("session-pro-refund-sandbox-2025")));
  REQUIRE(r.transaction.revocation_date);
  const auto reversal = refund_reversed();
  REQUIRE(sa::apply_notification(r, reversal));
  CHECK_FALSE(r.transaction.revocation_date);
  CHECK_FALSE(r.transaction.revocation_reason);
  CHECK(r.transaction.notified_at == reversal.n.signed_date);
  CHECK(transaction_json(r).at("revocation_date").is_null());
}

TEST_CASE("a notification changes nothing on a record it is not about", "[notification]") {
  const auto& refund = vector_named("session-pro-refund-sandbox-2025");
  SECTION("another subscription") {
    auto r = session_record("2000009999999999");
    r.transaction.original_transaction_id = "2000009999999990";
    const auto before = snap(r);
    CHECK_FALSE(sa::apply_notification(r, refund));
    CHECK(snap(r) == before);
  }
  SECTION("another bundle") {
    auto r = session_record(refunded_transaction);
    r.transaction.bundle_id = "com.example.other";
    const auto before = snap(r);
    CHECK_FALSE(sa::apply_notification(r, refund));
    CHECK(snap(r) == before);
  }
  SECTION("another environment") {
    auto r = session_record(refunded_transaction);
    r.env = environment::production;
    const auto before = snap(r);
    CHECK_FALSE(sa::apply_notification(r, refund));
    CHECK(snap(r) == before);
  }
  SECTION("a record whose JWS did not verify (no transaction fields)") {
    transaction_record r;
    r.env = environment::sandbox;
    r.fraud = fraud_reason::invalid_signature;
    r.state = validation_state::rejected;
    const auto before = snap(r);
    CHECK_FALSE(sa::apply_notification(r, refund));
    CHECK(snap(r) == before);
  }
  SECTION("a notification without its transaction") {
    auto v = refund;
    v.transaction.reset();
    auto r = session_record(refunded_transaction);
    const auto before = snap(r);
    CHECK_FALSE(sa::apply_notification(r, v));
    CHECK(snap(r) == before);
  }
  SECTION("recorded only: TEST, CONSUMPTION_REQUEST") {
    for (const char* name :
         {"session-pro-test-sandbox-2025", "session-pro-consumption-request-sandbox-2025"}) {
      INFO(name);
      auto r = session_record(refunded_transaction);
      const auto before = snap(r);
      CHECK_FALSE(sa::apply_notification(r, vector_named(name)));
      CHECK(snap(r) == before);
    }
  }
}

// ---- applying to receipts ---------------------------------------------------------------

TEST_CASE("a refund cancels the receipt's in-app purchase of that transaction", "[notification]") {
  const auto& refund = vector_named("session-pro-refund-sandbox-2025");
  auto r = session_receipt();
  const auto untouched = r.in_app_purchases[1];
  REQUIRE(sa::apply_notification(r, refund));
  CHECK(r.in_app_purchases[0].cancellation_date == refund_revoked_at);
  CHECK(r.in_app_purchases[0].cancellation_reason == 0);
  CHECK_FALSE(r.in_app_purchases[1].cancellation_date);
  CHECK_FALSE(r.in_app_purchases[1].cancellation_reason);
  CHECK(in_app_purchase_json(r.in_app_purchases[1]) == in_app_purchase_json(untouched));
  CHECK(r.state == validation_state::validated);
  CHECK_FALSE(r.is_fraud());
  const auto o = receipt_json(r);
  CHECK(o.at("is_fraud") == false);
  CHECK(o.at("in_app_purchases").at(0).at("cancellation_date").at("ms") == refund_revoked_at);
  CHECK(o.at("in_app_purchases").at(0).at("cancellation_reason") == 0);
  // Again: nothing changes.
  CHECK_FALSE(sa::apply_notification(r, refund));
  CHECK(receipt_json(r) == o);

  SECTION("REFUND_REVERSED clears it") {
    REQUIRE(sa::apply_notification(r, refund_reversed()));
    CHECK_FALSE(r.in_app_purchases[0].cancellation_date);
    CHECK_FALSE(r.in_app_purchases[0].cancellation_reason);
    CHECK(receipt_json(r).at("in_app_purchases").at(0).at("cancellation_date").is_null());
    CHECK_FALSE(sa::apply_notification(r, refund_reversed()));
  }
}

TEST_CASE("a receipt the refund is not about is unchanged", "[notification]") {
  const auto& refund = vector_named("session-pro-refund-sandbox-2025");
  SECTION("no in-app purchase of that transaction") {
    auto r = session_receipt();
    r.in_app_purchases.erase(r.in_app_purchases.begin());
    const auto before = receipt_json(r);
    CHECK_FALSE(sa::apply_notification(r, refund));
    CHECK(receipt_json(r) == before);
  }
  SECTION("another bundle, another environment, an undecoded receipt") {
    auto bundle = session_receipt();
    bundle.bundle_id = "com.example.other";
    auto env = session_receipt();
    env.env = environment::production;
    auto undecoded = session_receipt();
    undecoded.bundle_id.clear();
    for (auto* r : {&bundle, &env, &undecoded}) {
      const auto before = receipt_json(*r);
      CHECK_FALSE(sa::apply_notification(*r, refund));
      CHECK(receipt_json(*r) == before);
    }
  }
  SECTION("subscription news is not about receipts") {
    auto r = session_receipt();
    const auto before = receipt_json(r);
    for (const char* name :
         {"session-pro-did-renew-sandbox-2025", "session-pro-expired-voluntary-sandbox-2025",
          "session-pro-consumption-request-sandbox-2025"}) {
      INFO(name);
      CHECK_FALSE(sa::apply_notification(r, vector_named(name)));
    }
    CHECK(receipt_json(r) == before);
  }
}

TEST_CASE("an EXTERNAL_PURCHASE_TOKEN notification names its app in externalPurchaseToken",
          "[notification]") {
  // Apple, "ExternalPurchaseToken": externalPurchaseId, tokenCreationDate,
  // appAppleId, bundleId; no data, no summary, no environment.
  json::object payload{{"notificationType", "EXTERNAL_PURCHASE_TOKEN"},
                       {"subtype", "UNREPORTED"},
                       {"notificationUUID", "002e14d5-51f5-4503-b5a8-c3a1af68eb20"},
                       {"externalPurchaseToken",
                        json::object{{"externalPurchaseId", "b2158121-7af9-49d4-9561-1f588205523e"},
                                     {"tokenCreationDate", 1698148950000},
                                     {"appAppleId", 55555},
                                     {"bundleId", "com.example"}}},
                       {"version", "2.0"},
                       {"signedDate", 1698148900000}};
  auto n = sa::parse_notification(json::serialize(payload));
  REQUIRE(n);
  CHECK(n->type == "EXTERNAL_PURCHASE_TOKEN");
  CHECK(n->bundle_id == "com.example");
  CHECK(n->env == environment::production);
  CHECK(n->signed_transaction_info.empty());

  payload.erase("externalPurchaseToken");
  auto none = sa::parse_notification(json::serialize(payload));
  REQUIRE_FALSE(none);
  CHECK(none.err().fields().front().code == "malformed_notification");
}

// ---- App Store Server API 1.15–1.21 fields ---------------------------------------------

TEST_CASE("a prorated refund lands with its type and share; a reversal clears them",
          "[notification]") {
  auto refund = vector_named("session-pro-refund-sandbox-2025");
  refund.transaction->revocation_type = "REFUND_PRORATED";
  refund.transaction->revocation_percentage = 40000;
  auto r = session_record(refunded_transaction);
  REQUIRE(sa::apply_notification(r, refund));
  CHECK(r.transaction.revocation_date == refund_revoked_at);
  CHECK(r.transaction.revocation_type == std::string("REFUND_PRORATED"));
  CHECK(r.transaction.revocation_percentage == 40000);
  const auto o = transaction_json(r);
  CHECK(o.at("revocation_type") == "REFUND_PRORATED");
  CHECK(o.at("revocation_percentage") == 40000);
  REQUIRE(sa::apply_notification(r, refund_reversed()));
  CHECK_FALSE(r.transaction.revocation_date);
  CHECK_FALSE(r.transaction.revocation_type);
  CHECK_FALSE(r.transaction.revocation_percentage);
}

TEST_CASE("the renewal info's appAccountToken is the subscription's", "[notification]") {
  auto v = vector_named("session-pro-did-renew-sandbox-2025");
  REQUIRE(v.renewal);
  v.renewal->app_account_token = "7e3fb20b-4cdb-47cc-936d-99d65f608138";
  auto r = session_record(session_original);
  REQUIRE(sa::apply_notification(r, v));
  CHECK(r.transaction.renewal_app_account_token
        == std::string("7e3fb20b-4cdb-47cc-936d-99d65f608138"));
  CHECK(transaction_json(r).at("renewal_app_account_token")
        == "7e3fb20b-4cdb-47cc-936d-99d65f608138");
  auto parsed = sa::parse_renewal_info(
    R"({"originalTransactionId":"1","environment":"Sandbox","appAccountToken":"abc"})");
  REQUIRE(parsed);
  CHECK(parsed->app_account_token == std::string("abc"));
  CHECK_FALSE(sa::parse_renewal_info(
    R"({"originalTransactionId":"1","environment":"Sandbox","appAccountToken":7})"));
}

// ---- types added since 2024 ---------------------------------------------------------

TEST_CASE("ONE_TIME_CHARGE lands its transaction's fields on the record of that transaction",
          "[notification]") {
  // A consumable the app uploaded while Apple was not asked yet (its JWS signed
  // at purchase), then Apple's ONE_TIME_CHARGE about it, signed later.
  auto r = session_record("2000001099000001");
  r.state = validation_state::pending;
  r.transaction.type = "Consumable";
  r.transaction.original_transaction_id = "2000001099000001";
  r.transaction.expires_date.reset();
  r.said_at = 1759301834000;
  sa::verified_notification v;
  v.n.notification_uuid = "3b2f1e0d-0000-4000-8000-00000000c0de";
  v.n.type = "ONE_TIME_CHARGE";
  v.n.bundle_id = session_bundle;
  v.n.env = environment::sandbox;
  v.n.signed_date = 1759301900000;
  sa::signed_transaction t;
  t.transaction_id = t.original_transaction_id = "2000001099000001";
  t.bundle_id = session_bundle;
  t.product_id = r.transaction.product_id;
  t.type = "Consumable";
  t.env = environment::sandbox;
  t.purchase_date = r.transaction.purchase_date;
  t.quantity = 3;
  t.price = 2970;
  t.currency = "USD";
  t.app_transaction_id = "704289572311513217";
  t.offer_type = 2;
  t.offer_discount_type = "ONE_TIME";
  t.signed_date = v.n.signed_date;
  v.transaction = t;

  REQUIRE(sa::apply_notification(r, v));
  CHECK(r.transaction.quantity == 3);
  CHECK(r.transaction.price == 2970);
  CHECK(r.transaction.app_transaction_id == std::string("704289572311513217"));
  CHECK(r.transaction.offer_discount_type == std::string("ONE_TIME"));
  CHECK(r.said_at == v.n.signed_date);
  CHECK(r.state == validation_state::pending); // a notification is no store verdict
  CHECK_FALSE(r.transaction.subscription_status);
  CHECK_FALSE(r.transaction.notified_at); // nothing about a subscription
  CHECK_FALSE(sa::apply_notification(r, v)); // the same word again: nothing new

  // Another transaction of the same original id is not this one: unchanged.
  auto other = session_record("2000001099000002");
  other.transaction.original_transaction_id = "2000001099000001";
  const auto before = snap(other);
  CHECK_FALSE(sa::apply_notification(other, v));
  CHECK(snap(other) == before);
}

TEST_CASE("MIGRATION, PRICE_CHANGE, METADATA_UPDATE carry the subscription's state",
          "[notification]") {
  for (const char* type : {"MIGRATION", "PRICE_CHANGE", "METADATA_UPDATE"}) {
    INFO(type);
    auto v = vector_named("session-pro-did-renew-sandbox-2025");
    v.n.type = type;
    v.n.subtype.clear();
    auto r = session_record(session_original);
    REQUIRE(sa::apply_notification(r, v));
    CHECK(r.transaction.subscription_status == std::string("active"));
    CHECK(r.transaction.subscription_expires_date == renewed_until);
    CHECK(r.transaction.notified_at == v.n.signed_date);
  }
}

TEST_CASE("a type receiptd does not know is recorded, changing no record", "[notification]") {
  for (const char* type : {"RESCIND_CONSENT", "EXTERNAL_PURCHASE_TOKEN", "SOMETHING_NEW_2030"}) {
    INFO(type);
    auto v = vector_named("session-pro-did-renew-sandbox-2025");
    v.n.type = type;
    auto r = session_record(renewal_transaction);
    const auto before = snap(r);
    CHECK_FALSE(sa::apply_notification(r, v));
    CHECK(snap(r) == before);
  }
}
