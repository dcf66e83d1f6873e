// Hostile Store A uploads through the real binary: a
// developer certificate from the configured WWDR-like CA signing a transaction
// receipt, an in-app flood signed by nobody and by the configured test PKI, the
// largest answer a genuine receipt can produce, and oversized keys — on the
// database under test.
#include <catch2/catch.hpp>

#include <chrono>

#include <openssl/x509.h>

#include "harness.hpp"
#include "model/encoding.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;
namespace ts = receiptd::test_support;

namespace {

constexpr const char* receipts = "/client/store_a/receipts";

std::string body_of(const std::string& receipt_der) {
  return json::serialize(json::object{{"receipt", model::base64_encode(receipt_der)}});
}

struct timed_response {
  http_response r;
  double seconds = 0;
};

timed_response post(suite& s, const test_app& app, const std::string& body) {
  auto start = std::chrono::steady_clock::now();
  timed_response t{s.service.post(receipts, body, app.token)};
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return t;
}

// The stored record as receiptctl shows it (with store_detail).
json::value stored(suite& s, const std::string& id) {
  auto r = s.ctl({"record", "show", id});
  INFO(r.err << r.out);
  REQUIRE(r.code == 0);
  return r.json;
}

// A 402 with the given code whose record GET returns, without in-app purchases.
std::string expect_refused_without_purchases(suite& s, const test_app& app, const timed_response& t,
                                             const std::string& code) {
  INFO(t.r.body.substr(0, 400) << t.r.error);
  REQUIRE(t.r.status == 402);
  auto j = t.r.json();
  CHECK(str(j.at("errors").at(0).at("code")) == code);
  auto id = str(j.at("receipt").at("id"));
  CHECK(j.at("receipt").at("in_app_purchases").as_array().empty());
  auto got = s.service.get(std::string(receipts) + "/" + id, app.token);
  REQUIRE(got.status == 200);
  CHECK(str(got.json().at("fraud_reason")) == code);
  CHECK(got.json().at("in_app_purchases").as_array().empty());
  return id;
}

ts::transaction_receipt_params transaction_for(const std::string& bundle, int version) {
  ts::transaction_receipt_params p;
  p.bundle_id = bundle;
  p.blob_version = version;
  p.purchase_date = ts::utc(2024, 3, 1);
  p.transaction_id = unique("2000");
  p.environment.reset();
  return p;
}

} // namespace

TEST_CASE("a developer certificate from the configured WWDR CA cannot sign a transaction receipt",
          "[store_a][hostile][pins]") {
  auto& s = the_suite();
  auto bundle = unique("com.example.victim");
  auto app = create_store_a_app(s, bundle);
  // The suite's WWDR-like intermediate is configured as trust material, like
  // Apple's; it issues a developer certificate (code signing, Apple's developer
  // marker), whose key a developer holds.
  ts::cert_options o;
  o.common_name = "iPhone Developer: Mallory Example (ABCDE12345)";
  o.organization = "Mallory Example";
  o.organizational_unit = "ABCDE12345";
  o.marker_oids = {ts::apple_iphone_developer_oid};
  o.extended_key_usage = "codeSigning";
  auto developer = ts::make_cert(o, &s.pki.intermediate);
  auto forged = ts::make_transaction_receipt(transaction_for(bundle, 3), developer);
  auto t = post(s, app, body_of(forged));
  auto id = expect_refused_without_purchases(s, app, t, "untrusted_certificate");
  CHECK_THAT(str(stored(s, id).at("store_detail")),
             Catch::Contains("receipt-signing OID 1.2.840.113635.100.6.11.1"));

  SECTION("Apple-shaped leaves of the same PKI pass, v2 and v3") {
    auto v3
      = post(s, app, body_of(ts::make_transaction_receipt(transaction_for(bundle, 3), s.pki.leaf)));
    INFO(v3.r.body);
    CHECK(v3.r.status == 200);
    auto v2 = post(
      s, app,
      body_of(ts::make_transaction_receipt(transaction_for(bundle, 2), s.pki.transaction_leaf_v2)));
    INFO(v2.r.body);
    CHECK(v2.r.status == 200);
  }
}

