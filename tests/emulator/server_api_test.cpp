// The emulator's App Store Server API (PROTOCOL.md "Store A — App Store Server
// API") over real sockets, and the StoreKit JWS helpers of
// tests/support/crypto/test_jws.hpp that receiptd's tests sign with.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>

#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "model/encoding.hpp"
#include "model/store_a/jws.hpp"
#include "test_client.hpp"
#include "tests/support/crypto/test_jws.hpp"

using namespace emulator_test;
namespace json = boost::json;
namespace ts = receiptd::test_support;

namespace {

const std::string issuer_id = "57246542-96fe-1a63-e053-0824d011072a";
const std::string key_id = "2X9R4HXF34";
const std::string bundle_id = "com.example.receiptd";
const std::string not_found_body
  = R"({"errorCode":4040010,"errorMessage":"Transaction id not found."})";

ts::test_cert ec_key() {
  ts::cert_options o;
  o.key_algorithm = "EC";
  return ts::make_cert(o);
}

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string transaction_path(bool sandbox, const std::string& id) {
  return std::string(sandbox ? "/sandbox" : "") + "/inApps/v1/transactions/" + id;
}

// An emulator with one registered in-app purchase key.
struct server_api_fixture {
  emulator_process emulator;
  http_client client;
  ts::test_cert key = ec_key();
  std::string root_pem;

  explicit server_api_fixture(std::vector<std::string> emulator_args = {})
    : emulator(std::move(emulator_args)) {
    register_key({{"issuer_id", issuer_id},
                  {"key_id", key_id},
                  {"bundle_id", bundle_id},
                  {"public_key_pem", public_key_pem(key.key())}});
    auto pki = client.get(emulator.control_url("/control/store_a/server_api/pki"));
    REQUIRE(pki.status == 200);
    root_pem = std::string(pki.json().at("root_pem").as_string());
  }

  void register_key(const json::object& o) {
    auto r
      = client.post(emulator.control_url("/control/store_a/server_api/keys"), json::serialize(o));
    REQUIRE(r.status == 200);
  }

  std::string jwt() const {
    return make_es256_jwt(key.key(), server_api_header(key_id),
                          server_api_claims(issuer_id, bundle_id));
  }

  http_result get(bool sandbox, const std::string& id, const std::string& token) {
    std::vector<std::string> headers;
    if (!token.empty())
      headers.push_back("Authorization: Bearer " + token);
    return client.get(emulator.store_a_url(transaction_path(sandbox, id)), headers);
  }
  http_result get(bool sandbox, const std::string& id) { return get(sandbox, id, jwt()); }

  http_result post_transaction(const json::object& o) {
    return client.post(emulator.control_url("/control/store_a/transactions"), json::serialize(o));
  }
  json::object register_transaction(const json::object& o) {
    auto r = post_transaction(o);
    REQUIRE(r.status == 200);
    return r.json().as_object();
  }

  std::uint64_t calls(const char* name) {
    return client.get(emulator.control_url("/control/calls"))
      .json()
      .at("store_a")
      .at(name)
      .to_number<std::uint64_t>();
  }
};

json::object minimal_transaction(const std::string& id, const std::string& environment) {
  return {{"transaction_id", id},
          {"bundle_id", bundle_id},
          {"product_id", "com.example.receiptd.monthly"},
          {"environment", environment}};
}

// The payload of a JWS the emulator signed, after checking its signature
// (x5c[0]'s key) and its chain (to the emulator's root, with Apple's OIDs).
json::object checked_payload(const std::string& compact, const std::string& root_pem) {
  auto jws = decode_jws(compact);
  CHECK(jws.header.at("alg").as_string() == "ES256");
  CHECK(jws.signature.size() == 64);
  CHECK(jws_signature_verifies(jws));
  CHECK(jws_chain_problem(jws, root_pem) == "");
  return jws.payload.as_object();
}

// receiptd's own verifier (model/store_a/jws.hpp) with only `root_pem` trusted.
receiptd::model::store_a::jws_verification product_verdict(const std::string& compact,
                                                           const std::string& root_pem) {
  receiptd::model::store_a::trust_config trust;
  trust.root_pems = {root_pem};
  auto anchors = receiptd::model::store_a::load_trust_anchors(trust);
  REQUIRE(anchors.ok());
  return receiptd::model::store_a::verify_jws(compact, *anchors.value());
}

std::string signed_info(const http_result& r) {
  return std::string(r.json().at("signedTransactionInfo").as_string());
}

} // namespace

