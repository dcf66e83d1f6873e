// The In-App Purchase resource through the real binary, on the database under
// test: upload answers carry it, GET /client/in_app_purchases/{id} returns it to
// its app only, renewals are one purchase, the customer answer lists it; and
// the store's truth holds against late or re-wrapped proofs: an older
// notification never undoes a refund, and who owns a purchase is decided per
// purchase whatever proof carries it.
#include <catch2/catch.hpp>

#include <openssl/pkcs7.h>
#include <openssl/x509.h>

#include "harness.hpp"
#include "model/encoding.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* transactions = "/client/store_a/transactions";
constexpr const char* receipts = "/client/store_a/receipts";
constexpr std::int64_t day = 86400000;

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string code_of(const json::value& v) {
  return str(v.at("errors").at(0).at("code"));
}

// A subscription transaction registered with the emulator, bought `bought`,
// renewing every 30 days; the JWS a device would upload.
std::string subscription(suite& s, const test_app& app, const std::string& id,
                         const std::string& original, std::int64_t bought,
                         json::object extra = {}) {
  json::object fields{{"transaction_id", id},
                      {"original_transaction_id", original},
                      {"bundle_id", app.bundle_id},
                      {"product_id", app.bundle_id + ".monthly"},
                      {"environment", "Sandbox"},
                      {"purchase_date_ms", bought},
                      {"expires_date_ms", bought + 30 * day}};
  for (auto& [k, v] : extra)
    fields[k] = v;
  return register_transaction(s, fields);
}

json::value upload(suite& s, const test_app& app, const std::string& jws, long expect,
                   const std::string& user = "alice") {
  auto r = s.service.post(transactions,
                          transaction_body(jws, ",\"user_identifier\":\"" + user + "\""), app.token);
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == expect);
  return r.json();
}

json::value get(suite& s, const std::string& path, const test_app& app, long expect = 200) {
  auto r = s.service.get(path, app.token);
  INFO(path << " → " << r.status << " " << r.body);
  REQUIRE(r.status == expect);
  return r.json();
}

// The receipt re-wrapped: the same signed content, its certificates in another
// order (the PKCS#7 certificate set is not signed).
std::string rewrapped(const std::string& receipt_b64) {
  auto der = model::base64_decode(receipt_b64).value();
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  PKCS7* p7 = d2i_PKCS7(nullptr, &p, static_cast<long>(der.size()));
  REQUIRE(p7 != nullptr);
  auto* certs = p7->d.sign->cert;
  REQUIRE(sk_X509_num(certs) >= 2);
  X509* first = sk_X509_shift(certs);
  sk_X509_push(certs, first);
  unsigned char* out = nullptr;
  int n = i2d_PKCS7(p7, &out);
  REQUIRE(n > 0);
  std::string bytes(reinterpret_cast<char*>(out), static_cast<std::size_t>(n));
  OPENSSL_free(out);
  PKCS7_free(p7);
  REQUIRE(bytes != der);
  return model::base64_encode(bytes);
}

} // namespace

TEST_CASE("an upload's answer carries its In-App Purchase; renewals are one purchase",
          "[purchases][storekit2]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("iap"));
  auto original = fresh_transaction_id();
  const auto bought = now_ms() - 2 * day;
  auto first = upload(s, app, subscription(s, app, original, original, bought), 200);
  const auto& iap = first.at("in_app_purchase");
  REQUIRE(iap.is_object());
  CHECK(str(iap.at("marketplace")) == "store_a");
  CHECK(str(iap.at("type")) == "subscription");
  CHECK(str(iap.at("product_id")) == app.bundle_id + ".monthly");
  CHECK(str(iap.at("user_identifier")) == "alice");
  CHECK(str(iap.at("environment")) == "sandbox");
  CHECK(iap.at("is_active") == true);
  CHECK(iap.at("versions") == 1);
  CHECK(iap.at("current_period_end_at").at("ms") == bought + 30 * day);
  CHECK(str(iap.at("sources").at(0).at("kind")) == "transaction");
  CHECK(str(iap.at("sources").at(0).at("id")) == str(first.at("id")));
  const auto purchase_id = str(iap.at("id"));

  // The renewal: another transaction, the same purchase, one version on.
  auto renewal_id = fresh_transaction_id();
  auto renewed
    = upload(s, app, subscription(s, app, renewal_id, original, bought + 30 * day), 200);
  CHECK(str(renewed.at("in_app_purchase").at("id")) == purchase_id);
  CHECK(renewed.at("in_app_purchase").at("versions") == 2);
  CHECK(renewed.at("in_app_purchase").at("current_period_end_at").at("ms")
        == bought + 60 * day);

  auto fetched = get(s, "/client/in_app_purchases/" + purchase_id, app);
  CHECK(fetched.at("in_app_purchase").at("id") == iap.at("id"));
  CHECK(fetched.at("in_app_purchase").at("sources").as_array().size() == 2);
  // The record's own lookup embeds it too.
  auto record = get(s, std::string(transactions) + "/" + str(first.at("id")), app);
  CHECK(str(record.at("in_app_purchase").at("id")) == purchase_id);

  // Another app's token: not found, whatever the id.
  auto other = create_storekit_app(s, unique_package("other"));
  get(s, "/client/in_app_purchases/" + purchase_id, other, 404);
  get(s, "/client/in_app_purchases/no-such-id", app, 404);
}

