// StoreKit 2 signed data (model/store_a/jws.hpp): every public Apple
// JWS in tests/data/apple-jws-* verified against its expected.json with the
// shipped Apple Root CA - G3, negatives made from those vectors, and generated
// Apple-shaped EC chains for what a real vector cannot show (Apple's key signs
// nothing for us, so a changed x5c on a real vector stops at the signature).

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "model/encoding.hpp"
#include "model/store_a/jws.hpp"
#include "model/store_a/trust.hpp" // internal: the cache test looks inside
#include "tests/support/crypto/test_ca.hpp"
#include "tests/unit/store_a_fixtures.hpp"

using namespace store_a_fixtures;
using namespace receiptd::model;
namespace json = boost::json;
namespace ts = receiptd::test_support;

namespace {

// ---- the vectors ---------------------------------------------------------------

const char* const transaction_jws_vectors[] = {
  "dmzlingyin-aitubo-autorenew-production-2025", "hound-pupotty-autorenew-sandbox-2023",
  "mingos-goodheart-consumable-sandbox-2025",    "session-pro-autorenew-renewal-sandbox-2025",
  "session-pro-revoked-refund-sandbox-2025",
};
const char* const xcode_vector = "apple-lib-python-xcode-2023";
const char* const renewal_jws_vectors[] = {
  "dmzlingyin-aitubo-production-2025",
  "go-iap-sandbox-2023",
  "hound-null-payload-sandbox-2023",
  "session-pro-downgrade-pending-sandbox-2025",
};
// The renewal info signed over `null` has no signedDate; JWS-SOURCES.md checked
// its chain at the enclosing DID_FAIL_TO_RENEW notification's (expected.json,
// verificationTimeNote).
constexpr unix_ms hound_notification_signed_date = 1685505860608;
// A 2025 leaf (valid 2025-09-19 → 2027-10-13) that verifies today too.
const std::string current_vector
  = "apple-jws-transaction/session-pro-autorenew-renewal-sandbox-2025";

std::string jws_of(const std::string& dir) {
  return read_file(data_path(dir + "/jws.txt"));
}

json::value json_file(const std::string& dir, const char* file) {
  return json::parse(read_file(data_path(dir + "/" + file)));
}

// The shipped default of store-a.trust-roots.
const sa::trust_anchors& apple_roots() {
  static const auto anchors
    = load({{trust_pem("apple-root-ca.pem"), trust_pem("apple-root-ca-g3.pem")}, {}, {}});
  return *anchors;
}

// A field of expected.json; null when it is absent (it says so either way).
json::value field(const json::value& o, const char* key) {
  const auto* v = o.as_object().if_contains(key);
  return v != nullptr ? *v : json::value();
}

std::optional<unix_ms> expected_ms(const json::value& v) {
  if (v.is_null())
    return std::nullopt;
  return static_cast<unix_ms>(v.to_number<double>()); // Xcode's is fractional: floored
}

std::optional<environment> expected_env(const json::value& v) {
  if (v == "Production")
    return environment::production;
  if (v == "Sandbox")
    return environment::sandbox;
  if (v == "Xcode")
    return environment::xcode;
  return std::nullopt;
}

sa::jws_verification verified(const std::string& jws, const sa::trust_anchors& anchors,
                              sa::jws_options options = {}) {
  auto v = sa::verify_jws(jws, anchors, options);
  INFO(v.detail);
  REQUIRE_FALSE(v.internal_error);
  REQUIRE(v.reason == fraud_reason::none);
  return v;
}

sa::signed_transaction transaction_ok(std::string_view payload) {
  auto t = sa::parse_signed_transaction(payload);
  INFO((t ? std::string() : t.errors().front().message));
  REQUIRE(t);
  return std::move(t).value();
}

// A verified transaction against the summary fields of expected.json.
void check_transaction(const sa::signed_transaction& t, const json::value& e) {
  CHECK(t.transaction_id == e.at("transactionId").as_string());
  CHECK(t.original_transaction_id == e.at("originalTransactionId").as_string());
  CHECK(t.bundle_id == e.at("bundleId").as_string());
  CHECK(t.product_id == e.at("productId").as_string());
  CHECK(t.env == expected_env(e.at("environment")));
  CHECK(t.signed_date == expected_ms(e.at("signedDateMillis")));
  if (auto* type = e.as_object().if_contains("type"))
    CHECK(t.type == type->as_string());
}

// ---- JWS surgery -----------------------------------------------------------------

std::string b64url_decode(std::string_view s) {
  std::string std_alphabet(s);
  std::replace(std_alphabet.begin(), std_alphabet.end(), '-', '+');
  std::replace(std_alphabet.begin(), std_alphabet.end(), '_', '/');
  auto out = base64_decode(std_alphabet);
  REQUIRE(out);
  return *out;
}

struct parts {
  std::string header, payload, signature; // decoded
};

parts split(const std::string& jws) {
  auto s = sa::split_jws(jws);
  REQUIRE(s);
  return {b64url_decode(s->header), b64url_decode(s->payload), b64url_decode(s->signature)};
}

std::string join(const parts& p) {
  return base64url_encode(p.header) + "." + base64url_encode(p.payload) + "."
    + base64url_encode(p.signature);
}

// The header with `edit` applied to its parsed JSON, serialized again.
template <class F>
std::string with_header(const std::string& jws, F&& edit) {
  auto p = split(jws);
  auto h = json::parse(p.header);
  edit(h.as_object());
  p.header = json::serialize(h);
  return join(p);
}

sa::jws_verification verify(const std::string& jws, const sa::trust_anchors& anchors,
                            sa::jws_options options = {}) {
  return sa::verify_jws(jws, anchors, options);
}

fraud_reason reason_of(const std::string& jws, const sa::trust_anchors& anchors,
                       sa::jws_options options = {}) {
  auto v = verify(jws, anchors, options);
  INFO(v.detail);
  CHECK_FALSE(v.internal_error);
  if (v.reason != fraud_reason::none)
    CHECK(v.payload.empty()); // what unverified bytes claim is never handed out
  return v.reason;
}

// ---- generated Apple-shaped EC chains -----------------------------------------------

// ES256 as RFC 7518 §3.4 wants it: r ‖ s, 32 bytes each.
std::string es256(EVP_PKEY* key, std::string_view input) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), EVP_MD_CTX_free};
  std::size_t len = 0;
  REQUIRE(EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) == 1);
  REQUIRE(EVP_DigestSign(ctx.get(), nullptr, &len,
                         reinterpret_cast<const unsigned char*>(input.data()), input.size())
          == 1);
  std::string der(len, '\0');
  REQUIRE(EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(der.data()), &len,
                         reinterpret_cast<const unsigned char*>(input.data()), input.size())
          == 1);
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig{
    d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(len)), ECDSA_SIG_free};
  REQUIRE(sig);
  std::string raw(64, '\0');
  auto* out = reinterpret_cast<unsigned char*>(raw.data());
  REQUIRE(BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), out, 32) == 32);
  REQUIRE(BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), out + 32, 32) == 32);
  return raw;
}