TEST_CASE("test_jws: StoreKit JWS shaped like Apple's") {
  auto pki = ts::make_jws_pki("receiptd JWS unit");
  ts::transaction_fields t;
  t.transaction_id = "2000001032604840";
  t.original_transaction_id = "2000001024993299";
  t.web_order_line_item_id = "2000000114930653";
  t.expires_date = t.purchase_date + 180000;
  t.app_account_token = "957a6481-d9b4-4fe5-b099-141dfe8623f6";
  t.revocation_reason = 0;
  t.revocation_date = t.purchase_date + 1000;
  t.app_transaction_id = "704897469903383919";
  const auto payload = ts::transaction_payload_json(t);

  SECTION("the payload has Apple's names in Apple's order") {
    // The order of tests/data/apple-jws-transaction/*-2025/payload.json, without
    // the fields transaction_fields does not model (subscriptionGroupIdentifier,
    // storefrontId).
    const std::vector<std::string> apple_order = {"transactionId",
                                                  "originalTransactionId",
                                                  "webOrderLineItemId",
                                                  "bundleId",
                                                  "productId",
                                                  "purchaseDate",
                                                  "originalPurchaseDate",
                                                  "expiresDate",
                                                  "quantity",
                                                  "type",
                                                  "appAccountToken",
                                                  "inAppOwnershipType",
                                                  "signedDate",
                                                  "revocationReason",
                                                  "revocationDate",
                                                  "environment",
                                                  "transactionReason",
                                                  "storefront",
                                                  "price",
                                                  "currency",
                                                  "appTransactionId"};
    auto o = json::parse(payload).as_object();
    std::vector<std::string> keys;
    for (const auto& kv : o)
      keys.emplace_back(kv.key());
    CHECK(keys == apple_order);
    CHECK(o.at("purchaseDate").as_int64() == ts::utc(2024, 6, 1, 12));
    CHECK(o.at("price").as_int64() == 9990);
    CHECK(o.at("environment").as_string() == "Sandbox");

    ts::transaction_fields bare; // a 2023 payload: no storefront, price, currency
    bare.storefront.reset();
    bare.price.reset();
    bare.currency.reset();
    auto b = json::parse(ts::transaction_payload_json(bare)).as_object();
    CHECK(!b.contains("storefront"));
    CHECK(!b.contains("price"));
    CHECK(!b.contains("expiresDate"));
    CHECK(b.at("quantity").as_int64() == 1);
  }
  SECTION("the chain: EC P-256, Apple's names and OIDs, anchored at the root") {
    auto jws = decode_jws(ts::make_storekit_jws(payload, pki));
    CHECK(json::serialize(jws.header).starts_with(R"({"alg":"ES256","x5c":[")"));
    CHECK(jws_signature_verifies(jws));
    CHECK(jws_chain_problem(jws, pki.root.pem()) == "");
    CHECK(json::serialize(jws.payload) == payload);
    for (const auto* cert : {&pki.root, &pki.intermediate, &pki.leaf}) {
      CHECK(EVP_PKEY_get_base_id(cert->key()) == EVP_PKEY_EC);
      CHECK(EVP_PKEY_get_bits(cert->key()) == 256);
    }
    char cn[200];
    X509_NAME_get_text_by_NID(X509_get_subject_name(pki.root.x509()), NID_commonName, cn,
                              sizeof cn);
    CHECK(std::string(cn) == "receiptd JWS unit Root CA - G3");
    X509_NAME_get_text_by_NID(X509_get_subject_name(pki.leaf.x509()), NID_commonName, cn,
                              sizeof cn);
    CHECK(std::string(cn) == ts::apple_storekit_leaf_name);
    CHECK(X509_check_ca(pki.intermediate.x509()) != 0);
    CHECK(X509_check_ca(pki.leaf.x509()) == 0);
    CHECK(jws_chain_problem(jws, ts::make_jws_pki("another").root.pem()) != "");
  }
  SECTION("r and s are left-padded: every one of many signatures verifies") {
    // About 1 in 128 signatures has an r or s shorter than 32 bytes.
    int verified = 0;
    for (int i = 0; i < 400; ++i) {
      auto jws = decode_jws(ts::sign_es256_jws(
        R"({"alg":"ES256"})", "{\"n\":" + std::to_string(i) + "}", pki.leaf.key()));
      jws.header["x5c"] = json::array{receiptd::model::base64_encode(pki.leaf.der())};
      verified += jws.signature.size() == 64 && jws_signature_verifies(jws);
    }
    CHECK(verified == 400);
  }
  SECTION("forgeries: another signer behind the right x5c fails") {
    auto other = ec_key();
    auto forged = decode_jws(ts::make_storekit_jws(
      payload, {pki.leaf.der(), pki.intermediate.der(), pki.root.der()}, other.key()));
    CHECK(!jws_signature_verifies(forged));
    CHECK(jws_chain_problem(forged, pki.root.pem()) == ""); // the chain alone proves nothing
  }
  SECTION("the helper's verifier accepts a real Apple signature") {
    const std::string vector = std::string(TEST_DATA_DIR)
      + "/apple-jws-transaction/session-pro-revoked-refund-sandbox-2025/jws.txt";
    auto text = read_file(vector);
    text.erase(text.find_last_not_of("\r\n ") + 1);
    auto jws = decode_jws(text);
    CHECK(jws_signature_verifies(jws));
    jws.signing_input.back() ^= 1;
    CHECK(!jws_signature_verifies(jws));
  }
  SECTION("pki_options: an EC test PKI") {
    ts::pki_options o;
    o.key_algorithm = "EC";
    o.with_itunes = false;
    auto ec = ts::make_test_pki(o);
    CHECK(EVP_PKEY_get_base_id(ec.leaf.key()) == EVP_PKEY_EC);
    CHECK(EVP_PKEY_get_base_id(ec.root.key()) == EVP_PKEY_EC);
  }
}

TEST_CASE("store_a server API: a registered transaction answers at its host") {
  server_api_fixture f;
  const std::string id = "2000000111111111";
  const auto before = now_ms();
  auto reg = f.register_transaction({{"transaction_id", id},
                                     {"original_transaction_id", "2000000100000000"},
                                     {"bundle_id", bundle_id},
                                     {"product_id", "com.example.receiptd.monthly"},
                                     {"purchase_date_ms", 1717243200000},
                                     {"original_purchase_date_ms", 1717200000000},
                                     {"expires_date_ms", 1719835200000},
                                     {"app_account_token", "957a6481-d9b4-4fe5-b099-141dfe8623f6"},
                                     {"storefront", "JPN"},
                                     {"price", 230000},
                                     {"currency", "JPY"}});
  CHECK(reg.at("ok").as_bool());
  auto check_fields = [&](const json::object& p, const char* environment) {
    CHECK(p.at("transactionId").as_string() == id);
    CHECK(p.at("originalTransactionId").as_string() == "2000000100000000");
    CHECK(p.at("bundleId").as_string() == bundle_id);
    CHECK(p.at("productId").as_string() == "com.example.receiptd.monthly");
    CHECK(p.at("type").as_string() == "Auto-Renewable Subscription");
    CHECK(p.at("environment").as_string() == environment);
    CHECK(p.at("purchaseDate").as_int64() == 1717243200000);
    CHECK(p.at("originalPurchaseDate").as_int64() == 1717200000000);
    CHECK(p.at("expiresDate").as_int64() == 1719835200000);
    CHECK(p.at("appAccountToken").as_string() == "957a6481-d9b4-4fe5-b099-141dfe8623f6");
    CHECK(p.at("quantity").as_int64() == 1);
    CHECK(p.at("storefront").as_string() == "JPN");
    CHECK(p.at("price").as_int64() == 230000);
    CHECK(p.at("currency").as_string() == "JPY");
    CHECK(p.at("inAppOwnershipType").as_string() == "PURCHASED");
    CHECK(!p.contains("revocationDate"));
    CHECK(p.at("signedDate").as_int64() >= before);
    CHECK(p.at("signedDate").as_int64() <= now_ms());
  };

  SECTION("the JWS the device would upload") {
    check_fields(checked_payload(std::string(reg.at("signed_transaction").as_string()), f.root_pem),
                 "Sandbox");
    CHECK(product_verdict(std::string(reg.at("signed_transaction").as_string()), f.root_pem).reason
          == receiptd::model::fraud_reason::none);
  }
  SECTION("200 at the sandbox host, 404 4040010 at production") {
    auto r = f.get(true, id);
    REQUIRE(r.status == 200);
    CHECK(r.content_type.find("application/json") == 0);
    CHECK(r.json().as_object().size() == 1);
    check_fields(checked_payload(signed_info(r), f.root_pem), "Sandbox");
    // receiptd's verifier agrees: signature, chain to the fetched root, OIDs.
    auto verdict = product_verdict(signed_info(r), f.root_pem);
    CHECK(verdict.reason == receiptd::model::fraud_reason::none);
    CHECK(verdict.detail == "");
    CHECK(!verdict.xcode);
    CHECK(json::parse(verdict.payload) == checked_payload(signed_info(r), f.root_pem));

    auto other = f.get(false, id);
    CHECK(other.status == 404);
    CHECK(other.body == not_found_body);
    CHECK(f.calls("server_api_sandbox") == 1);
    CHECK(f.calls("server_api_production") == 1);
    CHECK(f.calls("server_api_unauthorized") == 0);
    CHECK(f.calls("sandbox") == 0); // verifyReceipt is counted apart

    auto log = f.client.get(f.emulator.control_url("/control/requests")).json().as_array();
    REQUIRE(log.size() == 2);
    CHECK(log[0].at("method").as_string() == "GET");
    CHECK(log[0].at("path").as_string() == "/sandbox/inApps/v1/transactions/" + id);
    CHECK(log[0].at("authorization").as_string().starts_with("Bearer eyJ"));
  }
  SECTION("a production transaction: 200 at production only") {
    f.register_transaction(minimal_transaction("3000000000000001", "Production"));
    auto r = f.get(false, "3000000000000001");
    REQUIRE(r.status == 200);
    auto p = checked_payload(signed_info(r), f.root_pem);
    CHECK(p.at("environment").as_string() == "Production");
    CHECK(p.at("originalTransactionId").as_string() == "3000000000000001"); // defaults to the id
    CHECK(p.at("storefront").as_string() == "USA");
    CHECK(p.at("price").as_int64() == 9990);
    CHECK(p.at("currency").as_string() == "USD");
    // A subscription without expires_date_ms runs 30 days from its purchase.
    CHECK(p.at("expiresDate").as_int64() - p.at("purchaseDate").as_int64() == 30LL * 86400000);
    CHECK(f.get(true, "3000000000000001").body == not_found_body);
  }
  SECTION("unknown ids: 404 4040010 at both hosts") {
    CHECK(f.get(false, "9999").body == not_found_body);
    auto r = f.get(true, "9999");
    CHECK(r.status == 404);
    CHECK(r.body == not_found_body);
  }
  SECTION("known_in both and none") {
    auto both = minimal_transaction("4000000000000001", "Sandbox");
    both["known_in"] = "both";
    f.register_transaction(both);
    auto at_production = f.get(false, "4000000000000001");
    REQUIRE(at_production.status == 200);
    CHECK(checked_payload(signed_info(at_production), f.root_pem).at("environment").as_string()
          == "Production");
    auto at_sandbox = f.get(true, "4000000000000001");
    REQUIRE(at_sandbox.status == 200);
    CHECK(checked_payload(signed_info(at_sandbox), f.root_pem).at("environment").as_string()
          == "Sandbox");

    auto none = minimal_transaction("4000000000000002", "Production");
    none["known_in"] = "none";
    auto device = f.register_transaction(none);
    CHECK(checked_payload(std::string(device.at("signed_transaction").as_string()), f.root_pem)
            .at("environment")
            .as_string()
          == "Production");
    CHECK(f.get(false, "4000000000000002").body == not_found_body);
    CHECK(f.get(true, "4000000000000002").body == not_found_body);
  }
  SECTION("a later registration replaces; revocation and 2023-style payloads") {
    auto again = minimal_transaction(id, "Sandbox");
    again["product_id"] = "com.example.receiptd.yearly";
    again["type"] = "Non-Consumable";
    again["revocation_date_ms"] = 1718000000000;
    again["revocation_reason"] = 1;
    again["quantity"] = 2;
    again["storefront"] = nullptr;
    again["price"] = nullptr;
    again["currency"] = nullptr;
    f.register_transaction(again);
    auto p = checked_payload(signed_info(f.get(true, id)), f.root_pem);
    CHECK(p.at("productId").as_string() == "com.example.receiptd.yearly");
    CHECK(p.at("type").as_string() == "Non-Consumable");
    CHECK(!p.contains("expiresDate"));
    CHECK(p.at("revocationDate").as_int64() == 1718000000000);
    CHECK(p.at("revocationReason").as_int64() == 1);
    CHECK(p.at("quantity").as_int64() == 2);
    CHECK(!p.contains("storefront"));
    CHECK(!p.contains("price"));
    CHECK(!p.contains("currency"));
  }
  SECTION("other paths and methods") {
    CHECK(f.client
            .get(f.emulator.store_a_url("/inApps/v1/transactions"),
                 {"Authorization: Bearer " + f.jwt()})
            .status
          == 404);
    CHECK(f.client
            .get(f.emulator.store_a_url("/inApps/v1/history/" + id),
                 {"Authorization: Bearer " + f.jwt()})
            .status
          == 404);
    CHECK(f.client
            .get(f.emulator.store_a_url("/inApps/v2/history"), {"Authorization: Bearer " + f.jwt()})
            .status
          == 404);
    CHECK(f.client.post(f.emulator.store_a_url(transaction_path(true, id)), "").status == 404);
    CHECK(f.calls("server_api_sandbox") == 0);
  }
  SECTION("bad registrations: 400 naming the field") {
    auto missing = f.post_transaction({{"bundle_id", bundle_id}, {"product_id", "p"}});
    CHECK(missing.status == 400);
    CHECK(std::string(missing.json().at("error").as_string()).starts_with("transaction_id"));
    CHECK(f.post_transaction({{"transaction_id", "1"}, {"product_id", "p"}}).status == 400);
    CHECK(f.post_transaction({{"transaction_id", "1"}, {"bundle_id", "b"}}).status == 400);
    CHECK(
      f.post_transaction({{"transaction_id", ""}, {"bundle_id", "b"}, {"product_id", "p"}}).status
      == 400);
    auto bad_env = minimal_transaction("1", "Xcode");
    CHECK(f.post_transaction(bad_env).status == 400);
    auto bad_known = minimal_transaction("1", "Sandbox");
    bad_known["known_in"] = "elsewhere";
    CHECK(f.post_transaction(bad_known).status == 400);
    auto bad_status = minimal_transaction("1", "Sandbox");
    bad_status["http_status"] = 99999;
    CHECK(f.post_transaction(bad_status).status == 400);
    auto bad_price = minimal_transaction("1", "Sandbox");
    bad_price["price"] = "9.99";
    CHECK(f.post_transaction(bad_price).status == 400);
    CHECK(f.client.get(f.emulator.control_url("/control/store_a/transactions")).status == 405);
    CHECK(f.get(true, "1").body == not_found_body); // nothing was registered
  }
}

TEST_CASE("store_a server API: the bearer JWT is checked, failures are 401 without a body") {
  server_api_fixture f;
  const std::string id = "2000000222222222";
  f.register_transaction(minimal_transaction(id, "Sandbox"));
  REQUIRE(f.get(true, id).status == 200);

  auto refused = [&](const std::string& token) {
    auto r = f.get(true, id, token);
    CHECK(r.status == 401);
    CHECK(r.body.empty());
    return r.status == 401 && r.body.empty();
  };
  auto signed_with = [&](json::object header, json::object claims) {
    return make_es256_jwt(f.key.key(), header, claims);
  };
  const auto now = unix_now();
  int expected_refusals = 0;

  SECTION("no header, another scheme, not a JWT") {
    expected_refusals = 3;
    CHECK(refused(""));
    auto basic = f.client.get(f.emulator.store_a_url(transaction_path(true, id)),
                              {"Authorization: Basic dXNlcjpwYXNz"});
    CHECK(basic.status == 401);
    CHECK(refused("not.a-jwt"));
  }
  SECTION("claims: aud, bid, iss") {
    expected_refusals = 3;
    auto claims = server_api_claims(issuer_id, bundle_id);
    claims["aud"] = "appstoreconnect-v2";
    CHECK(refused(signed_with(server_api_header(key_id), claims)));
    CHECK(refused(
      signed_with(server_api_header(key_id), server_api_claims(issuer_id, "com.example.other"))));
    CHECK(
      refused(signed_with(server_api_header(key_id),
                          server_api_claims("00000000-0000-0000-0000-000000000000", bundle_id))));
  }
  SECTION("times: expired, longer than 60 minutes, issued in the future") {
    expected_refusals = 4;
    auto claims = server_api_claims(issuer_id, bundle_id);
    claims["iat"] = now - 7200;
    claims["exp"] = now - 3600;
    CHECK(refused(signed_with(server_api_header(key_id), claims)));
    claims["iat"] = now;
    claims["exp"] = now + 3601;
    CHECK(refused(signed_with(server_api_header(key_id), claims)));
    claims["iat"] = now + 600;
    claims["exp"] = now + 1200;
    CHECK(refused(signed_with(server_api_header(key_id), claims)));
    claims.erase("exp");
    claims["iat"] = now;
    CHECK(refused(signed_with(server_api_header(key_id), claims)));
    // The limits themselves are fine: exactly 60 minutes, issued a little ahead.
    claims["iat"] = now - 10;
    claims["exp"] = now - 10 + 3600;
    CHECK(f.get(true, id, signed_with(server_api_header(key_id), claims)).status == 200);
    claims["iat"] = now + 30;
    claims["exp"] = now + 600;
    CHECK(f.get(true, id, signed_with(server_api_header(key_id), claims)).status == 200);
  }
  SECTION("header: alg HS256 or none, no typ, unknown kid") {
    expected_refusals = 5;
    // HS256 keyed with the public key: the classic algorithm-confusion forgery.
    const std::string header = R"({"alg":"HS256","kid":")" + key_id + R"(","typ":"JWT"})";
    const std::string input = ts::base64url(header) + "."
      + ts::base64url(json::serialize(server_api_claims(issuer_id, bundle_id)));
    const auto secret = public_key_pem(f.key.key());
    unsigned char mac[32];
    unsigned int mac_len = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &mac_len);
    CHECK(refused(input + "." + ts::base64url(std::string(reinterpret_cast<char*>(mac), mac_len))));
    CHECK(refused(ts::base64url(R"({"alg":"none","kid":")" + key_id + R"(","typ":"JWT"})") + "."
                  + ts::base64url(json::serialize(server_api_claims(issuer_id, bundle_id))) + "."));
    auto no_typ = server_api_header(key_id);
    no_typ.erase("typ");
    CHECK(refused(signed_with(no_typ, server_api_claims(issuer_id, bundle_id))));
    CHECK(refused(
      signed_with(server_api_header("UNKNOWNKID"), server_api_claims(issuer_id, bundle_id))));
    auto wrong_alg = server_api_header(key_id);
    wrong_alg["alg"] = "ES384";
    CHECK(refused(signed_with(wrong_alg, server_api_claims(issuer_id, bundle_id))));
  }
  SECTION("signature: another key, a changed claim") {
    expected_refusals = 2;
    auto other = ec_key();
    CHECK(refused(make_es256_jwt(other.key(), server_api_header(key_id),
                                 server_api_claims(issuer_id, bundle_id))));
    auto good = f.jwt();
    auto dot1 = good.find('.');
    auto dot2 = good.find('.', dot1 + 1);
    auto claims = server_api_claims(issuer_id, bundle_id);
    claims["exp"] = now + 1000;
    CHECK(refused(good.substr(0, dot1 + 1) + ts::base64url(json::serialize(claims))
                  + good.substr(dot2)));
  }
  SECTION("several keys: each JWT is checked against its own kid") {
    auto second = ec_key();
    // Registered with the .p8 text itself: only the public half is kept.
    f.register_key({{"issuer_id", "second-issuer"},
                    {"key_id", "SECONDKEY1"},
                    {"bundle_id", "com.example.second"},
                    {"private_key_pem", second.key_pem()}});
    f.register_transaction({{"transaction_id", "5000000000000001"},
                            {"bundle_id", "com.example.second"},
                            {"product_id", "gems"},
                            {"type", "Consumable"}});
    auto second_jwt = make_es256_jwt(second.key(), server_api_header("SECONDKEY1"),
                                     server_api_claims("second-issuer", "com.example.second"));
    CHECK(f.get(true, "5000000000000001", second_jwt).status == 200);
    CHECK(f.get(true, id).status == 200); // the first key still works
    expected_refusals = 1;
    // The second key's kid with the first key's claims.
    CHECK(refused(make_es256_jwt(second.key(), server_api_header("SECONDKEY1"),
                                 server_api_claims(issuer_id, bundle_id))));
  }
  SECTION("bad key registrations") {
    const auto url = f.emulator.control_url("/control/store_a/server_api/keys");
    auto body = [&](const std::string& pem) {
      return json::serialize(json::object{
        {"issuer_id", "i"}, {"key_id", "k"}, {"bundle_id", "b"}, {"public_key_pem", pem}});
    };
    rsa_key rsa;
    CHECK(f.client.post(url, body(rsa.public_pem())).status == 400);
    EVP_PKEY* p384 = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384");
    REQUIRE(p384);
    CHECK(f.client.post(url, body(public_key_pem(p384))).status == 400);
    EVP_PKEY_free(p384);
    CHECK(f.client.post(url, body("not a key")).status == 400);
    CHECK(f.client.post(url, R"({"key_id":"k","bundle_id":"b","public_key_pem":"x"})").status
          == 400);
    CHECK(f.client.post(url, R"({"issuer_id":"i","key_id":"k","bundle_id":"b"})").status == 400);
  }
  CHECK(f.calls("server_api_unauthorized") == static_cast<std::uint64_t>(expected_refusals));
}

