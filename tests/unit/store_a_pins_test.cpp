// iOS 6 transaction receipts are pinned per signature blob version:
// a certificate that merely chains to Apple — a developer certificate from the
// WWDR CA, whose private key every developer holds — signs nothing. The test
// PKI carries Apple's markers and names (test_ca.hpp), the real vectors keep
// verifying (store_a_vectors_test.cpp), and the verification cache never
// stands in for the pins.

#include <catch2/catch.hpp>

#include "model/store_a/trust.hpp" // internal: the cache is looked at directly
#include "tests/support/crypto/test_ca.hpp"
#include "tests/unit/store_a_fixtures.hpp"

using namespace store_a_fixtures;
using namespace receiptd::model;
namespace ts = receiptd::test_support;

namespace {

const ts::test_pki& pki() {
  static const auto p = ts::make_test_pki({"receiptd pins"});
  return p;
}

std::shared_ptr<const sa::trust_anchors> anchors() {
  return load(
    {{pki().root.pem()}, {pki().intermediate.pem(), pki().itunes_intermediate.pem()}, {}});
}

// A certificate issued by `issuer` of the test PKI; `shape` edits the options
// of an Apple-like receipt-signing leaf first.
template <class Shape>
ts::test_cert leaf_under(const ts::test_cert& issuer, int bits, Shape shape) {
  ts::cert_options o;
  o.common_name = ts::apple_receipt_signing_name;
  o.organization = ts::apple_organization;
  o.organizational_unit = "Apple Worldwide Developer Relations";
  o.key_bits = bits;
  o.marker_oids = {ts::apple_receipt_signing_oid};
  shape(o);
  return ts::make_cert(o, &issuer);
}

// What Apple's WWDR CA gives every developer: "iPhone Developer: …", code
// signing, Apple's developer marker OID.
const ts::test_cert& developer_certificate() {
  static const auto c = leaf_under(pki().intermediate, 2048, [](ts::cert_options& o) {
    o.common_name = "iPhone Developer: Mallory Example (ABCDE12345)";
    o.organization = "Mallory Example";
    o.organizational_unit = "ABCDE12345";
    o.marker_oids = {ts::apple_iphone_developer_oid};
    o.extended_key_usage = "codeSigning";
  });
  return c;
}

ts::transaction_receipt_params params(int version) {
  ts::transaction_receipt_params p;
  p.blob_version = version;
  p.bundle_id = "com.victim.app";
  p.purchase_date = ts::utc(2024, 3, 1);
  return p;
}

sa::verification verify(const std::string& bytes, const sa::trust_anchors& a) {
  return sa::verify_receipt(bytes, a, "com.victim.app", std::nullopt);
}

} // namespace

TEST_CASE("Apple-like test leaves pass the pins of their blob version",
          "[store_a][hostile][pins]") {
  auto a = anchors();
  auto v2 = verify(ts::make_transaction_receipt(params(2), pki().transaction_leaf_v2), *a);
  INFO(v2.detail);
  CHECK(v2.reason == fraud_reason::none);
  auto v3 = verify(ts::make_transaction_receipt(params(3), pki().leaf), *a);
  INFO(v3.detail);
  CHECK(v3.reason == fraud_reason::none);
}

TEST_CASE("a developer certificate from the WWDR CA cannot sign a v3 transaction receipt",
          "[store_a][hostile][pins]") {
  auto a = anchors();
  auto bytes = ts::make_transaction_receipt(params(3), developer_certificate());
  auto v = verify(bytes, *a);
  CHECK(v.reason == fraud_reason::untrusted_certificate);
  CHECK_THAT(v.detail, Catch::Contains("1.2.840.113635.100.6.11.1"));
  // Nothing of the forged receipt is kept, and the refused leaf is not remembered.
  REQUIRE(v.receipt);
  CHECK(v.receipt->in_app.empty());
  CHECK(a->cache().certificate_count() == 0);
  CHECK(verify(bytes, *a).reason == fraud_reason::untrusted_certificate);
}