std::string header_json(const std::vector<std::string>& x5c_der, const char* alg = "ES256") {
  json::array x5c;
  for (const auto& der : x5c_der)
    x5c.emplace_back(base64_encode(der));
  return json::serialize(json::object{{"alg", alg}, {"x5c", std::move(x5c)}});
}

// header.payload signed by `key` (a random signature when the key is not EC).
std::string signed_jws(const std::string& header, const std::string& payload, EVP_PKEY* key) {
  auto input = base64url_encode(header) + "." + base64url_encode(payload);
  auto sig = EVP_PKEY_is_a(key, "EC") ? es256(key, input) : random_bytes(64);
  return input + "." + base64url_encode(sig);
}

const unix_ms generated_signed_date = ts::utc(2024, 6, 1, 12);

std::string transaction_payload(std::optional<unix_ms> signed_date = generated_signed_date) {
  json::object o{
    {"transactionId", "2000000000000001"},          {"originalTransactionId", "2000000000000001"},
    {"bundleId", "com.example.receiptd"},           {"productId", "com.example.receiptd.monthly"},
    {"purchaseDate", generated_signed_date - 5000}, {"quantity", 1},
    {"type", "Auto-Renewable Subscription"},        {"environment", "Sandbox"}};
  if (signed_date)
    o["signedDate"] = *signed_date;
  return json::serialize(o);
}

struct jws_pki {
  ts::test_cert root, intermediate, leaf;
  std::vector<std::string> x5c() const { return {leaf.der(), intermediate.der(), root.der()}; }
};

struct jws_pki_options {
  bool leaf_oid = true;
  bool intermediate_oid = true;
  std::string leaf_key = "EC";
  std::string name = "receiptd JWS test";
  unix_ms leaf_not_after = ts::utc(2040, 1, 1);
};

// root ← WWDR-like intermediate ← StoreKit-like leaf, every key EC P-256, with
// Apple's names and marker OIDs (each one optional).
jws_pki make_jws_pki(const jws_pki_options& o = {}) {
  jws_pki pki;
  ts::cert_options root;
  root.common_name = o.name + " Root CA - G3";
  root.organization = "receiptd tests";
  root.key_algorithm = "EC";
  root.is_ca = true;
  pki.root = ts::make_cert(root);
  ts::cert_options mid;
  mid.common_name = ts::apple_wwdr_name;
  mid.organization = ts::apple_organization;
  mid.organizational_unit = o.name;
  mid.key_algorithm = "EC";
  mid.is_ca = true;
  if (o.intermediate_oid)
    mid.marker_oids = {ts::apple_wwdr_intermediate_oid};
  pki.intermediate = ts::make_cert(mid, &pki.root);
  ts::cert_options leaf;
  leaf.common_name = "Prod ECC Mac App Store and iTunes Store Receipt Signing";
  leaf.organization = ts::apple_organization;
  leaf.organizational_unit = o.name;
  leaf.key_algorithm = o.leaf_key;
  leaf.not_after = o.leaf_not_after;
  if (o.leaf_oid)
    leaf.marker_oids = {ts::apple_receipt_signing_oid};
  pki.leaf = ts::make_cert(leaf, &pki.intermediate);
  return pki;
}

const jws_pki& good_pki() {
  static const auto pki = make_jws_pki();
  return pki;
}

std::shared_ptr<const sa::trust_anchors> anchors_for(const jws_pki& pki) {
  return load({{pki.root.pem()}, {}, {}});
}

std::string make_jws(const jws_pki& pki, std::vector<std::string> x5c,
                     const std::string& payload = transaction_payload()) {
  return signed_jws(header_json(x5c), payload, pki.leaf.key());
}

std::string pem_of(const std::string& der) {
  std::string b64 = base64_encode(der), out = "-----BEGIN CERTIFICATE-----\n";
  for (std::size_t i = 0; i < b64.size(); i += 64)
    out += b64.substr(i, 64) + "\n";
  return out + "-----END CERTIFICATE-----\n";
}

} // namespace

// ---- every public vector ------------------------------------------------------------

TEST_CASE("every Apple-signed StoreKit 2 transaction verifies at its signedDate", "[jws]") {
  for (const char* name : transaction_jws_vectors) {
    const std::string dir = std::string("apple-jws-transaction/") + name;
    INFO(dir);
    const auto expected = json_file(dir, "expected.json");
    auto v = verified(jws_of(dir), apple_roots());
    CHECK_FALSE(v.xcode);
    CHECK(v.signed_date == expected_ms(field(expected, "signedDateMillis")));
    CHECK(json::parse(v.payload) == json_file(dir, "payload.json"));
    check_transaction(transaction_ok(v.payload), expected);
  }
}

TEST_CASE("every Apple-signed renewal info verifies, the one over null at its notification's date",
          "[jws]") {
  int null_payloads = 0;
  for (const char* name : renewal_jws_vectors) {
    const std::string dir = std::string("apple-jws-renewal/") + name;
    INFO(dir);
    const auto expected = json_file(dir, "expected.json");
    const auto jws = jws_of(dir);
    sa::jws_options at;
    if (field(expected, "signedDateMillis").is_null()) {
      // Apple signed the 4 bytes `null`: no signedDate to judge the chain at.
      auto v = verify(jws, apple_roots());
      CHECK(v.reason == fraud_reason::untrusted_certificate);
      CHECK(v.detail == "payload has no signedDate to check the chain at");
      at.at = hound_notification_signed_date;
    }
    auto v = verified(jws, apple_roots(), at);
    CHECK_FALSE(v.xcode);
    CHECK(json::parse(v.payload) == json_file(dir, "payload.json"));
    CHECK(v.signed_date == expected_ms(field(expected, "signedDateMillis")));
    if (field(expected, "signedDateMillis").is_null()) {
      CHECK(v.payload == "null");
      ++null_payloads;
      continue;
    }
    const auto doc = json::parse(v.payload);
    const auto& payload = doc.as_object();
    CHECK(payload.at("originalTransactionId") == expected.at("originalTransactionId"));
    CHECK(payload.at("productId") == expected.at("productId"));
    CHECK(payload.at("environment") == expected.at("environment"));
  }
  CHECK(null_payloads == 1);
}