TEST_CASE("store_a server API: per-transaction overrides") {
  server_api_fixture f;
  auto with = [](const std::string& id, json::object extra) {
    auto o = minimal_transaction(id, "Sandbox");
    for (auto& kv : extra)
      o[kv.key()] = kv.value();
    return o;
  };

  SECTION("429 with Retry-After: 2") {
    f.register_transaction(with("6000000000000001", {{"http_status", 429}}));
    auto r = f.get(true, "6000000000000001");
    CHECK(r.status == 429);
    CHECK(r.retry_after == "2");
    CHECK(r.body == R"({"errorCode":4290000,"errorMessage":"Rate limit exceeded."})");
    CHECK(f.get(true, "9").retry_after.empty());
  }
  SECTION("a registered retry_after is the Retry-After, verbatim") {
    f.register_transaction(
      with("6000000000000002", {{"http_status", 429}, {"retry_after", "3600"}}));
    CHECK(f.get(true, "6000000000000002").retry_after == "3600");
    f.register_transaction(with("6000000000000003", {{"http_status", 503},
                                                     {"retry_after", "Sun, 06 Nov 2044 08:49:37 GMT"}}));
    auto r = f.get(true, "6000000000000003");
    CHECK(r.status == 503);
    CHECK(r.retry_after == "Sun, 06 Nov 2044 08:49:37 GMT");
  }
  SECTION("500 and 503: Apple's general internal error") {
    for (int status : {500, 503}) {
      f.register_transaction(with("6000000000000002", {{"http_status", status}}));
      auto r = f.get(true, "6000000000000002");
      CHECK(r.status == status);
      CHECK(r.body == R"({"errorCode":5000000,"errorMessage":"An unknown error occurred."})");
    }
  }
  SECTION("401 and 404 as Apple sends them") {
    f.register_transaction(with("6000000000000003", {{"http_status", 401}}));
    auto unauthorized = f.get(true, "6000000000000003");
    CHECK(unauthorized.status == 401);
    CHECK(unauthorized.body.empty());
    CHECK(f.calls("server_api_unauthorized") == 0); // the JWT was fine
    f.register_transaction(with("6000000000000004", {{"http_status", 404}}));
    auto missing = f.get(true, "6000000000000004");
    CHECK(missing.status == 404);
    CHECK(missing.body == not_found_body);
  }
  SECTION("body verbatim, with or without a status") {
    f.register_transaction(with("6000000000000005", {{"body", {{"unexpected", true}}}}));
    auto r = f.get(true, "6000000000000005");
    CHECK(r.status == 200);
    CHECK(r.body == R"({"unexpected":true})");
    f.register_transaction(
      with("6000000000000006", {{"body", "<html>no</html>"}, {"http_status", 502}}));
    auto html = f.get(true, "6000000000000006");
    CHECK(html.status == 502);
    CHECK(html.body == "<html>no</html>");
  }
  SECTION("signed_transaction_info verbatim: a JWS by another PKI") {
    auto stranger = ts::make_jws_pki("not the emulator");
    ts::transaction_fields t;
    t.transaction_id = t.original_transaction_id = "6000000000000007";
    t.bundle_id = bundle_id;
    const auto forged = ts::make_storekit_jws(ts::transaction_payload_json(t), stranger);
    f.register_transaction(with("6000000000000007", {{"signed_transaction_info", forged}}));
    auto r = f.get(true, "6000000000000007");
    REQUIRE(r.status == 200);
    CHECK(signed_info(r) == forged);
    auto jws = decode_jws(signed_info(r));
    CHECK(jws_signature_verifies(jws));
    CHECK(jws_chain_problem(jws, f.root_pem) == "x5c[2] is not the given root");
    CHECK(product_verdict(signed_info(r), f.root_pem).reason
          == receiptd::model::fraud_reason::untrusted_certificate);
    // Only at the host that knows the transaction.
    CHECK(f.get(false, "6000000000000007").body == not_found_body);

    auto apple
      = read_file(std::string(TEST_DATA_DIR)
                  + "/apple-jws-transaction/mingos-goodheart-consumable-sandbox-2025/jws.txt");
    apple.erase(apple.find_last_not_of("\r\n ") + 1);
    f.register_transaction(with("2000000847061981", {{"signed_transaction_info", apple}}));
    CHECK(signed_info(f.get(true, "2000000847061981")) == apple);
  }
}