TEST_CASE("an in-app flood gets a complete answer and is stored without its purchases",
          "[store_a][hostile][flood]") {
  auto& s = the_suite();
  auto bundle = unique("com.example.flood");
  auto app = create_store_a_app(s, bundle);
  // 65,000 tiny purchases: ~1 MiB of base64 even with a signature and its certificates.
  const auto payload = ts::make_in_app_flood_payload(65000, bundle);

  SECTION("unsigned") {
    ts::signed_data_parts parts;
    parts.content = payload;
    parts.digest_algorithms = {ts::sha256_algorithm()};
    auto body = body_of(ts::make_signed_data(parts));
    REQUIRE(body.size() > 1000000); // ~1 MiB, under http.max-body-bytes
    auto t = post(s, app, body);
    // Without the bound: decoded, 65,500 rows written, a ~16 MB answer Pistache
    // would not send: no answer at all.
    auto id = expect_refused_without_purchases(s, app, t, "invalid_signature");
    CHECK(t.seconds < 5);
    CHECK(str(stored(s, id).at("store_detail")) == "expected exactly one signer");
  }
  SECTION("validly signed by the configured test PKI: malformed (the in-app cap)") {
    auto t = post(s, app, body_of(ts::sign_pkcs7(payload, ts::apple_like_signer(s.pki))));
    auto id = expect_refused_without_purchases(s, app, t, "malformed_receipt");
    CHECK(t.seconds < 5);
    CHECK_THAT(str(stored(s, id).at("store_detail")),
               Catch::Contains("more than 2000 in-app purchases"));
  }
}

TEST_CASE("the largest answer a genuine receipt can produce arrives in full",
          "[store_a][hostile][flood]") {
  // What a validly signed receipt within the limits can put into one answer:
  // store-a.max-in-app-purchases (2,000) purchases, all but one as small as DER
  // allows (~250 bytes of JSON each), and one product id of control characters
  // (six bytes each in JSON) filling the body up to http.max-body-bytes. The
  // answer (~5 MB) must fit Pistache's response limit (http/server.cpp).
  auto& s = the_suite();
  auto bundle = unique("com.example.biggest");
  auto app = create_store_a_app(s, bundle);
  auto make = [&](std::size_t id_length) {
    ts::unified_receipt_params p;
    p.bundle_id = bundle;
    p.receipt_type = "Production";
    p.in_app = {ts::purchase(std::string(id_length, '\x01'), unique("3000"), ts::utc(2024, 5, 1))};
    for (int i = 0; i < 1999; ++i)
      p.extra_attributes.emplace_back(17, ts::der_tlv(0x31, ""));
    return body_of(ts::make_unified_receipt(p, ts::apple_like_signer(s.pki)));
  };
  const std::size_t limit = 1024 * 1024 - 2048; // http.max-body-bytes, less the JSON around
  const std::size_t length = (limit - make(0).size()) / 4 * 3;
  auto body = make(length);
  INFO("product id length " << length << ", body " << body.size());
  REQUIRE(body.size() < limit + 1024);
  auto t = post(s, app, body);
  INFO(t.r.error << t.r.body.substr(0, 300));
  // 200, or 206 when the verifyReceipt answer echoing it all is over the
  // outbound response limit: either way complete, and never fraud.
  REQUIRE((t.r.status == 200 || t.r.status == 206));
  CHECK(t.r.body.size() > 4 * 1024 * 1024);
  auto j = t.r.json();
  CHECK(j.at("in_app_purchases").as_array().size() == 2000);
  auto got = s.service.get(std::string(receipts) + "/" + str(j.at("id")), app.token);
  INFO(got.error);
  REQUIRE(got.status == 200);
  CHECK(got.json().at("in_app_purchases").as_array().size() == 2000);
  CHECK(got.body.size() > 4 * 1024 * 1024);
}