TEST_CASE("every Apple-signed notification verifies, and the signed data nested in it", "[jws]") {
  int nested_verified = 0;
  for (const char* name : notification_vectors) {
    const std::string dir = std::string("apple-jws-notification/") + name;
    INFO(dir);
    const auto expected = json_file(dir, "expected.json");
    auto v = verified(jws_of(dir), apple_roots());
    CHECK_FALSE(v.xcode);
    CHECK(v.signed_date == expected_ms(field(expected, "signedDateMillis")));
    CHECK(json::parse(v.payload) == json_file(dir, "payload.json"));
    const auto doc = json::parse(v.payload);
    const auto& payload = doc.as_object();
    CHECK(payload.at("notificationType") == expected.at("notificationType"));
    CHECK(field(doc, "subtype") == field(expected, "subtype"));
    const auto& data = payload.at("data").as_object();
    CHECK(data.at("bundleId") == expected.at("bundleId"));
    CHECK(data.at("environment") == expected.at("environment"));

    const auto* nested = expected.as_object().if_contains("nested");
    CHECK((nested != nullptr) == data.contains("signedTransactionInfo"));
    if (nested == nullptr)
      continue;
    // The transaction inside: verified and parsed like an upload.
    const std::string transaction_jws(data.at("signedTransactionInfo").as_string());
    const auto& et = nested->at("signedTransactionInfo");
    CHECK(sha256_hex(transaction_jws) == et.at("sha256OfJws").as_string());
    auto t = verified(transaction_jws, apple_roots());
    check_transaction(transaction_ok(t.payload), et);
    CHECK(t.signed_date == expected_ms(et.at("signedDateMillis")));
    // The renewal info inside: verified, its summary read.
    const std::string renewal_jws(data.at("signedRenewalInfo").as_string());
    const auto& er = nested->at("signedRenewalInfo");
    CHECK(sha256_hex(renewal_jws) == er.at("sha256OfJws").as_string());
    auto r = verified(renewal_jws, apple_roots());
    CHECK(r.signed_date == expected_ms(er.at("signedDateMillis")));
    const auto renewal = json::parse(r.payload);
    CHECK(renewal.at("originalTransactionId") == er.at("originalTransactionId"));
    CHECK(renewal.at("productId") == er.at("productId"));
    CHECK(renewal.at("environment") == er.at("environment"));
    nested_verified += 2;
  }
  CHECK(nested_verified == 18); // JWS-SOURCES.md: 9 notifications carry data
}

TEST_CASE("the Xcode JWS is anchored only by its own certificate as a StoreKit test root",
          "[jws]") {
  const std::string dir = std::string("apple-jws-transaction/") + xcode_vector;
  const auto jws = jws_of(dir);
  const auto expected = json_file(dir, "expected.json");

  auto apple = verify(jws, apple_roots());
  CHECK(apple.reason == fraud_reason::untrusted_certificate);
  CHECK(apple.detail == "a single certificate, and no StoreKit test root is configured");
  // Another StoreKit test root (Xcode's receipt certificate) does not anchor it.
  auto other_sandbox
    = load({{trust_pem("apple-root-ca-g3.pem")}, {}, {trust_pem("storekit-test.pem")}});
  CHECK(reason_of(jws, *other_sandbox) == fraud_reason::untrusted_certificate);

  const auto x5c0 = split(jws).header;
  const auto leaf_der = *base64_decode(std::string(json::parse(x5c0).at("x5c").at(0).as_string()));
  auto xcode = load({{trust_pem("apple-root-ca-g3.pem")}, {}, {pem_of(leaf_der)}});
  for (int round = 0; round < 2; ++round) { // built, then remembered
    INFO("round " << round);
    auto v = verified(jws, *xcode);
    CHECK(v.xcode);
    // "signedDate":1697679936056.485, floored, as Apple's library does.
    CHECK(v.signed_date == unix_ms{1697679936056});
    auto t = transaction_ok(v.payload);
    CHECK(t.env == environment::xcode);
    CHECK(t.purchase_date == unix_ms{1697679936049});
    CHECK(t.expires_date == unix_ms{1700358336049});
    check_transaction(t, expected);
  }
  // The certificate was valid 2023-10-19 → 2024-10-18.
  sa::jws_options later;
  later.at = ts::utc(2024, 10, 19);
  CHECK(reason_of(jws, *xcode, later) == fraud_reason::untrusted_certificate);
}

// ---- the remembered chain ------------------------------------------------------------

TEST_CASE("a verified JWS chain is remembered: a repeat costs the signature only", "[jws]") {
  auto anchors = load({{trust_pem("apple-root-ca-g3.pem")}, {}, {}});
  const auto& cache = anchors->cache();
  const auto jws = jws_of(current_vector);
  const auto h = json::parse(split(jws).header);
  std::vector<std::string> der;
  for (const auto& c : h.at("x5c").as_array())
    der.push_back(*base64_decode(std::string(c.as_string())));
  const unix_ms signed_date = 1759302518835;
  using kind = sa::verification_cache::chain_kind;

  CHECK_FALSE(cache.known_chain(kind::jws, der[0], signed_date, {der[1], der[2]}));
  verified(jws, *anchors);
  CHECK(cache.certificate_count() == 3);
  CHECK(cache.known_chain(kind::jws, der[0], signed_date, {der[1], der[2]}));
  // Only the same x5c, in the same order, stands for it; and only as a JWS chain.
  CHECK_FALSE(cache.known_chain(kind::jws, der[0], signed_date, {der[2], der[1]}));
  CHECK_FALSE(cache.known_chain(kind::jws, der[0], signed_date, {der[1]}));
  CHECK_FALSE(cache.known_chain(kind::jws, der[0], signed_date, {der[1], der[2], der[2]}));
  CHECK_FALSE(cache.known_chain(kind::unified, der[0], signed_date, {der[1], der[2]}));
  for (int i = 0; i < 3; ++i)
    verified(jws, *anchors);
  CHECK(cache.certificate_count() == 3);
  // Outside the leaf's validity the memo does not stand, and the full check refuses.
  sa::jws_options before;
  before.at = ts::utc(2025, 9, 1);
  CHECK(reason_of(jws, *anchors, before) == fraud_reason::untrusted_certificate);

  // Failed verifications remember nothing.
  auto fresh = load({{trust_pem("apple-root-ca-g3.pem")}, {}, {}});
  auto p = split(jws);
  p.signature[10] ^= 1;
  CHECK(reason_of(join(p), *fresh) == fraud_reason::invalid_signature);
  CHECK(reason_of(jws, *fresh, before) == fraud_reason::untrusted_certificate);
  CHECK(fresh->cache().certificate_count() == 0);
}

TEST_CASE("a remembered JWS chain does not excuse a reordered x5c", "[jws]") {
  const auto& pki = good_pki();
  auto anchors = anchors_for(pki);
  CHECK(reason_of(make_jws(pki, pki.x5c()), *anchors) == fraud_reason::none);
  CHECK(reason_of(make_jws(pki, {pki.leaf.der(), pki.root.der(), pki.intermediate.der()}), *anchors)
        == fraud_reason::untrusted_certificate);
  CHECK(reason_of(make_jws(pki, {pki.leaf.der(), pki.intermediate.der(), pki.intermediate.der()}),
                  *anchors)
        == fraud_reason::untrusted_certificate);
  CHECK(reason_of(make_jws(pki, pki.x5c()), *anchors) == fraud_reason::none);
}