TEST_CASE("an older genuine notification never undoes a refund the store answered",
          "[purchases][storekit2][hostile]") {
  auto& s = the_suite();
  auto app = create_storekit_app(s, unique_package("refunded"));
  auto id = fresh_transaction_id();
  const auto bought = now_ms() - 5 * day;
  const auto refunded_at = now_ms() - day;
  // Uploaded after its refund: Apple's answer carries the revocation.
  auto jws = subscription(s, app, id, id, bought,
                          {{"revocation_date_ms", refunded_at}, {"revocation_reason", 0}});
  auto stored = upload(s, app, jws, 200);
  REQUIRE(stored.at("revocation_date").at("ms") == refunded_at);
  CHECK(stored.at("in_app_purchase").at("is_active") == false);
  REQUIRE(stored.at("in_app_purchase").at("revoked_at").at("ms") == refunded_at);

  // A DID_RENEW about the same transaction, signed before the refund and never
  // seen before (a delayed or replayed notification), without revocationDate.
  test_support::transaction_fields t;
  t.transaction_id = id;
  t.original_transaction_id = id;
  t.bundle_id = app.bundle_id;
  t.product_id = app.bundle_id + ".monthly";
  t.purchase_date = bought;
  t.original_purchase_date = bought;
  t.expires_date = bought + 30 * day;
  t.signed_date = bought + 1000;
  json::object data{{"bundleId", app.bundle_id},
                    {"environment", "Sandbox"},
                    {"status", 1},
                    {"signedTransactionInfo",
                     test_support::make_storekit_jws(test_support::transaction_payload_json(t),
                                                     s.jws_pki)}};
  json::object payload{{"notificationType", "DID_RENEW"},
                       {"notificationUUID", unique("uuid")},
                       {"data", data},
                       {"version", "2.0"},
                       {"signedDate", bought + 2000}};
  auto signed_payload = test_support::make_storekit_jws(json::serialize(payload), s.jws_pki);
  auto r = s.service.post("/notifications/store_a/" + app.id,
                          json::serialize(json::object{{"signedPayload", signed_payload}}), "");
  INFO(r.body);
  REQUIRE(r.status == 200);

  auto record = get(s, std::string(transactions) + "/" + str(stored.at("id")), app);
  CHECK(record.at("revocation_date").at("ms") == refunded_at);
  CHECK(record.at("in_app_purchase").at("revoked_at").at("ms") == refunded_at);
  CHECK(record.at("in_app_purchase").at("is_active") == false);
}

TEST_CASE("the transfer policy follows the purchase, whatever proof carries it",
          "[purchases][transfer][hostile]") {
  auto& s = the_suite();

  SECTION("a unified receipt re-wrapped with its certificates swapped is the same receipt") {
    auto app = create_store_a_app(s, "com.revenuecat.sampleapp", "shared-secret-1");
    REQUIRE(s.ctl({"app", "update", app.name, "--transfer-policy=keep"}).code == 0);
    auto receipt = receipt_vector("unified", "revenuecat-sample1-sandbox-ios");
    auto body = [&](const std::string& r, const std::string& user) {
      return json::serialize(json::object{{"receipt", r}, {"user_identifier", user}});
    };
    auto first = s.service.post(receipts, body(receipt, "alice"), app.token);
    REQUIRE(first.status == 200);
    auto swapped = rewrapped(receipt);
    auto same = s.service.post(receipts, body(swapped, "alice"), app.token);
    INFO(same.body);
    REQUIRE(same.status == 200);
    CHECK(same.json().at("id") == first.json().at("id"));
    auto stolen = s.service.post(receipts, body(swapped, "mallory"), app.token);
    INFO(stolen.body);
    REQUIRE(stolen.status == 409);
    CHECK(code_of(stolen.json()) == "bound_to_other_user");
  }

  SECTION("a StoreKit 2 renewal (a new transaction id) cannot move the subscription") {
    auto app = create_storekit_app(s, unique_package("renewal-owner"));
    REQUIRE(s.ctl({"app", "update", app.name, "--transfer-policy=keep"}).code == 0);
    auto original = fresh_transaction_id();
    const auto bought = now_ms() - 40 * day;
    upload(s, app, subscription(s, app, original, original, bought), 200, "alice");
    auto renewal = subscription(s, app, fresh_transaction_id(), original, bought + 30 * day);
    auto refused = upload(s, app, renewal, 409, "mallory");
    CHECK(code_of(refused) == "bound_to_other_user");
    upload(s, app, renewal, 200, "alice");
  }
}
