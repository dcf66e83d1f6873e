// What one receipt may cost: unverified bytes are not decoded
// beyond what the next check needs, the PKCS#7 wrapper's shape is bounded before
// OpenSSL decodes it, keys outside sane sizes are refused before use, and an
// internal failure is never a fraud verdict.

#include <catch2/catch.hpp>

#include <chrono>
#include <stdexcept>

#include "model/store_a/ber.hpp"
#include "model/store_a/plist.hpp"
#include "tests/support/crypto/test_ca.hpp"
#include "tests/unit/store_a_fixtures.hpp"

using namespace store_a_fixtures;
using namespace receiptd::model;
namespace ts = receiptd::test_support;
namespace ber = receiptd::model::store_a::ber;

namespace {

const ts::test_pki& pki() {
  static const auto p = ts::make_test_pki({"receiptd limits"});
  return p;
}

const sa::trust_anchors& anchors() {
  static const auto a = load({{pki().root.pem()}, {pki().intermediate.pem()}, {}});
  return *a;
}

const char* const bundle = "com.example.receiptd";

sa::verification verify(const std::string& bytes, std::size_t max_in_app = 2000) {
  sa::verify_options o;
  o.max_in_app_purchases = max_in_app;
  return sa::verify_receipt(bytes, anchors(), bundle, std::nullopt, o);
}

// Milliseconds `f` took (the test PKI is made first: key generation is not timed).
template <class F>
double millis(F&& f) {
  anchors();
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
    .count();
}

std::string flood_signed_by(const ts::receipt_signer& signer, std::size_t n) {
  return ts::sign_pkcs7(ts::make_in_app_flood_payload(n, bundle), signer);
}

} // namespace

// ---- in-app flood --------------------------------------------------------------

TEST_CASE("an unsigned in-app flood is refused without decoding its purchases",
          "[store_a][hostile][flood]") {
  ts::signed_data_parts parts;
  parts.content = ts::make_in_app_flood_payload(65500, bundle);
  parts.digest_algorithms = {ts::sha256_algorithm()};
  auto unsigned_flood = ts::make_signed_data(parts);
  REQUIRE(unsigned_flood.size() > 780000);
  sa::verification v;
  auto ms = millis([&] { v = verify(unsigned_flood); });
  CHECK(v.reason == fraud_reason::invalid_signature);
  CHECK(v.detail == "expected exactly one signer");
  REQUIRE(v.receipt);
  CHECK(v.receipt->style == receipt_style::unified);
  CHECK(v.receipt->in_app.empty()); // unbounded: 65,500 purchases, stored as rows
  CHECK(v.receipt->bundle_id.empty());
  CHECK(ms < 50); // a linear walk of the wrapper, nothing decoded
}

TEST_CASE("a flood under an untrusted signer is refused before its payload is decoded",
          "[store_a][hostile][flood]") {
  static const auto rogue = [] {
    ts::pki_options o;
    o.name = "receiptd limits rogue"; // configured nowhere
    o.with_itunes = false;
    return ts::make_test_pki(o);
  }();
  auto v = verify(flood_signed_by(ts::apple_like_signer(rogue), 65500));
  CHECK(v.reason == fraud_reason::untrusted_certificate);
  REQUIRE(v.receipt);
  CHECK(v.receipt->in_app.empty());
}

TEST_CASE("a validly signed flood is malformed: the in-app cap", "[store_a][hostile][flood]") {
  auto signer = ts::apple_like_signer(pki());
  auto v = verify(flood_signed_by(signer, 65500));
  CHECK(v.reason == fraud_reason::malformed_receipt);
  CHECK_THAT(v.detail, Catch::Contains("more than 2000 in-app purchases"));
  CHECK_FALSE(v.receipt);

  SECTION("the cap is exact and configurable") {
    CHECK(verify(flood_signed_by(signer, 2000)).reason == fraud_reason::none);
    CHECK(verify(flood_signed_by(signer, 2001)).reason == fraud_reason::malformed_receipt);
    CHECK(verify(flood_signed_by(signer, 5), 5).reason == fraud_reason::none);
    auto six = verify(flood_signed_by(signer, 6), 5);
    CHECK(six.reason == fraud_reason::malformed_receipt);
    CHECK_THAT(six.detail, Catch::Contains("more than 5 in-app purchases"));
  }
  SECTION("decode_receipt applies the default cap too") {
    auto d = sa::decode_receipt(flood_signed_by(signer, 2001));
    REQUIRE_FALSE(d);
    CHECK_THAT(d.errors().front().message, Catch::Contains("in-app purchases"));
    CHECK(sa::decode_receipt(flood_signed_by(signer, 2000)));
  }
}