// ---- negatives from the real vectors ------------------------------------------------------

TEST_CASE("one byte changed in a real JWS", "[jws]") {
  const auto jws = jws_of(current_vector);
  REQUIRE(reason_of(jws, apple_roots()) == fraud_reason::none);
  auto p = split(jws);

  SECTION("header, still JSON: the signature covers it") {
    // A byte inside x5c[2]'s signature value: every certificate still decodes.
    auto at = p.header.rfind('"') - 6;
    p.header[at] = p.header[at] == 'A' ? 'B' : 'A';
    CHECK(reason_of(join(p), apple_roots()) == fraud_reason::invalid_signature);
  }
  SECTION("header, no longer JSON") {
    p.header[0] = '[';
    CHECK(reason_of(join(p), apple_roots()) == fraud_reason::malformed_receipt);
  }
  SECTION("payload, still JSON") {
    auto at = p.payload.find("com.getsession");
    REQUIRE(at != std::string::npos);
    p.payload[at] = 'C';
    CHECK(reason_of(join(p), apple_roots()) == fraud_reason::invalid_signature);
  }
  SECTION("payload, no longer JSON") {
    p.payload.back() = ']';
    CHECK(reason_of(join(p), apple_roots()) == fraud_reason::malformed_receipt);
  }
  SECTION("signature") {
    p.signature[40] ^= 0x01;
    CHECK(reason_of(join(p), apple_roots()) == fraud_reason::invalid_signature);
  }
  SECTION("the last character of the signing input (JWS-CHECKS.txt's tampered input)") {
    auto tampered = jws;
    auto dot = tampered.rfind('.');
    tampered[dot - 1] = tampered[dot - 1] == 'Q' ? 'R' : 'Q';
    auto r = reason_of(tampered, apple_roots());
    CHECK((r == fraud_reason::invalid_signature || r == fraud_reason::malformed_receipt));
    CHECK(r != fraud_reason::none);
  }
}

TEST_CASE("a real JWS whose x5c is changed fails at its signature, or its shape", "[jws]") {
  // Apple's signature covers the header: any change to x5c is a changed header.
  const auto jws = jws_of(current_vector);
  auto x5c_edit = [&](auto edit) {
    return with_header(jws, [&](json::object& h) { edit(h.at("x5c").as_array()); });
  };
  json::array original = json::parse(split(jws).header).at("x5c").as_array();

  auto reordered = x5c_edit([](json::array& a) { std::swap(a[1], a[2]); });
  CHECK(reason_of(reordered, apple_roots()) == fraud_reason::invalid_signature);
  auto leaf_last = x5c_edit([](json::array& a) { std::swap(a[0], a[1]); });
  auto v = verify(leaf_last, apple_roots());
  CHECK(v.reason == fraud_reason::invalid_signature);
  CHECK(v.detail == "leaf key is not EC P-256"); // the WWDR G6 CA's key is P-384
  auto two = x5c_edit([](json::array& a) { a.pop_back(); });
  CHECK(reason_of(two, apple_roots()) == fraud_reason::malformed_receipt);
  auto one = x5c_edit([](json::array& a) { a.resize(1); });
  CHECK(reason_of(one, apple_roots()) == fraud_reason::invalid_signature);
  auto four = x5c_edit([&](json::array& a) { a.push_back(original[2]); });
  CHECK(reason_of(four, apple_roots()) == fraud_reason::malformed_receipt);
  auto five = x5c_edit([&](json::array& a) {
    a.push_back(original[2]);
    a.push_back(original[2]);
  });
  CHECK(verify(five, apple_roots()).detail == "x5c holds more than 4 certificates");

  // A self-made root with exactly Apple Root CA - G3's subject.
  auto g3 = load({{trust_pem("apple-root-ca-g3.pem")}, {}, {}});
  ts::cert_options o;
  o.key_algorithm = "EC";
  o.is_ca = true;
  auto fake = ts::make_cert(o);
  const auto real_root_der = *base64_decode(std::string(original[2].as_string()));
  const auto* p = reinterpret_cast<const unsigned char*>(real_root_der.data());
  std::unique_ptr<X509, decltype(&X509_free)> real_root{
    d2i_X509(nullptr, &p, static_cast<long>(real_root_der.size())), X509_free};
  REQUIRE(real_root);
  REQUIRE(X509_set_subject_name(fake.x509(), X509_get_subject_name(real_root.get())) == 1);
  REQUIRE(X509_set_issuer_name(fake.x509(), X509_get_subject_name(real_root.get())) == 1);
  REQUIRE(X509_sign(fake.x509(), fake.key(), EVP_sha256()) > 0);
  REQUIRE(X509_NAME_cmp(X509_get_subject_name(fake.x509()), X509_get_subject_name(real_root.get()))
          == 0);
  auto swapped = x5c_edit([&](json::array& a) { a[2] = base64_encode(fake.der()); });
  CHECK(reason_of(swapped, *g3) == fraud_reason::invalid_signature);
}

TEST_CASE("alg must be exactly ES256", "[jws]") {
  const auto jws = jws_of(current_vector);
  for (const char* alg : {"none", "HS256", "RS256", "ES384", "es256", "ES256 ", ""}) {
    INFO(alg);
    auto changed = with_header(jws, [&](json::object& h) { h["alg"] = alg; });
    auto v = verify(changed, apple_roots());
    CHECK(v.reason == fraud_reason::malformed_receipt);
    CHECK(v.detail == "header alg is not ES256");
  }
  CHECK(reason_of(with_header(jws, [](json::object& h) { h.erase("alg"); }), apple_roots())
        == fraud_reason::malformed_receipt);
  CHECK(reason_of(with_header(jws, [](json::object& h) { h["alg"] = 256; }), apple_roots())
        == fraud_reason::malformed_receipt);
  // alg none with an empty signature segment is not even a JWS here.
  auto s = *sa::split_jws(jws);
  auto none = base64url_encode(R"({"alg":"none"})") + "." + std::string(s.payload) + ".";
  CHECK_FALSE(sa::split_jws(none));
  CHECK(reason_of(none, apple_roots()) == fraud_reason::malformed_receipt);
}