TEST_CASE("store_a server API: modes and reset") {
  server_api_fixture f;
  const std::string id = "7000000000000001";
  f.register_transaction(minimal_transaction(id, "Production"));
  auto set_mode = [&](const std::string& body) {
    REQUIRE(f.client.put(f.emulator.control_url("/control/stores/store_a/mode"), body).status
            == 200);
  };

  SECTION("down refuses connections, up answers again") {
    set_mode(R"({"mode":"down"})");
    auto r = f.get(false, id);
    CHECK(r.code == CURLE_COULDNT_CONNECT);
    set_mode(R"({"mode":"up"})");
    CHECK(f.get(false, id).status == 200);
    CHECK(f.calls("server_api_production") == 1);
  }
  SECTION("slow answers after the delay, with a fresh signature") {
    set_mode(R"({"mode":"slow","delay_ms":300})");
    auto r = f.get(false, id);
    REQUIRE(r.status == 200);
    CHECK(r.seconds >= 0.3);
    checked_payload(signed_info(r), f.root_pem);
  }
  SECTION("error answers the configured status") {
    set_mode(R"({"mode":"error","status":503})");
    CHECK(f.get(false, id).status == 503);
    CHECK(f.calls("server_api_production") == 1);
  }
  SECTION("reset forgets keys and transactions, keeps the PKI") {
    REQUIRE(f.client.post(f.emulator.control_url("/control/reset"), "").status == 200);
    CHECK(f.get(false, id).status == 401); // the key is gone
    CHECK(f.calls("server_api_unauthorized") == 1);
    f.register_key({{"issuer_id", issuer_id},
                    {"key_id", key_id},
                    {"bundle_id", bundle_id},
                    {"public_key_pem", public_key_pem(f.key.key())}});
    CHECK(f.get(false, id).body == not_found_body); // so is the transaction
    auto pki = f.client.get(f.emulator.control_url("/control/store_a/server_api/pki")).json();
    CHECK(pki.at("root_pem").as_string() == f.root_pem);
    f.register_transaction(minimal_transaction(id, "Production"));
    checked_payload(signed_info(f.get(false, id)), f.root_pem);
  }
}