// ---- the PKCS#7 wrapper's shape ------------------------------------------------

namespace {

ts::signed_data_parts good_parts() {
  ts::signed_data_parts p;
  p.content = ts::make_unified_payload({});
  p.digest_algorithms = {ts::sha256_algorithm()};
  return p;
}

sa::verification verify_parts(const ts::signed_data_parts& p) {
  return verify(ts::make_signed_data(p));
}

} // namespace

TEST_CASE("the wrapper's shape is bounded before it is decoded", "[store_a][hostile][pkcs7]") {
  auto p = good_parts();
  SECTION("unsigned but well-formed: a signature failure, not malformed") {
    CHECK(verify_parts(p).reason == fraud_reason::invalid_signature);
  }
  SECTION("a nested SignedData as the content, full of certificates") {
    // Unbounded, OpenSSL decoded every certificate of the inner SignedData
    // (113 ms for these 800 on this hardware) before the content type was checked.
    ts::signed_data_parts inner = p;
    for (int i = 0; i < 800; ++i)
      inner.certificates.push_back(pki().leaf.der());
    auto inner_der = ts::make_signed_data(inner); // a ContentInfo of SignedData
    p.content_info = inner_der;
    auto bytes = ts::make_signed_data(p);
    REQUIRE(bytes.size() > 700000);
    sa::verification v;
    auto ms = millis([&] { v = verify(bytes); });
    CHECK(v.reason == fraud_reason::malformed_receipt);
    CHECK_THAT(v.detail, Catch::Contains("content as data"));
    CHECK(ms < 50);
  }
  SECTION("9 digest algorithms") {
    p.digest_algorithms.assign(9, ts::sha256_algorithm());
    CHECK(verify_parts(p).reason == fraud_reason::malformed_receipt);
    p.digest_algorithms.resize(8);
    CHECK(verify_parts(p).reason == fraud_reason::invalid_signature);
  }
  SECTION("a certificate larger than any Apple certificate") {
    p.certificates = {ts::der_tlv(0x30, std::string(17 * 1024, '\x05'))};
    auto v = verify_parts(p);
    CHECK(v.reason == fraud_reason::malformed_receipt);
    CHECK_THAT(v.detail, Catch::Contains("certificates"));
  }
  SECTION("17 CRLs") {
    p.crls.assign(17, ts::der_tlv(0x30, ""));
    CHECK(verify_parts(p).reason == fraud_reason::malformed_receipt);
  }
  SECTION("signer infos: 5 are malformed, 2 are not one signer, 8 KiB is the most") {
    // version, issuerAndSerialNumber (empty name, serial 1), SHA-256,
    // rsaEncryption, a signature that signs nothing.
    auto si = ts::der_tlv(
      0x30,
      ts::der_tlv(0x02, "\x01")
        + ts::der_tlv(0x30, ts::der_tlv(0x30, "") + ts::der_tlv(0x02, "\x01"))
        + ts::sha256_algorithm()
        + ts::der_tlv(0x30, std::string("\x06\x09\x2A\x86\x48\x86\xF7\x0D\x01\x01\x01\x05\x00", 13))
        + ts::der_tlv(0x04, "signature"));
    p.signer_infos = {si};
    CHECK(verify_parts(p).detail == "signer certificate is not embedded");
    p.signer_infos.assign(5, si);
    CHECK(verify_parts(p).reason == fraud_reason::malformed_receipt);
    p.signer_infos.resize(2);
    auto two = verify_parts(p);
    CHECK(two.reason == fraud_reason::invalid_signature);
    CHECK(two.detail == "expected exactly one signer");
    // An issuer name of 55,000 entries took 136 ms to decode.
    p.signer_infos = {ts::der_tlv(0x30, std::string(9 * 1024, '\x05'))};
    CHECK(verify_parts(p).reason == fraud_reason::malformed_receipt);
  }
  SECTION("not SignedData") {
    auto bytes = ts::make_signed_data(p);
    auto at = bytes.find(std::string("\x2A\x86\x48\x86\xF7\x0D\x01\x07\x02", 9));
    REQUIRE(at != std::string::npos);
    bytes[at + 8] = 0x03; // …07.02 → …07.03 (envelopedData)
    auto v = verify(bytes);
    CHECK(v.reason == fraud_reason::malformed_receipt);
    CHECK_THAT(v.detail, Catch::Contains("not SignedData"));
  }
}