TEST_CASE("header shape: x5c, crit, JSON", "[jws]") {
  const auto jws = jws_of(current_vector);
  auto header_reason = [&](auto edit) { return reason_of(with_header(jws, edit), apple_roots()); };
  CHECK(header_reason([](json::object& h) { h.erase("x5c"); }) == fraud_reason::malformed_receipt);
  CHECK(header_reason([](json::object& h) { h["x5c"] = "MIIB"; })
        == fraud_reason::malformed_receipt);
  CHECK(header_reason([](json::object& h) { h["x5c"].as_array()[1] = 7; })
        == fraud_reason::malformed_receipt);
  CHECK(header_reason([](json::object& h) { h["x5c"].as_array()[1] = "bm90IGEgY2VydA=="; })
        == fraud_reason::malformed_receipt); // "not a cert"
  CHECK(header_reason([](json::object& h) {
          auto& s = h["x5c"].as_array()[1].as_string();
          s.insert(64, 1, '\n'); // wrapped base64 is not x5c's
        })
        == fraud_reason::malformed_receipt);
  CHECK(header_reason([](json::object& h) {
          auto& s = h["x5c"].as_array()[2].as_string();
          while (!s.empty() && s.back() == '=')
            s.pop_back(); // x5c is padded base64
          if (s.size() % 4 == 0)
            s.pop_back();
        })
        == fraud_reason::malformed_receipt);
  CHECK(header_reason([](json::object& h) { h["crit"] = json::array{"exp"}; })
        == fraud_reason::malformed_receipt);
  // Unknown header parameters are fine (Xcode's carries kid and typ), but the
  // header is signed: changed, it no longer verifies.
  CHECK(header_reason([](json::object& h) { h["kid"] = "x"; }) == fraud_reason::invalid_signature);
}

TEST_CASE("split_jws: exactly three strict base64url segments", "[jws]") {
  const auto jws = jws_of(current_vector);
  auto s = sa::split_jws(jws);
  REQUIRE(s);
  CHECK(s->header.size() + s->payload.size() + s->signature.size() + 2 == jws.size());
  CHECK(s->header.substr(0, 4) == "eyJh");

  const std::string h(s->header), p(s->payload), sig(s->signature);
  for (const std::string& bad : {
         h + "." + p,                         // two segments
         h + "." + p + "." + sig + "." + sig, // four
         h + "." + p + "." + sig + ".",       // a trailing dot
         h + ".." + sig,                      // an empty payload
         "." + p + "." + sig,                 // an empty header
         h + "." + p + ".",                   // an empty signature
         h + "." + p + "." + sig + "=",       // padding
         h + "." + p + "." + sig + "==",
         h + "+" + "." + p + "." + sig, // the standard alphabet
         h + "." + p + "/" + "." + sig,
         h + "." + p + "." + sig + "\n", // whitespace
         " " + h + "." + p + "." + sig,
         h + "." + p.substr(0, 10) + " " + p.substr(10) + "." + sig,
         h + "." + p + "." + sig.substr(0, 1), // length % 4 == 1 cannot be base64url
         h.substr(0, h.size() - 1) + "\xff" + "." + p + "." + sig, // bytes above 127
         h + "." + p.substr(0, p.size() - 1) + std::string(1, '\0') + "." + sig,
         h + "." + p + "." + sig.substr(0, sig.size() - 1) + "\x80",
         std::string(),
         std::string(".."),
       }) {
    INFO(bad.substr(0, 40) << " … " << (bad.size() > 40 ? bad.substr(bad.size() - 20) : ""));
    CHECK_FALSE(sa::split_jws(bad));
    CHECK(reason_of(bad, apple_roots()) == fraud_reason::malformed_receipt);
  }
  CHECK(sa::split_jws("a.b.c") == std::nullopt); // one character is never base64url
  auto tiny = sa::split_jws("ab.cd.ef");
  REQUIRE(tiny);
  CHECK(tiny->payload == "cd");
}

TEST_CASE("the signature must be 64 bytes of r ‖ s", "[jws]") {
  auto p = split(jws_of(current_vector));
  auto with_signature = [&](std::string sig) {
    auto q = p;
    q.signature = std::move(sig);
    return join(q);
  };
  for (std::size_t n : {0u, 1u, 32u, 63u, 65u, 72u, 128u}) {
    INFO(n);
    auto sig = p.signature.substr(0, std::min<std::size_t>(n, 64));
    sig.resize(n, '\x01');
    auto jws = with_signature(sig);
    if (n == 0) {
      CHECK_FALSE(sa::split_jws(jws));
      continue;
    }
    auto v = verify(jws, apple_roots());
    CHECK(v.reason == fraud_reason::malformed_receipt);
    CHECK(v.detail == "signature is not 64 bytes (ES256 r ‖ s)");
  }
  // The DER form OpenSSL produces is not what JWS carries.
  CHECK(reason_of(with_signature(std::string("\x30\x44\x02\x20", 4) + p.signature.substr(0, 32)
                                 + std::string("\x02\x20", 2) + p.signature.substr(32)),
                  apple_roots())
        == fraud_reason::malformed_receipt);
  CHECK(reason_of(with_signature(std::string(64, '\0')), apple_roots())
        == fraud_reason::invalid_signature);
  // A non-canonical last character (unused bits set) is not strict base64url.
  auto s = *sa::split_jws(jws_of(current_vector));
  std::string sig(s.signature);
  REQUIRE(sig.size() == 86); // 64 bytes: 85⅓ characters, the last one's low 4 bits unused
  REQUIRE(std::string("AQgw").find(sig.back()) != std::string::npos);
  sig.back() = static_cast<char>(sig.back() + 1); // B, R, h or x: a low bit set
  auto noncanonical = std::string(s.header) + "." + std::string(s.payload) + "." + sig;
  CHECK(reason_of(noncanonical, apple_roots()) == fraud_reason::malformed_receipt);
}

TEST_CASE("the chain is judged at signedDate, or at options.at", "[jws]") {
  const auto jws = jws_of(current_vector); // leaf valid 2025-09-19 → 2027-10-13
  CHECK(reason_of(jws, apple_roots()) == fraud_reason::none);
  sa::jws_options o;
  o.at = ts::utc(2025, 9, 1);
  CHECK(reason_of(jws, apple_roots(), o) == fraud_reason::untrusted_certificate);
  o.at = ts::utc(2027, 10, 14);
  CHECK(reason_of(jws, apple_roots(), o) == fraud_reason::untrusted_certificate);
  o.at = ts::utc(2026, 11, 22);
  CHECK(reason_of(jws, apple_roots(), o) == fraud_reason::none);
  // A 2023 leaf (expired 2023-09-24) verifies at its signedDate only.
  const auto old = jws_of("apple-jws-transaction/hound-pupotty-autorenew-sandbox-2023");
  CHECK(reason_of(old, apple_roots()) == fraud_reason::none);
  o.at = ts::utc(2026, 11, 22);
  CHECK(reason_of(old, apple_roots(), o) == fraud_reason::untrusted_certificate);
}

TEST_CASE("Apple Root CA alone does not anchor StoreKit 2 chains", "[jws]") {
  auto old_root_only = load({{trust_pem("apple-root-ca.pem")}, {}, {}});
  CHECK(reason_of(jws_of(current_vector), *old_root_only) == fraud_reason::untrusted_certificate);
}

// ---- generated chains: what the OIDs, the shape and the key do ------------------------------