TEST_CASE("every leaf pin is needed", "[store_a][hostile][pins]") {
  auto a = anchors();
  auto expect_refused = [&](const ts::test_cert& leaf, int version, const char* why) {
    auto v = verify(ts::make_transaction_receipt(params(version), leaf), *a);
    INFO(v.detail);
    CHECK(v.reason == fraud_reason::untrusted_certificate);
    CHECK_THAT(v.detail, Catch::Contains(why));
  };
  SECTION("the receipt-signing OID with an extended key usage (a push certificate's shape)") {
    expect_refused(leaf_under(pki().intermediate, 2048,
                              [](ts::cert_options& o) { o.extended_key_usage = "clientAuth"; }),
                   3, "extended key usage");
  }
  SECTION("a CA certificate") {
    expect_refused(
      leaf_under(pki().intermediate, 2048, [](ts::cert_options& o) { o.is_ca = true; }), 3,
      "CA certificate");
  }
  SECTION("v3: not Apple's organisation") {
    expect_refused(leaf_under(pki().intermediate, 2048,
                              [](ts::cert_options& o) { o.organization = "Apple Inc"; }),
                   3, "subject");
  }
  SECTION("v2: the v3 OID is not the v2 one") {
    expect_refused(leaf_under(pki().itunes_intermediate, 1024,
                              [](ts::cert_options& o) {
                                o.common_name = ts::apple_purchase_receipt_name;
                                o.organizational_unit = "Apple iTunes Store";
                              }),
                   2, "1.2.840.113635.100.6.5.1");
  }
  SECTION("v2: another common name") {
    expect_refused(leaf_under(pki().itunes_intermediate, 1024,
                              [](ts::cert_options& o) {
                                o.common_name = "PurchaseReceiptCertificate2";
                                o.organizational_unit = "Apple iTunes Store";
                                o.marker_oids = {ts::apple_purchase_receipt_oid};
                              }),
                   2, "subject");
  }
}

TEST_CASE("the issuer is pinned per blob version", "[store_a][hostile][pins]") {
  auto a = anchors();
  SECTION("a v2-shaped leaf under the WWDR CA") {
    auto leaf = leaf_under(pki().intermediate, 1024, [](ts::cert_options& o) {
      o.common_name = ts::apple_purchase_receipt_name;
      o.organizational_unit = "Apple iTunes Store";
      o.marker_oids = {ts::apple_purchase_receipt_oid};
    });
    auto v = verify(ts::make_transaction_receipt(params(2), leaf), *a);
    CHECK(v.reason == fraud_reason::untrusted_certificate);
    CHECK_THAT(v.detail, Catch::Contains("1.2.840.113635.100.6.2.2"));
  }
  SECTION("a receipt-signing leaf under the iTunes Store CA") {
    auto leaf = leaf_under(pki().itunes_intermediate, 2048, [](ts::cert_options&) {});
    auto v = verify(ts::make_transaction_receipt(params(3), leaf), *a);
    CHECK(v.reason == fraud_reason::untrusted_certificate);
    CHECK_THAT(v.detail, Catch::Contains("1.2.840.113635.100.6.2.1"));
  }
  SECTION("an intermediate with the marker but not the name") {
    ts::cert_options o;
    o.common_name = "Apple Worldwide Developer Relations CA";
    o.organization = ts::apple_organization;
    o.organizational_unit = "pins: renamed";
    o.is_ca = true;
    o.marker_oids = {ts::apple_wwdr_intermediate_oid};
    auto renamed = ts::make_cert(o, &pki().root);
    auto leaf = leaf_under(renamed, 2048, [](ts::cert_options&) {});
    auto with_renamed = load({{pki().root.pem()}, {renamed.pem()}, {}});
    auto v = verify(ts::make_transaction_receipt(params(3), leaf), *with_renamed);
    CHECK(v.reason == fraud_reason::untrusted_certificate);
    CHECK_THAT(v.detail, Catch::Contains("is not the Apple Worldwide Developer Relations"));
  }
}

TEST_CASE("the verification cache does not stand in for the pins",
          "[store_a][hostile][pins][cache]") {
  auto a = anchors();
  const auto& cache = a->cache();
  // A genuine v3 receipt puts its chain into the cache …
  auto good = ts::make_transaction_receipt(params(3), pki().leaf);
  REQUIRE(verify(good, *a).reason == fraud_reason::none);
  const auto leaf_der = pki().leaf.der();
  CHECK(cache.known_chain(sa::verification_cache::chain_kind::transaction_v3, leaf_der,
                          ts::utc(2024, 3, 1), {}));
  // … which stands for that blob version only, …
  CHECK_FALSE(cache.known_chain(sa::verification_cache::chain_kind::transaction_v2, leaf_der,
                                ts::utc(2024, 3, 1), {}));
  CHECK_FALSE(cache.known_chain(sa::verification_cache::chain_kind::unified, leaf_der,
                                ts::utc(2024, 3, 1), {}));
  // … and the developer certificate under the same (remembered) intermediate is
  // still refused, every time.
  auto forged = ts::make_transaction_receipt(params(3), developer_certificate());
  for (int i = 0; i < 3; ++i)
    CHECK(verify(forged, *a).reason == fraud_reason::untrusted_certificate);
  CHECK(verify(good, *a).reason == fraud_reason::none);
}