// ---- Get All Subscription Statuses

namespace {

constexpr std::int64_t day_ms = 86400000;

http_result statuses(server_api_fixture& f, bool sandbox, const std::string& id,
                     const std::string& query = "", const std::string& token = "") {
  const auto path = std::string(sandbox ? "/sandbox" : "") + "/inApps/v1/subscriptions/" + id
    + (query.empty() ? "" : "?" + query);
  return f.client.get(f.emulator.store_a_url(path),
                      {"Authorization: Bearer " + (token.empty() ? f.jwt() : token)});
}

// A monthly subscription bought at `purchase`, renewing at `purchase` + 30 days.
json::object subscription(const std::string& id, const std::string& original,
                          std::int64_t purchase) {
  auto o = minimal_transaction(id, "Sandbox");
  o["original_transaction_id"] = original;
  o["purchase_date_ms"] = purchase;
  o["original_purchase_date_ms"] = purchase;
  o["expires_date_ms"] = purchase + 30 * day_ms;
  return o;
}

// The one lastTransactions entry of a 200 StatusResponse, both JWS checked and
// decoded: {"status", "transaction", "renewal"}.
json::object only_entry(const http_result& r, const std::string& root_pem) {
  REQUIRE(r.status == 200);
  auto body = r.json().as_object();
  auto& data = body.at("data").as_array();
  REQUIRE(data.size() == 1);
  auto& last = data[0].at("lastTransactions").as_array();
  REQUIRE(last.size() == 1);
  auto& e = last[0].as_object();
  auto transaction
    = checked_payload(std::string(e.at("signedTransactionInfo").as_string()), root_pem);
  auto renewal = checked_payload(std::string(e.at("signedRenewalInfo").as_string()), root_pem);
  CHECK(e.at("originalTransactionId") == transaction.at("originalTransactionId"));
  CHECK(renewal.at("originalTransactionId") == transaction.at("originalTransactionId"));
  return {{"status", e.at("status")},
          {"group", data[0].at("subscriptionGroupIdentifier")},
          {"transaction", transaction},
          {"renewal", renewal}};
}

} // namespace