TEST_CASE("a generated Apple-shaped chain verifies with both OIDs, and not without either",
          "[jws]") {
  const auto& pki = good_pki();
  auto anchors = anchors_for(pki);
  auto v = verified(make_jws(pki, pki.x5c()), *anchors);
  CHECK(v.signed_date == generated_signed_date);
  CHECK(transaction_ok(v.payload).bundle_id == "com.example.receiptd");

  SECTION("leaf without 1.2.840.113635.100.6.11.1") {
    auto no_leaf_oid = make_jws_pki({false, true, "EC", "no leaf OID"});
    auto a = anchors_for(no_leaf_oid);
    auto r = verify(make_jws(no_leaf_oid, no_leaf_oid.x5c()), *a);
    CHECK(r.reason == fraud_reason::untrusted_certificate);
    CHECK(r.detail == "leaf lacks the receipt-signing OID 1.2.840.113635.100.6.11.1");
  }
  SECTION("intermediate without 1.2.840.113635.100.6.2.1") {
    auto no_mid_oid = make_jws_pki({true, false, "EC", "no intermediate OID"});
    auto a = anchors_for(no_mid_oid);
    auto r = verify(make_jws(no_mid_oid, no_mid_oid.x5c()), *a);
    CHECK(r.reason == fraud_reason::untrusted_certificate);
    CHECK(r.detail == "intermediate lacks the WWDR OID 1.2.840.113635.100.6.2.1");
  }
  SECTION("a root the anchors do not hold") {
    CHECK(reason_of(make_jws(pki, pki.x5c()), apple_roots())
          == fraud_reason::untrusted_certificate);
  }
}

TEST_CASE("a generated chain must be exactly leaf, intermediate, trusted root", "[jws]") {
  const auto& pki = good_pki();
  auto anchors = anchors_for(pki);
  auto reason = [&](std::vector<std::string> x5c) {
    return reason_of(make_jws(pki, std::move(x5c)), *anchors);
  };
  const auto leaf = pki.leaf.der(), mid = pki.intermediate.der(), root = pki.root.der();
  CHECK(reason({leaf, mid, root}) == fraud_reason::none);
  CHECK(reason({leaf, root, mid}) == fraud_reason::untrusted_certificate);
  CHECK(reason({leaf}) == fraud_reason::untrusted_certificate); // not a StoreKit test root
  CHECK(reason({leaf, mid}) == fraud_reason::malformed_receipt);
  CHECK(reason({leaf, mid, root, root}) == fraud_reason::malformed_receipt);
  CHECK(reason({leaf, mid, mid}) == fraud_reason::untrusted_certificate);
  CHECK(reason({leaf, leaf, root}) == fraud_reason::untrusted_certificate);

  // The root swapped for a self-made one with the same subject (another key).
  ts::cert_options same_name;
  same_name.common_name = "receiptd JWS test Root CA - G3";
  same_name.organization = "receiptd tests";
  same_name.key_algorithm = "EC";
  same_name.is_ca = true;
  auto fake_root = ts::make_cert(same_name);
  REQUIRE(
    X509_NAME_cmp(X509_get_subject_name(fake_root.x509()), X509_get_subject_name(pki.root.x509()))
    == 0);
  auto r = verify(make_jws(pki, {leaf, mid, fake_root.der()}), *anchors);
  CHECK(r.reason == fraud_reason::untrusted_certificate);
  CHECK(r.detail == "x5c[2] is not the trusted root the chain ends at");
  // … and an intermediate of the same names issued by it: no chain at all.
  ts::cert_options mid_options;
  mid_options.common_name = ts::apple_wwdr_name;
  mid_options.organization = ts::apple_organization;
  mid_options.organizational_unit = "receiptd JWS test";
  mid_options.key_algorithm = "EC";
  mid_options.is_ca = true;
  mid_options.marker_oids = {ts::apple_wwdr_intermediate_oid};
  auto fake_mid = ts::make_cert(mid_options, &fake_root);
  CHECK(reason({leaf, fake_mid.der(), fake_root.der()}) == fraud_reason::untrusted_certificate);

  // A leaf issued by the root directly (both OIDs on hand, but no intermediate).
  ts::cert_options direct;
  direct.common_name = "Prod ECC Mac App Store and iTunes Store Receipt Signing";
  direct.organization = ts::apple_organization;
  direct.key_algorithm = "EC";
  direct.marker_oids = {ts::apple_receipt_signing_oid, ts::apple_wwdr_intermediate_oid};
  auto direct_leaf = ts::make_cert(direct, &pki.root);
  CHECK(reason_of(signed_jws(header_json({direct_leaf.der(), root, root}), transaction_payload(),
                             direct_leaf.key()),
                  *anchors)
        == fraud_reason::untrusted_certificate);
}

TEST_CASE("the leaf key must be EC P-256: an RSA leaf is invalid_signature", "[jws]") {
  // Decided: the key is what the signature check uses, and a key that cannot
  // make an ES256 signature means the signature does not verify (jws.hpp), so
  // the verdict is invalid_signature, not malformed_receipt (the JWS itself is
  // well formed).
  auto rsa = make_jws_pki({true, true, "RSA", "rsa leaf"});
  auto anchors = anchors_for(rsa);
  auto v = verify(make_jws(rsa, rsa.x5c()), *anchors);
  CHECK(v.reason == fraud_reason::invalid_signature);
  CHECK(v.detail == "leaf key is not EC P-256");
  // With the same chain, an EC leaf verifies (the chain is not what failed).
  auto ec = make_jws_pki({true, true, "EC", "rsa leaf"});
  auto ec_anchors = anchors_for(ec);
  CHECK(reason_of(make_jws(ec, ec.x5c()), *ec_anchors) == fraud_reason::none);
}

TEST_CASE("a payload without a usable signedDate is refused unless options.at is set", "[jws]") {
  const auto& pki = good_pki();
  auto anchors = anchors_for(pki);
  auto without = make_jws(pki, pki.x5c(), transaction_payload(std::nullopt));
  CHECK(reason_of(without, *anchors) == fraud_reason::untrusted_certificate);
  auto text_date
    = make_jws(pki, pki.x5c(),
               R"({"transactionId":"1","signedDate":"1717243200000","environment":"Sandbox"})");
  CHECK(reason_of(text_date, *anchors) == fraud_reason::untrusted_certificate);
  sa::jws_options at;
  at.at = generated_signed_date;
  auto v = verified(without, *anchors, at);
  CHECK_FALSE(v.signed_date);
  // A null payload is accepted as JSON; other non-objects are not.
  CHECK(reason_of(make_jws(pki, pki.x5c(), "null"), *anchors, at) == fraud_reason::none);
  for (const char* payload : {"[]", "\"x\"", "5", "{", "", "{\"a\":1}x"}) {
    INFO(payload);
    CHECK(reason_of(make_jws(pki, pki.x5c(), payload), *anchors, at)
          == fraud_reason::malformed_receipt);
  }
}