TEST_CASE("keys outside sane sizes: 402 invalid_signature, or refused when loaded",
          "[store_a][hostile][keys]") {
  auto& s = the_suite();
  static const auto big_key_leaf = [&] {
    ts::cert_options o;
    o.common_name = ts::apple_receipt_signing_name;
    o.organization = ts::apple_organization;
    o.organizational_unit = "receiptd functional";
    o.key_bits = 4160;
    o.marker_oids = {ts::apple_receipt_signing_oid};
    return ts::make_cert(o, &s.pki.intermediate);
  }();

  SECTION("a PKCS#7 signer above RSA-4096") {
    auto bundle = unique("com.example.bigkey");
    auto app = create_store_a_app(s, bundle);
    ts::unified_receipt_params p;
    p.bundle_id = bundle;
    auto der = ts::make_unified_receipt(p, ts::receipt_signer{big_key_leaf, {s.pki.intermediate}});
    auto t = post(s, app, body_of(der));
    auto id = expect_refused_without_purchases(s, app, t, "invalid_signature");
    CHECK(str(stored(s, id).at("store_detail")) == "signer RSA-4160 key: more than 4096 bits");
  }
  SECTION("a transaction leaf with a private-key-sized public exponent") {
    auto bundle = unique("com.example.bigexp");
    auto app = create_store_a_app(s, bundle);
    ts::cert_options o;
    o.common_name = ts::apple_receipt_signing_name;
    o.organization = ts::apple_organization;
    o.organizational_unit = "receiptd functional";
    o.rsa_exponent_shift = 1500;
    o.marker_oids = {ts::apple_receipt_signing_oid};
    auto leaf = ts::make_cert(o, &s.pki.intermediate);
    auto t = post(s, app, body_of(ts::make_transaction_receipt(transaction_for(bundle, 3), leaf)));
    auto id = expect_refused_without_purchases(s, app, t, "invalid_signature");
    CHECK_THAT(str(stored(s, id).at("store_detail")),
               Catch::Contains("leaf RSA-2048 key: public exponent of 1501 bits"));
  }
  SECTION("a Play licence key above RSA-4096 is refused by receiptctl") {
    unsigned char* der = nullptr;
    int n = i2d_PUBKEY(X509_get0_pubkey(big_key_leaf.x509()), &der);
    REQUIRE(n > 0);
    std::string spki(reinterpret_cast<char*>(der), static_cast<std::size_t>(n));
    OPENSSL_free(der);
    auto r
      = s.ctl({"app", "create", "--name=" + unique("bigkey"), "--package-name=com.example.bigkey",
               "--license-key=" + model::base64_encode(spki)});
    CHECK(r.code != 0);
    CHECK_THAT(r.err + r.out, Catch::Contains("RSA-4160 key: more than 4096 bits"));
  }
}

TEST_CASE("store-a.max-in-app-purchases is the cap receiptd applies",
          "[store_a][hostile][config]") {
  auto& s = the_suite();
  auto args = standard_service_args(s);
  args.push_back("--store-a.max-in-app-purchases=2");
  service_process capped(s.dir, s.db_url, args);
  capped.start();
  auto app = create_store_a_app(s, "com.example.capped");
  ts::unified_receipt_params p;
  p.bundle_id = "com.example.capped";
  p.receipt_type = "Production";
  for (int i = 0; i < 3; ++i)
    p.in_app.push_back(
      ts::purchase("com.example.pro." + std::to_string(i), unique("3000"), ts::utc(2024, 5, 1)));
  auto three = body_of(ts::make_unified_receipt(p, ts::apple_like_signer(s.pki)));
  auto r = capped.post(receipts, three, app.token);
  INFO(r.body.substr(0, 300));
  CHECK(r.status == 402);
  CHECK(r.body.find("malformed_receipt") != std::string::npos);
  p.in_app.pop_back();
  auto two = capped.post(
    receipts, body_of(ts::make_unified_receipt(p, ts::apple_like_signer(s.pki))), app.token);
  INFO(two.body.substr(0, 300));
  CHECK(two.status != 402);
  CHECK(capped.stop() == 0);
}