TEST_CASE("store_a server API: Get All Subscription Statuses") {
  server_api_fixture f;
  const auto now = now_ms();
  const std::string original = "2000000300000000";
  f.register_transaction(subscription(original, original, now - 10 * day_ms));

  SECTION("an active subscription: status 1, both JWS signed by the emulator's PKI") {
    const auto before = now_ms();
    auto r = statuses(f, true, original);
    REQUIRE(r.status == 200);
    CHECK(r.content_type.find("application/json") == 0);
    auto body = r.json().as_object();
    CHECK(body.at("environment").as_string() == "Sandbox");
    CHECK(body.at("bundleId").as_string() == bundle_id);
    CHECK(body.at("appAppleId").as_int64() == 1234567890);
    auto e = only_entry(r, f.root_pem);
    CHECK(e.at("status").as_int64() == 1);
    CHECK(e.at("group").as_string() == "21000000");
    auto& t = e.at("transaction").as_object();
    CHECK(t.at("transactionId").as_string() == original);
    CHECK(t.at("expiresDate").as_int64() == now + 20 * day_ms);
    CHECK(t.at("environment").as_string() == "Sandbox");
    CHECK(t.at("signedDate").as_int64() >= before);
    auto& renewal = e.at("renewal").as_object();
    CHECK(renewal.at("autoRenewStatus").as_int64() == 1);
    CHECK(renewal.at("productId").as_string() == "com.example.receiptd.monthly");
    CHECK(renewal.at("autoRenewProductId").as_string() == "com.example.receiptd.monthly");
    CHECK(renewal.at("renewalDate").as_int64() == now + 20 * day_ms);
    CHECK(renewal.at("recentSubscriptionStartDate").as_int64() == now - 10 * day_ms);
    CHECK(renewal.at("environment").as_string() == "Sandbox");
    CHECK(renewal.at("signedDate").as_int64() >= before);
    CHECK(!renewal.contains("isInBillingRetryPeriod"));
    CHECK(!renewal.contains("gracePeriodExpiresDate"));
    // receiptd's verifier accepts the transaction the entry carries.
    auto& last = body.at("data").as_array()[0].at("lastTransactions").as_array()[0];
    CHECK(
      product_verdict(std::string(last.at("signedTransactionInfo").as_string()), f.root_pem).reason
      == receiptd::model::fraud_reason::none);
  }
  SECTION("a renewal registered later is the one listed, whichever id is named") {
    f.register_transaction(subscription("2000000300000001", original, now - 5 * day_ms));
    // Registered last but bought earlier: not the latest.
    f.register_transaction(subscription("2000000300000002", original, now - 40 * day_ms));
    // A later renewal the sandbox host does not know.
    auto elsewhere = subscription("2000000300000003", original, now - day_ms);
    elsewhere["environment"] = "Production";
    f.register_transaction(elsewhere);
    for (const auto* id : {"2000000300000000", "2000000300000001", "2000000300000002"}) {
      auto e = only_entry(statuses(f, true, id), f.root_pem);
      CHECK(e.at("transaction").at("transactionId").as_string() == "2000000300000001");
      CHECK(e.at("transaction").at("expiresDate").as_int64() == now + 25 * day_ms);
      CHECK(e.at("renewal").at("renewalDate").as_int64() == now + 25 * day_ms);
      CHECK(e.at("status").as_int64() == 1);
    }
    // Same purchase date: the later expiry, then the last registered.
    auto longer = subscription("2000000300000004", original, now - 5 * day_ms);
    longer["expires_date_ms"] = now + 60 * day_ms;
    f.register_transaction(longer);
    f.register_transaction(subscription("2000000300000005", original, now - 5 * day_ms));
    CHECK(only_entry(statuses(f, true, original), f.root_pem)
            .at("transaction")
            .at("transactionId")
            .as_string()
          == "2000000300000004");
    auto same = longer;
    same["transaction_id"] = "2000000300000006";
    f.register_transaction(same);
    CHECK(only_entry(statuses(f, true, original), f.root_pem)
            .at("transaction")
            .at("transactionId")
            .as_string()
          == "2000000300000006");
  }
  SECTION("expired (derived 2), revoked (derived 5): auto-renew off") {
    f.register_transaction(subscription("2000000300000010", "2000000300000010", now - 31 * day_ms));
    auto expired = only_entry(statuses(f, true, "2000000300000010"), f.root_pem);
    CHECK(expired.at("status").as_int64() == 2);
    CHECK(expired.at("transaction").at("expiresDate").as_int64() == now - day_ms);
    CHECK(expired.at("renewal").at("autoRenewStatus").as_int64() == 0);

    auto revoked = subscription("2000000300000011", "2000000300000011", now - day_ms);
    revoked["revocation_date_ms"] = now - 1000;
    revoked["revocation_reason"] = 0;
    f.register_transaction(revoked);
    auto e = only_entry(statuses(f, true, "2000000300000011"), f.root_pem);
    CHECK(e.at("status").as_int64() == 5);
    CHECK(e.at("renewal").at("autoRenewStatus").as_int64() == 0);
  }
  SECTION("registered status, group and renewal fields") {
    auto retry = subscription("2000000300000020", "2000000300000020", now - 31 * day_ms);
    retry["subscription_status"] = 3;
    retry["subscription_group_id"] = "group-a";
    retry["auto_renew_product_id"] = "com.example.receiptd.yearly";
    f.register_transaction(retry);
    auto e = only_entry(statuses(f, true, "2000000300000020"), f.root_pem);
    CHECK(e.at("status").as_int64() == 3);
    CHECK(e.at("group").as_string() == "group-a");
    CHECK(e.at("renewal").at("isInBillingRetryPeriod").as_bool());
    CHECK(e.at("renewal").at("autoRenewStatus").as_int64() == 1);
    CHECK(e.at("renewal").at("autoRenewProductId").as_string() == "com.example.receiptd.yearly");
    CHECK(e.at("renewal").at("productId").as_string() == "com.example.receiptd.monthly");
    CHECK(!e.at("renewal").as_object().contains("gracePeriodExpiresDate"));

    auto grace = subscription("2000000300000021", "2000000300000021", now - 31 * day_ms);
    grace["subscription_status"] = 4;
    grace["auto_renew_status"] = 0;
    f.register_transaction(grace);
    auto g = only_entry(statuses(f, true, "2000000300000021"), f.root_pem);
    CHECK(g.at("status").as_int64() == 4);
    CHECK(g.at("renewal").at("gracePeriodExpiresDate").as_int64() == now - day_ms + 16 * day_ms);
    CHECK(g.at("renewal").at("autoRenewStatus").as_int64() == 0);
    CHECK(!g.at("renewal").as_object().contains("isInBillingRetryPeriod"));
  }
  SECTION("the status filter") {
    auto listed = [&](const std::string& query) {
      auto r = statuses(f, true, original, query);
      REQUIRE(r.status == 200);
      return r.json().at("data").as_array().size();
    };
    CHECK(listed("status=1") == 1);
    CHECK(listed("status=2") == 0);
    CHECK(listed("status=5") == 0);
    CHECK(listed("status=1&status=2") == 1);
    CHECK(listed("status=2,1") == 1);
    // Pistache 0.0.5 keeps only the first of repeated parameters (PROTOCOL.md);
    // Apple would list this one.
    CHECK(listed("status=2&status=1") == 0);
    CHECK(listed("status=2,3,4") == 0);
    CHECK(listed("other=2") == 1);
  }
  SECTION("unknown ids and ids the host does not know: 404 4040010") {
    CHECK(statuses(f, true, "9999").body == not_found_body);
    auto r = statuses(f, false, original); // a Sandbox transaction, known_in own
    CHECK(r.status == 404);
    CHECK(r.body == not_found_body);
    auto both = subscription("2000000300000030", "2000000300000030", now);
    both["known_in"] = "both";
    f.register_transaction(both);
    auto production = statuses(f, false, "2000000300000030");
    REQUIRE(production.status == 200);
    CHECK(production.json().at("environment").as_string() == "Production");
    CHECK(only_entry(production, f.root_pem).at("renewal").at("environment").as_string()
          == "Production");
  }
  SECTION("not a subscription: 200 with no data") {
    auto consumable = minimal_transaction("2000000300000040", "Sandbox");
    consumable["type"] = "Consumable";
    consumable["bundle_id"] = "com.example.other";
    f.register_transaction(consumable);
    auto r = statuses(f, true, "2000000300000040");
    REQUIRE(r.status == 200);
    CHECK(
      r.body
      == R"({"environment":"Sandbox","bundleId":"com.example.other","appAppleId":1234567890,"data":[]})");
  }
  SECTION("statuses_http_status and statuses_body, for the whole original transaction id") {
    auto failing = subscription("2000000300000050", original, now - 5 * day_ms);
    failing["statuses_http_status"] = 503;
    f.register_transaction(failing);
    for (const auto* id : {"2000000300000050", "2000000300000000"}) {
      auto r = statuses(f, true, id);
      CHECK(r.status == 503);
      CHECK(r.body == R"({"errorCode":5000000,"errorMessage":"An unknown error occurred."})");
    }
    CHECK(f.get(true, "2000000300000050").status == 200); // Get Transaction Info is not affected

    auto limited = subscription("2000000300000051", "2000000300000051", now);
    limited["statuses_http_status"] = 429;
    f.register_transaction(limited);
    auto r = statuses(f, true, "2000000300000051");
    CHECK(r.status == 429);
    CHECK(r.retry_after == "2");

    auto verbatim = subscription("2000000300000052", "2000000300000052", now);
    verbatim["statuses_body"] = "not json";
    verbatim["http_status"] = 500; // Get Transaction Info's only
    f.register_transaction(verbatim);
    auto v = statuses(f, true, "2000000300000052");
    CHECK(v.status == 200);
    CHECK(v.body == "not json");
    CHECK(f.get(true, "2000000300000052").status == 500);
  }
  SECTION("the JWT is checked first: 401 with no body, not counted as a statuses call") {
    auto r = statuses(f, true, original, "", "not.a-jwt");
    CHECK(r.status == 401);
    CHECK(r.body.empty());
    auto other = ec_key();
    CHECK(statuses(f, true, "9999", "",
                   make_es256_jwt(other.key(), server_api_header(key_id),
                                  server_api_claims(issuer_id, bundle_id)))
            .status
          == 401);
    CHECK(f.calls("server_api_unauthorized") == 2);
    CHECK(f.calls("subscription_statuses_sandbox") == 0);
  }
  SECTION("counters per host; reset zeroes them") {
    CHECK(f.calls("subscription_statuses_sandbox") == 0);
    statuses(f, true, original);
    statuses(f, true, "9999");
    statuses(f, false, original);
    f.get(true, original);
    CHECK(f.calls("subscription_statuses_sandbox") == 2);
    CHECK(f.calls("subscription_statuses_production") == 1);
    CHECK(f.calls("server_api_sandbox") == 1); // Get Transaction Info is counted apart
    CHECK(f.calls("server_api_production") == 0);
    REQUIRE(f.client
              .put(f.emulator.control_url("/control/stores/store_a/mode"),
                   R"({"mode":"error","status":503})")
              .status
            == 200);
    CHECK(statuses(f, false, original).status == 503);
    CHECK(f.calls("subscription_statuses_production") == 2);
    REQUIRE(f.client.post(f.emulator.control_url("/control/reset"), "").status == 200);
    CHECK(f.calls("subscription_statuses_sandbox") == 0);
    CHECK(f.calls("subscription_statuses_production") == 0);
  }
  SECTION("bad registrations: 400 naming the field") {
    auto bad = [&](const char* key, json::value value) {
      auto o = subscription("2000000300000060", "2000000300000060", now);
      o[key] = value;
      auto r = f.post_transaction(o);
      CHECK(r.status == 400);
      return std::string(r.json().at("error").as_string()).starts_with(key);
    };
    CHECK(bad("subscription_status", 0));
    CHECK(bad("subscription_status", 6));
    CHECK(bad("subscription_status", "1"));
    CHECK(bad("subscription_group_id", ""));
    CHECK(bad("subscription_group_id", 21000000));
    CHECK(bad("auto_renew_status", 2));
    CHECK(bad("auto_renew_status", true));
    CHECK(bad("auto_renew_product_id", 1));
    CHECK(bad("statuses_http_status", 99));
    CHECK(bad("statuses_http_status", 600));
    CHECK(statuses(f, true, "2000000300000060").body == not_found_body);
  }
}