TEST_CASE("the BER walker", "[store_a][hostile][ber]") {
  auto read = [](std::string s) {
    std::string_view in = s;
    auto e = ber::read(in);
    return std::pair{e.has_value(), e ? e->whole.size() : 0};
  };
  using namespace std::string_literals;
  CHECK(read("\x30\x00"s) == std::pair{true, std::size_t{2}});
  CHECK(read("\x30\x80\x04\x01x\x00\x00"s) == std::pair{true, std::size_t{7}});
  CHECK(read("\x30\x80\x30\x80\x00\x00\x00\x00"s) == std::pair{true, std::size_t{8}});
  CHECK_FALSE(read("\x30\x80\x04\x01x"s).first);        // no end-of-contents
  CHECK_FALSE(read("\x04\x80\x00\x00"s).first);         // indefinite primitive
  CHECK_FALSE(read("\x00\x00"s).first);                 // end-of-contents as an element
  CHECK_FALSE(read("\x30\xFF"s).first);                 // reserved length form
  CHECK_FALSE(read("\x30\x84\xFF\xFF\xFF\xFF"s).first); // longer than the input
  CHECK_FALSE(read("\x30\x89\x01\x00\x00\x00\x00\x00\x00\x00\x00"s).first); // > size_t
  CHECK(read("\x1F\x81\x00\x00"s) == std::pair{true, std::size_t{4}});      // high tag number 128
  CHECK_FALSE(read("\x1F\x81\x81\x81\x81\x01\x00"s).first); // tag number beyond 28 bits
  // Nesting of indefinite lengths: 30 levels are walked, 31 are refused, and
  // 100,000 cost one linear pass (no recursion, no stack).
  auto nested = [](int depth) {
    std::string s;
    for (int i = 0; i < depth; ++i)
      s += "\x30\x80"s;
    for (int i = 0; i < depth; ++i)
      s += "\x00\x00"s;
    return s;
  };
  CHECK(read(nested(30)).first);
  CHECK_FALSE(read(nested(31)).first);
  CHECK_FALSE(read(nested(100000)).first);
  // Children and counting.
  std::string set = "\x31\x80\x02\x01\x01\x02\x01\x02\x02\x01\x03\x00\x00"s;
  std::string_view in = set;
  auto e = ber::read(in);
  REQUIRE(e);
  CHECK(ber::count_children(*e, 5) == std::size_t{3});
  CHECK(ber::count_children(*e, 2) == std::size_t{3}); // stops after limit + 1
}

TEST_CASE("every real receipt passes the shape check, BER ones included",
          "[store_a][hostile][pkcs7]") {
  for (const char* name : unified_vectors) {
    INFO(name);
    CHECK(sa::decode_receipt(vector_bytes("apple-unified", name)));
  }
}

// ---- keys outside sane sizes ----------------------------------------------------

namespace {

// An Apple-like leaf under the test WWDR CA with a key of the given shape.
ts::test_cert odd_leaf(const std::string& algorithm, int bits, int exponent_shift = 0) {
  ts::cert_options o;
  o.common_name = ts::apple_receipt_signing_name;
  o.organization = ts::apple_organization;
  o.organizational_unit = "receiptd limits";
  o.key_algorithm = algorithm;
  o.key_bits = bits;
  o.rsa_exponent_shift = exponent_shift;
  o.marker_oids = {ts::apple_receipt_signing_oid};
  return ts::make_cert(o, &pki().intermediate);
}

sa::verification verify_signed_by(const ts::test_cert& leaf) {
  return verify(ts::make_unified_receipt({}, ts::receipt_signer{leaf, {pki().intermediate}}));
}

} // namespace