TEST_CASE("sizes are bounded before anything is decoded", "[jws]") {
  const auto& pki = good_pki();
  auto anchors = anchors_for(pki);
  // Payload: 64 KiB decoded at most.
  auto payload_of = [](std::size_t n) {
    auto p = transaction_payload();
    p.insert(1, "\"pad\":\"" + std::string(n - p.size() - 9, 'x') + "\",");
    REQUIRE(p.size() == n);
    return p;
  };
  CHECK(reason_of(make_jws(pki, pki.x5c(), payload_of(64 * 1024)), *anchors) == fraud_reason::none);
  auto big = verify(make_jws(pki, pki.x5c(), payload_of(64 * 1024 + 1)), *anchors);
  CHECK(big.reason == fraud_reason::malformed_receipt);
  CHECK(big.detail == "payload is over 64 KiB");
  // Header: 16 KiB decoded at most.
  auto header_of = [&](std::size_t n) {
    auto h = header_json(pki.x5c());
    h.insert(1, "\"pad\":\"" + std::string(n - h.size() - 9, 'x') + "\",");
    REQUIRE(h.size() == n);
    return signed_jws(h, transaction_payload(), pki.leaf.key());
  };
  CHECK(reason_of(header_of(16 * 1024), *anchors) == fraud_reason::none);
  auto big_header = verify(header_of(16 * 1024 + 1), *anchors);
  CHECK(big_header.reason == fraud_reason::malformed_receipt);
  CHECK(big_header.detail == "header is over 16 KiB");
  // A certificate: 8 KiB decoded at most, refused before it is parsed.
  auto with_leaf = [&](std::string der) {
    return verify(signed_jws(header_json({std::move(der), pki.intermediate.der(), pki.root.der()}),
                             transaction_payload(), pki.leaf.key()),
                  *anchors);
  };
  auto v = with_leaf(std::string(8 * 1024 + 1, '\x30'));
  CHECK(v.reason == fraud_reason::malformed_receipt);
  CHECK(v.detail == "x5c[0] is not padded base64 of at most 8 KiB");
  v = with_leaf(std::string(8 * 1024, '\x30'));
  CHECK(v.reason == fraud_reason::malformed_receipt);
  CHECK(v.detail == "x5c[0] is not a DER certificate");
}

TEST_CASE("an internal failure during JWS verification is no verdict", "[jws]") {
  sa::jws_options o;
  o.fault_for_tests = [] { throw std::bad_alloc(); };
  auto v = sa::verify_jws(jws_of(current_vector), apple_roots(), o);
  CHECK(v.internal_error);
  CHECK(v.reason == fraud_reason::none);
  CHECK(v.payload.empty());
  CHECK_FALSE(sa::verify_jws(jws_of(current_vector), apple_roots()).internal_error);
}

// ---- parse_signed_transaction ------------------------------------------------------------

TEST_CASE("signed transactions: 2023 and 2025 payloads, revocation", "[jws]") {
  SECTION("2023: no storefront, price, currency or transactionReason") {
    auto dir = std::string("apple-jws-transaction/hound-pupotty-autorenew-sandbox-2023");
    auto t = transaction_ok(verified(jws_of(dir), apple_roots()).payload);
    CHECK_FALSE(t.storefront);
    CHECK_FALSE(t.price);
    CHECK_FALSE(t.currency);
    CHECK_FALSE(t.transaction_reason);
    CHECK_FALSE(t.app_transaction_id);
    CHECK_FALSE(t.revocation_date);
    CHECK(t.app_account_token);
    CHECK(t.web_order_line_item_id);
    CHECK(t.quantity == 1);
    CHECK(t.type == "Auto-Renewable Subscription");
  }
  SECTION("2025: appTransactionId, storefront, price in milliunits") {
    auto t = transaction_ok(verified(jws_of(current_vector), apple_roots()).payload);
    const auto payload = json_file(current_vector, "payload.json");
    CHECK(t.app_transaction_id == std::string(payload.at("appTransactionId").as_string()));
    CHECK(t.storefront == std::string(payload.at("storefront").as_string()));
    CHECK(t.currency == std::string(payload.at("currency").as_string()));
    CHECK(t.price == payload.at("price").as_int64());
    CHECK(t.purchase_date == payload.at("purchaseDate").as_int64());
    CHECK(t.original_purchase_date == payload.at("originalPurchaseDate").as_int64());
    CHECK(t.expires_date == payload.at("expiresDate").as_int64());
    CHECK(t.web_order_line_item_id == std::string(payload.at("webOrderLineItemId").as_string()));
    CHECK(t.in_app_ownership_type == std::string("PURCHASED"));
    CHECK(t.transaction_reason == std::string(payload.at("transactionReason").as_string()));
    CHECK_FALSE(t.revocation_date);
    CHECK_FALSE(t.revocation_reason);
  }
  SECTION("revoked (refunded)") {
    auto t = transaction_ok(
      verified(jws_of("apple-jws-transaction/session-pro-revoked-refund-sandbox-2025"),
               apple_roots())
        .payload);
    CHECK(t.revocation_date == unix_ms{1760591999000});
    CHECK(t.revocation_reason == 0);
    CHECK(t.env == environment::sandbox);
  }
  SECTION("a consumable") {
    auto t = transaction_ok(
      verified(jws_of("apple-jws-transaction/mingos-goodheart-consumable-sandbox-2025"),
               apple_roots())
        .payload);
    CHECK(t.type == "Consumable");
    CHECK_FALSE(t.expires_date);
    CHECK_FALSE(t.web_order_line_item_id);
  }
  SECTION("production") {
    auto t = transaction_ok(
      verified(jws_of("apple-jws-transaction/dmzlingyin-aitubo-autorenew-production-2025"),
               apple_roots())
        .payload);
    CHECK(t.env == environment::production);
  }
}