TEST_CASE("store_a notifications: signedRenewalInfo from the shared renewal payload") {
  server_api_fixture f;
  auto r
    = f.client.post(f.emulator.control_url("/control/store_a/notifications"),
                    json::serialize(json::object{{"notification_type", "DID_CHANGE_RENEWAL_STATUS"},
                                                 {"bundle_id", bundle_id},
                                                 {"environment", "Production"},
                                                 {"signed_date_ms", 1717243200000},
                                                 {"renewal",
                                                  {{"original_transaction_id", "2000000400000000"},
                                                   {"product_id", "com.example.receiptd.monthly"},
                                                   {"auto_renew_status", 0}}}}));
  REQUIRE(r.status == 200);
  auto notification
    = checked_payload(std::string(r.json().at("signed_payload").as_string()), f.root_pem);
  auto renewal = checked_payload(
    std::string(notification.at("data").at("signedRenewalInfo").as_string()), f.root_pem);
  CHECK(
    json::serialize(renewal)
    == R"({"originalTransactionId":"2000000400000000","productId":"com.example.receiptd.monthly",)"
       R"("autoRenewStatus":0,"signedDate":1717243200000,"environment":"Production"})");
}

namespace {

http_result history(server_api_fixture& f, bool sandbox, const std::string& id,
                    const std::string& revision = "", std::string token = "") {
  if (token.empty())
    token = f.jwt();
  auto path = std::string(sandbox ? "/sandbox" : "") + "/inApps/v2/history/" + id
    + (revision.empty() ? "" : "?revision=" + revision);
  return f.client.get(f.emulator.store_a_url(path), {"Authorization: Bearer " + token});
}

std::vector<std::string> transaction_ids(const json::value& page, const std::string& root_pem) {
  std::vector<std::string> out;
  for (const auto& jws : page.at("signedTransactions").as_array())
    out.emplace_back(
      checked_payload(std::string(jws.as_string()), root_pem).at("transactionId").as_string());
  return out;
}

} // namespace

TEST_CASE("Get Transaction History v2: the customer's transactions, paged by revision") {
  server_api_fixture f;
  auto of = [](const std::string& id, const std::string& customer) {
    auto o = minimal_transaction(id, "Sandbox");
    o["customer"] = customer;
    return o;
  };
  for (const auto* id : {"2000000500000001", "2000000500000002", "2000000500000003"})
    f.register_transaction(of(id, "alice"));
  f.register_transaction(of("2000000500000009", "bob"));
  auto production = of("2000000500000004", "alice");
  production["environment"] = "Production";
  f.register_transaction(production);

  SECTION("one page: every transaction of the customer at this host, in order") {
    auto r = history(f, true, "2000000500000002");
    REQUIRE(r.status == 200);
    auto j = r.json();
    CHECK(j.at("hasMore") == false);
    CHECK(j.at("environment") == "Sandbox");
    CHECK(j.at("bundleId").as_string() == bundle_id);
    CHECK(j.at("appAppleId") == 1234567890);
    CHECK(j.at("revision").is_string());
    CHECK(transaction_ids(j, f.root_pem)
          == std::vector<std::string>{"2000000500000001", "2000000500000002", "2000000500000003"});
    auto p = checked_payload(std::string(j.at("signedTransactions").at(0).as_string()), f.root_pem);
    CHECK(p.at("environment") == "Sandbox");
    CHECK(product_verdict(std::string(j.at("signedTransactions").at(0).as_string()), f.root_pem)
            .reason
          == receiptd::model::fraud_reason::none);
    CHECK(f.calls("history_sandbox") == 1);
    CHECK(f.calls("server_api_sandbox") == 0);
  }
  SECTION("page size set by the test: pages follow the revision until hasMore is false") {
    REQUIRE(f.client.post(f.emulator.control_url("/control/store_a/history"), R"({"page_size":2})")
              .status
            == 200);
    auto first = history(f, true, "2000000500000001").json();
    CHECK(first.at("hasMore") == true);
    CHECK(transaction_ids(first, f.root_pem)
          == std::vector<std::string>{"2000000500000001", "2000000500000002"});
    auto second = history(f, true, "2000000500000001", std::string(first.at("revision").as_string()))
                    .json();
    CHECK(second.at("hasMore") == false);
    CHECK(transaction_ids(second, f.root_pem) == std::vector<std::string>{"2000000500000003"});
    CHECK(history(f, true, "2000000500000001", "garbage").status == 400);
    CHECK(f.calls("history_sandbox") == 3);
  }
  SECTION("a failing page on demand, and the store modes") {
    REQUIRE(f.client
              .post(f.emulator.control_url("/control/store_a/history"),
                    R"({"page_size":2,"fail_page":1,"fail_status":503})")
              .status
            == 200);
    auto first = history(f, true, "2000000500000001");
    REQUIRE(first.status == 200);
    auto failed = history(f, true, "2000000500000001",
                          std::string(first.json().at("revision").as_string()));
    CHECK(failed.status == 503);
    CHECK(failed.body == R"({"errorCode":5000000,"errorMessage":"An unknown error occurred."})");
    CHECK(f.client.post(f.emulator.control_url("/control/store_a/history"), R"({"page_size":0})")
            .status
          == 400);
    REQUIRE(f.client.post(f.emulator.control_url("/control/reset"), "").status == 200);
    f.register_key({{"issuer_id", issuer_id},
                    {"key_id", key_id},
                    {"bundle_id", bundle_id},
                    {"public_key_pem", public_key_pem(f.key.key())}});
    f.register_transaction(of("2000000500000001", "alice"));
    REQUIRE(f.client
              .put(f.emulator.control_url("/control/stores/store_a/mode"),
                   R"({"mode":"error","status":503})")
              .status
            == 200);
    CHECK(history(f, true, "2000000500000001").status == 503);
  }
  SECTION("unknown here, or a bad JWT") {
    CHECK(history(f, false, "2000000500000001").body == not_found_body); // a Sandbox one
    CHECK(history(f, true, "1").body == not_found_body);
    auto production_page = history(f, false, "2000000500000004").json();
    CHECK(transaction_ids(production_page, f.root_pem)
          == std::vector<std::string>{"2000000500000004"});
    auto r = history(f, true, "2000000500000001", "", "not.a-jwt");
    CHECK(r.status == 401);
    CHECK(r.body.empty());
    CHECK(f.calls("server_api_unauthorized") == 1);
  }
}

// ---- Get App Transaction Info

namespace {

http_result app_transaction_info(server_api_fixture& f, bool sandbox, const std::string& id) {
  const auto path = std::string(sandbox ? "/sandbox" : "")
    + "/inApps/v1/transactions/appTransactions/" + id;
  return f.client.get(f.emulator.store_a_url(path), {"Authorization: Bearer " + f.jwt()});
}

json::object register_app_transaction(server_api_fixture& f, const json::object& o) {
  auto r = f.client.post(f.emulator.control_url("/control/store_a/app_transactions"),
                         json::serialize(o));
  REQUIRE(r.status == 200);
  return r.json().as_object();
}

} // namespace