TEST_CASE("PKCS#7 signer keys outside sane sizes are refused before use",
          "[store_a][hostile][keys]") {
  SECTION("RSA-2048: fine") {
    CHECK(verify_signed_by(pki().leaf).reason == fraud_reason::none);
  }
  SECTION("RSA above 4096 bits") {
    auto v = verify_signed_by(odd_leaf("RSA", 4160));
    CHECK(v.reason == fraud_reason::invalid_signature);
    CHECK(v.detail == "signer RSA-4160 key: more than 4096 bits");
  }
  SECTION("RSA below 1024 bits") {
    auto v = verify_signed_by(odd_leaf("RSA", 768));
    CHECK(v.reason == fraud_reason::invalid_signature);
    CHECK(v.detail == "signer RSA-768 key: fewer than 1024 bits");
  }
  SECTION("a public exponent as long as a private one") {
    // OpenSSL accepts e up to the modulus' size below 3,072 bits: one
    // verification then costs a private-key operation.
    auto v = verify_signed_by(odd_leaf("RSA", 2048, 1500));
    CHECK(v.reason == fraud_reason::invalid_signature);
    CHECK_THAT(v.detail, Catch::Contains("public exponent of 1501 bits"));
  }
  SECTION("DSA") {
    auto v = verify_signed_by(odd_leaf("DSA", 1024));
    CHECK(v.reason == fraud_reason::invalid_signature);
    CHECK(v.detail == "signer key is neither RSA nor EC");
  }
  SECTION("EC: verified as usual") {
    CHECK(verify_signed_by(odd_leaf("EC", 256)).reason == fraud_reason::none);
  }
}

TEST_CASE("transaction leaf keys outside sane sizes are refused before use",
          "[store_a][hostile][keys]") {
  ts::transaction_receipt_params p;
  p.blob_version = 3;
  p.bundle_id = bundle;
  auto v = verify(ts::make_transaction_receipt(p, odd_leaf("RSA", 2048, 1500)));
  CHECK(v.reason == fraud_reason::invalid_signature);
  CHECK_THAT(v.detail, Catch::Contains("leaf RSA-2048 key: public exponent of 1501 bits"));
}

// ---- plist size -----------------------------------------------------------------

TEST_CASE("plists hold at most 128 entries", "[store_a][hostile][plist]") {
  std::string text = "{";
  for (int i = 0; i < 200000; ++i)
    text += "k" + std::to_string(i) + "=v;";
  text += "}";
  sa::verification v;
  auto ms = millis([&] { v = verify(text); });
  CHECK(v.reason == fraud_reason::malformed_receipt);
  CHECK_THAT(v.detail, Catch::Contains("more than 128 entries"));
  CHECK(ms < 20);
  std::string ok = "{";
  for (std::size_t i = 0; i < sa::max_plist_entries; ++i)
    ok += "k" + std::to_string(i) + "=v;";
  CHECK(sa::parse_plist_dict(ok + "}", "test"));
  CHECK_FALSE(sa::parse_plist_dict(ok + "x=y;}", "test"));
}

TEST_CASE("a transaction leaf larger than any Apple certificate is malformed",
          "[store_a][hostile][plist]") {
  ts::transaction_receipt_params p;
  auto text = ts::make_transaction_receipt(p, pki().transaction_leaf_v2);
  auto d = sa::decode_receipt(text);
  REQUIRE(d);
  auto t = std::get<sa::transaction_receipt>(d->detail);
  std::string huge_cert = ts::der_tlv(0x30, std::string(20 * 1024, '\x05'));
  std::string blob(1, '\x02');
  blob += t.signature;
  for (int shift = 24; shift >= 0; shift -= 8)
    blob += static_cast<char>((huge_cert.size() >> shift) & 0xFF);
  blob += huge_cert;
  std::string forged = "{\"signature\" = \"" + base64_encode(blob) + "\"; \"purchase-info\" = \""
    + base64_encode(t.purchase_info_bytes) + "\";}";
  auto v = verify(forged);
  CHECK(v.reason == fraud_reason::malformed_receipt);
  CHECK_THAT(v.detail, Catch::Contains("larger than any Apple certificate"));
}

// ---- internal failures -----------------------------------------------------------

TEST_CASE("an internal failure is never a fraud verdict", "[store_a][hostile][internal]") {
  auto bytes = ts::make_unified_receipt({}, ts::apple_like_signer(pki()));
  sa::verify_options o;
  SECTION("bad_alloc") {
    o.fault_for_tests = [] { throw std::bad_alloc(); };
  }
  SECTION("any other exception") {
    o.fault_for_tests = [] { throw std::runtime_error("OpenSSL internal error"); };
  }
  auto v = sa::verify_receipt(bytes, anchors(), bundle, std::nullopt, o);
  CHECK(v.internal_error);
  CHECK(v.reason == fraud_reason::none); // once malformed_receipt, a fraud verdict
  CHECK_FALSE(v.receipt);
  CHECK(v.detail == "internal error during verification");
  // Without the fault the same bytes verify.
  CHECK_FALSE(verify(bytes).internal_error);
}