TEST_CASE("signed transactions: each required field missing or of the wrong type", "[jws]") {
  const auto base = json::parse(read_file(data_path(current_vector + "/payload.json"))).as_object();
  REQUIRE(sa::parse_signed_transaction(json::serialize(base)));
  auto error_of = [&](auto edit) {
    auto o = base;
    edit(o);
    auto r = sa::parse_signed_transaction(json::serialize(o));
    REQUIRE_FALSE(r);
    CHECK(r.errors().front().field == "signed_transaction");
    CHECK(r.errors().front().code == "malformed_receipt");
    return r.errors().front().message;
  };
  for (const char* key :
       {"transactionId", "originalTransactionId", "bundleId", "productId", "environment"}) {
    INFO(key);
    CHECK(error_of([&](json::object& o) { o.erase(key); })
          == std::string("signed transaction ") + key + " is missing");
    for (json::value wrong : {json::value(1), json::value(""), json::value(nullptr),
                              json::value(json::array{"x"}), json::value(std::string(257, 'x'))}) {
      INFO(json::serialize(wrong));
      CHECK(error_of([&](json::object& o) { o[key] = wrong; }).find(key) != std::string::npos);
    }
  }
  CHECK(error_of([](json::object& o) { o["environment"] = "production"; })
        == "signed transaction environment is not Production, Sandbox or Xcode");
  CHECK(error_of([](json::object& o) { o["environment"] = "LocalTesting"; }).size() > 0);
  for (const char* date :
       {"purchaseDate", "originalPurchaseDate", "expiresDate", "revocationDate", "signedDate"}) {
    INFO(date);
    for (json::value wrong :
         {json::value("1760335129000"), json::value(-1), json::value(253402300800000),
          json::value(true), json::value(1e300)}) {
      INFO(json::serialize(wrong));
      CHECK(error_of([&](json::object& o) { o[date] = wrong; })
            == std::string("signed transaction ") + date + " is not a date in unix milliseconds");
    }
  }
  for (json::value wrong : {json::value(0), json::value(-2), json::value(1.5), json::value("1")})
    CHECK(error_of([&](json::object& o) { o["quantity"] = wrong; }).find("quantity")
          != std::string::npos);
  CHECK(error_of([](json::object& o) { o["price"] = "1990"; }).find("price") != std::string::npos);
  CHECK(error_of([](json::object& o) { o["price"] = 19.9; }).find("price") != std::string::npos);
  CHECK(error_of([](json::object& o) { o["revocationReason"] = "0"; }).find("revocationReason")
        != std::string::npos);
  CHECK(error_of([](json::object& o) { o["storefront"] = 36; }).find("storefront")
        != std::string::npos);
  CHECK(error_of([](json::object& o) { o["type"] = json::array{}; }).find("type")
        != std::string::npos);
  CHECK_FALSE(sa::parse_signed_transaction("null"));
  CHECK_FALSE(sa::parse_signed_transaction("[]"));
  CHECK_FALSE(sa::parse_signed_transaction("{"));
}

TEST_CASE("signed transactions: App Store Server API 1.15–1.21 fields", "[jws]") {
  // Names and values as Apple's JWSTransactionDecodedPayload documents them: a
  // win-back offer's offerPeriod (1.15), a prorated refund (1.19), a monthly plan
  // with a 12-month commitment (1.21).
  json::object payload{{"transactionId", "2000000000000007"},
                       {"originalTransactionId", "2000000000000001"},
                       {"bundleId", "com.example"},
                       {"productId", "com.example.monthly"},
                       {"environment", "Sandbox"},
                       {"appTransactionId", "704289572311513217"},
                       {"offerType", 4},
                       {"offerDiscountType", "ONE_TIME"},
                       {"offerPeriod", "P1M"},
                       {"revocationDate", 1760591999000},
                       {"revocationReason", 0},
                       {"revocationType", "REFUND_PRORATED"},
                       {"revocationPercentage", 67932},
                       {"billingPlanType", "MONTHLY"},
                       {"commitmentInfo",
                        {{"billingPeriodNumber", 3},
                         {"totalBillingPeriods", 12},
                         {"commitmentExpiresDate", 1790000000000},
                         {"commitmentPrice", 99990}}}};
  auto t = transaction_ok(json::serialize(payload));
  CHECK(t.app_transaction_id == std::string("704289572311513217"));
  CHECK(t.offer_type == 4);
  CHECK(t.offer_discount_type == std::string("ONE_TIME"));
  CHECK(t.offer_period == std::string("P1M"));
  CHECK(t.revocation_type == std::string("REFUND_PRORATED"));
  CHECK(t.revocation_percentage == 67932);
  CHECK(t.billing_plan_type == std::string("MONTHLY"));
  REQUIRE(t.commitment);
  CHECK(t.commitment->billing_period_number == 3);
  CHECK(t.commitment->total_billing_periods == 12);
  CHECK(t.commitment->expires_date == unix_ms{1790000000000});
  CHECK(t.commitment->price == 99990);

  // What a later Apple adds to them is kept; what is not of Apple's type is not
  // Apple's payload.
  auto later = payload;
  later["offerType"] = 5;
  later["revocationPercentage"] = 100000;
  later["commitmentInfo"] = json::object{{"somethingNew", true}};
  auto kept = transaction_ok(json::serialize(later));
  CHECK(kept.offer_type == 5);
  CHECK(kept.revocation_percentage == 100000);
  REQUIRE(kept.commitment);
  CHECK(*kept.commitment == commitment_info{});
  for (auto [key, wrong] : std::vector<std::pair<const char*, json::value>>{
         {"commitmentInfo", json::value("12 months")},
         {"commitmentInfo", json::value(json::object{{"totalBillingPeriods", "12"}})},
         {"commitmentInfo", json::value(json::object{{"commitmentExpiresDate", -1}})},
         {"revocationPercentage", json::value(-1)},
         {"revocationPercentage", json::value("40%")},
         {"offerPeriod", json::value(1)},
         {"billingPlanType", json::value(true)}}) {
    INFO(key << ": " << json::serialize(wrong));
    auto bad = payload;
    bad[key] = wrong;
    auto r = sa::parse_signed_transaction(json::serialize(bad));
    REQUIRE_FALSE(r);
    CHECK(r.errors().front().code == "malformed_receipt");
    CHECK(r.errors().front().message.find(key) != std::string::npos);
  }
}

TEST_CASE("signed transactions: lenient where Apple varies", "[jws]") {
  auto parse = [](json::object o) { return transaction_ok(json::serialize(o)); };
  json::object minimal{{"transactionId", "1"},
                       {"originalTransactionId", "1"},
                       {"bundleId", "b"},
                       {"productId", "p"},
                       {"environment", "Production"}};
  auto t = parse(minimal);
  CHECK(t.quantity == 1);
  CHECK(t.type.empty());
  CHECK_FALSE(t.purchase_date);
  CHECK_FALSE(t.signed_date);
  CHECK_FALSE(t.price);
  auto extra = minimal;
  extra["somethingNew"] = json::object{{"x", 1}};
  extra["quantity"] = 3;
  extra["price"] = 0;
  extra["purchaseDate"] = 1697679936049.7297;
  extra["webOrderLineItemId"] = 2000000114930653;
  extra["appAccountToken"] = "";
  extra["storefront"] = nullptr;
  auto u = parse(extra);
  CHECK(u.quantity == 3);
  CHECK(u.price == 0);
  CHECK(u.purchase_date == unix_ms{1697679936049});
  CHECK(u.web_order_line_item_id == std::string("2000000114930653"));
  CHECK_FALSE(u.app_account_token);
  CHECK_FALSE(u.storefront);
  extra["environment"] = "Xcode";
  CHECK(parse(extra).env == environment::xcode);
  extra["environment"] = "Sandbox";
  CHECK(parse(extra).env == environment::sandbox);
}