TEST_CASE("store_a server API: Get App Transaction Info") {
  server_api_fixture f;
  const std::string id = "704289572311552238";
  auto reg = register_app_transaction(f, {{"app_transaction_id", id},
                                          {"bundle_id", bundle_id},
                                          {"environment", "Production"},
                                          {"original_application_version", "1.2"},
                                          {"original_purchase_date_ms", 1600000000000}});
  const auto device_jws = std::string(reg.at("signed_app_transaction").as_string());

  SECTION("the device's JWS is bound to its nonce and id, and verifies like Apple's") {
    auto p = checked_payload(device_jws, f.root_pem);
    CHECK(p.at("appTransactionId").as_string() == id);
    CHECK(p.at("receiptType").as_string() == "Production");
    CHECK(p.at("originalApplicationVersion").as_string() == "1.2");
    CHECK(p.at("originalPurchaseDate").as_int64() == 1600000000000);
    CHECK(p.at("deviceVerification").as_string()
          == ts::device_verification_of(reg.at("device_verification_nonce").as_string(),
                                        reg.at("device_verification_id").as_string()));
  }
  SECTION("200 at its host with signedAppTransactionInfo bound to no device; 404 at the other") {
    auto r = app_transaction_info(f, false, id);
    REQUIRE(r.status == 200);
    auto info = std::string(r.json().at("signedAppTransactionInfo").as_string());
    auto p = checked_payload(info, f.root_pem);
    CHECK(p.at("appTransactionId").as_string() == id);
    CHECK(p.at("deviceVerification").is_null());
    CHECK(f.calls("app_transaction_production") == 1);
    auto other = app_transaction_info(f, true, id);
    CHECK(other.status == 404);
    CHECK(other.json().at("errorCode").as_int64() == 4040019);
  }
  SECTION("asked by a transaction of the customer that names it") {
    f.register_transaction({{"transaction_id", "2000000000000777"},
                            {"bundle_id", bundle_id},
                            {"product_id", "com.example.receiptd.monthly"},
                            {"environment", "Production"},
                            {"app_transaction_id", id}});
    auto r = app_transaction_info(f, false, "2000000000000777");
    REQUIRE(r.status == 200);
    auto p = checked_payload(std::string(r.json().at("signedAppTransactionInfo").as_string()),
                             f.root_pem);
    CHECK(p.at("appTransactionId").as_string() == id);
  }
  SECTION("registered failures and the store's modes") {
    register_app_transaction(f, {{"app_transaction_id", id},
                                 {"bundle_id", bundle_id},
                                 {"environment", "Production"},
                                 {"http_status", 429},
                                 {"retry_after", "7"}});
    auto limited = app_transaction_info(f, false, id);
    CHECK(limited.status == 429);
    REQUIRE(f.client
              .put(f.emulator.control_url("/control/stores/store_a/mode"),
                   R"({"mode":"error","status":503})")
              .status
            == 200);
    CHECK(app_transaction_info(f, false, id).status == 503);
  }
  SECTION("an unknown id, a bad JWT") {
    CHECK(app_transaction_info(f, false, "1").status == 404);
    auto r = f.client.get(
      f.emulator.store_a_url("/inApps/v1/transactions/appTransactions/" + id),
      {"Authorization: Bearer nope"});
    CHECK(r.status == 401);
  }
}

TEST_CASE("store_a server API: accept_unregistered answers any transaction id of the bundle") {
  server_api_fixture f;
  const std::string id = "2000000555555501";
  const std::string accept = f.emulator.control_url("/control/store_a/accept_unregistered");
  CHECK(f.get(false, id).body == not_found_body);
  auto on = f.client.put(accept, R"({"bundle_id":"com.example.receiptd",
                                     "product_id":"com.example.receiptd.gems"})");
  REQUIRE(on.status == 200);
  CHECK(on.json().at("type").as_string() == "Consumable");
  const auto before = now_ms();
  for (bool sandbox : {false, true}) {
    auto r = f.get(sandbox, id);
    REQUIRE(r.status == 200);
    auto p = checked_payload(signed_info(r), f.root_pem);
    CHECK(p.at("transactionId").as_string() == id);
    CHECK(p.at("originalTransactionId").as_string() == id);
    CHECK(p.at("bundleId").as_string() == bundle_id);
    CHECK(p.at("productId").as_string() == "com.example.receiptd.gems");
    CHECK(p.at("type").as_string() == "Consumable");
    CHECK(!p.contains("expiresDate"));
    CHECK(p.at("environment").as_string() == (sandbox ? "Sandbox" : "Production"));
    CHECK(p.at("purchaseDate").as_int64() >= before);
    CHECK(product_verdict(signed_info(r), f.root_pem).reason
          == receiptd::model::fraud_reason::none);
  }
  CHECK(f.calls("server_api_production") == 2); // the 404 before it was on, then this one
  CHECK(f.calls("server_api_sandbox") == 1);

  SECTION("a registered transaction keeps its own answer") {
    f.register_transaction(minimal_transaction("2000000555555502", "Sandbox"));
    CHECK(f.get(false, "2000000555555502").body == not_found_body);
  }
  SECTION("a JWT of another bundle: 404 as before") {
    ts::test_cert other = ec_key();
    f.register_key({{"issuer_id", issuer_id},
                    {"key_id", "OTHERKEY01"},
                    {"bundle_id", "com.example.other"},
                    {"public_key_pem", public_key_pem(other.key())}});
    auto token = make_es256_jwt(other.key(), server_api_header("OTHERKEY01"),
                                server_api_claims(issuer_id, "com.example.other"));
    CHECK(f.get(false, id, token).body == not_found_body);
    CHECK(f.get(false, id, "").status == 401);
  }
  SECTION("enabled false stops it") {
    REQUIRE(f.client.put(accept, R"({"bundle_id":"com.example.receiptd","enabled":false})").status
            == 200);
    CHECK(f.get(false, id).body == not_found_body);
  }
  SECTION("a reset forgets it") {
    REQUIRE(f.client.post(f.emulator.control_url("/control/reset"), "{}").status == 200);
    f.register_key({{"issuer_id", issuer_id},
                    {"key_id", key_id},
                    {"bundle_id", bundle_id},
                    {"public_key_pem", public_key_pem(f.key.key())}});
    CHECK(f.get(false, id).body == not_found_body);
  }
  SECTION("a subscription type expires in 30 days") {
    REQUIRE(f.client.put(accept, R"({"bundle_id":"com.example.receiptd","product_id":"m",
                                     "type":"Auto-Renewable Subscription"})").status == 200);
    auto p = checked_payload(signed_info(f.get(false, id)), f.root_pem);
    CHECK(p.at("expiresDate").as_int64() - p.at("purchaseDate").as_int64() == 30LL * 86400000);
  }
  SECTION("no product_id: 400") {
    CHECK(f.client.put(accept, R"({"bundle_id":"com.example.receiptd"})").status == 400);
  }
}

TEST_CASE("store_a server API: --server-api-pki signs with a PKI kept in a file") {
  auto pki = ts::make_jws_pki("receiptd emulator test kept");
  char dir[] = "/tmp/emulator-pki-XXXXXX";
  REQUIRE(::mkdtemp(dir));
  const std::string file = std::string(dir) + "/pki.pem";
  {
    std::ofstream out(file, std::ios::binary);
    out << ts::jws_pki_pem(pki);
  }
  // The text round-trips: the same certificates, a key that signs for the leaf.
  auto loaded = ts::load_jws_pki(ts::jws_pki_pem(pki));
  CHECK(loaded.root.pem() == pki.root.pem());
  CHECK(loaded.intermediate.pem() == pki.intermediate.pem());
  CHECK(loaded.leaf.pem() == pki.leaf.pem());
  CHECK(loaded.leaf.key_pem() == pki.leaf.key_pem());

  server_api_fixture f({"--server-api-pki=" + file});
  CHECK(f.root_pem == pki.root.pem());
  const std::string id = "2000000555555601";
  auto reg = f.register_transaction(minimal_transaction(id, "Production"));
  auto r = f.get(false, id);
  REQUIRE(r.status == 200);
  for (const auto& jws : {signed_info(r), std::string(reg.at("signed_transaction").as_string())}) {
    checked_payload(jws, pki.root.pem());
    CHECK(decode_jws(jws).header.at("x5c").at(0).as_string()
          == receiptd::model::base64_encode(pki.leaf.der()));
  }
  std::remove(file.c_str());
  ::rmdir(dir);
}
