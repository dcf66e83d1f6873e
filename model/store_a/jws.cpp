// verify_jws (jws.hpp): StoreKit 2 signed data checked as Apple's
// app-store-server-library does offline: compact JWS (RFC 7515 §7.1), ES256
// (RFC 7518 §3.4), the x5c chain at the payload's signedDate. Every input is
// bounded before it is decoded, and each failure is a verdict.

#include "model/store_a/jws.hpp"

#include <algorithm>
#include <ctime>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/objects.h>

#include "model/encoding.hpp"
#include "model/store_a/jws_internal.hpp"
#include "model/store_a/trust.hpp"

namespace receiptd::model::store_a {

namespace {

jws_verification refused(fraud_reason reason, std::string detail) {
  jws_verification out;
  out.reason = reason;
  out.detail = std::move(detail);
  return out;
}

jws_verification malformed(std::string detail) {
  return refused(fraud_reason::malformed_receipt, std::move(detail));
}

// ES256 keys are EC on P-256 (RFC 7518 §3.4); any other key is refused before use.
bool is_p256(EVP_PKEY* key) {
  if (key == nullptr || !EVP_PKEY_is_a(key, "EC"))
    return false;
  char name[80];
  std::size_t len = 0;
  if (EVP_PKEY_get_group_name(key, name, sizeof name, &len) != 1)
    return false;
  return OBJ_sn2nid(name) == NID_X9_62_prime256v1
    || EC_curve_nist2nid(name) == NID_X9_62_prime256v1;
}

// The JWS's r ‖ s as the DER ECDSA-Sig-Value OpenSSL verifies.
std::string ecdsa_der(std::string_view raw) {
  using sig_ptr = std::unique_ptr<ECDSA_SIG, ossl::deleter<ECDSA_SIG_free>>;
  using bn_ptr = std::unique_ptr<BIGNUM, ossl::deleter<BN_free>>;
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  const int half = static_cast<int>(raw.size() / 2);
  sig_ptr sig{ECDSA_SIG_new()};
  bn_ptr r{BN_bin2bn(p, half, nullptr)};
  bn_ptr s{BN_bin2bn(p + half, half, nullptr)};
  if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r.get(), s.get()) != 1)
    throw std::bad_alloc();
  r.release(); // owned by sig now
  s.release();
  unsigned char* der = nullptr;
  const int len = i2d_ECDSA_SIG(sig.get(), &der);
  if (len <= 0)
    throw std::bad_alloc();
  std::string out(reinterpret_cast<const char*>(der), static_cast<std::size_t>(len));
  OPENSSL_free(der);
  return out;
}

bool es256_verifies(const trust_anchors& anchors, EVP_PKEY* key, std::string_view signing_input,
                    std::string_view raw_signature) {
  const auto der = ecdsa_der(raw_signature);
  ossl::evp_md_ctx_ptr ctx{EVP_MD_CTX_new()};
  if (!ctx)
    throw std::bad_alloc(); // ours, not the JWS's: never a verdict
  return EVP_DigestVerifyInit(ctx.get(), nullptr, anchors.digest(NID_sha256), nullptr, key) == 1
    && EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(der.data()), der.size(),
                        reinterpret_cast<const unsigned char*>(signing_input.data()),
                        signing_input.size())
    == 1;
}

// Remembers a verified chain (verification_cache.hpp): the x5c certificates,
// and the instants the chain stands for. `exact`: a later JWS hits only with
// the same x5c, in the same order.
void remember_chain(const trust_anchors& anchors, const chain_check& chain,
                    const std::vector<x5c_entry>& x5c) {
  verification_cache::chain_memo memo;
  memo.sandbox = chain.sandbox;
  memo.exact = true;
  if (!set_validity(chain, memo))
    return;
  std::vector<std::pair<std::string_view, X509*>> admitted;
  for (std::size_t i = 0; i < x5c.size(); ++i) {
    admitted.emplace_back(x5c[i].der, x5c[i].cert);
    if (i > 0)
      memo.intermediates.emplace_back(x5c[i].der);
  }
  anchors.cache().remember(admitted, verification_cache::chain_kind::jws, x5c[0].der,
                           std::move(memo));
}

jws_verification verify(std::string_view compact, const trust_anchors& anchors,
                        const jws_options& options) {
  // 1. Structure (malformed_receipt): sizes first, then each part decoded.
  auto segments = split_jws(compact);
  if (!segments)
    return malformed("not a compact JWS (three base64url segments)");
  if (decoded_size(segments->header.size()) > max_header_bytes)
    return malformed("header is over 16 KiB");
  if (decoded_size(segments->payload.size()) > max_payload_bytes)
    return malformed("payload is over 64 KiB");
  if (decoded_size(segments->signature.size()) != es256_signature_bytes)
    return malformed("signature is not 64 bytes (ES256 r ‖ s)");
  auto header_bytes = base64url_decode(segments->header);
  auto payload_bytes = base64url_decode(segments->payload);
  auto signature = base64url_decode(segments->signature);
  if (!header_bytes || !payload_bytes || !signature)
    return malformed("a segment is not canonical base64url");

  boost::system::error_code ec;
  const auto header = boost::json::parse(*header_bytes, ec);
  if (ec || !header.is_object())
    return malformed("header is not a JSON object");
  const auto& fields = header.get_object();
  // Boost.JSON keeps the last of duplicate names, as RFC 7515 §4 allows.
  const auto* alg = fields.if_contains("alg");
  if (alg == nullptr || !alg->is_string() || alg->get_string() != "ES256")
    return malformed("header alg is not ES256");
  // RFC 7515 §4.1.11: extensions marked critical must be understood; none are.
  if (fields.contains("crit"))
    return malformed("header has crit parameters");
  const auto* x5c_value = fields.if_contains("x5c");
  if (x5c_value == nullptr || !x5c_value->is_array())
    return malformed("header has no x5c array");
  const auto& x5c_array = x5c_value->get_array();
  if (x5c_array.size() > max_x5c_entries)
    return malformed("x5c holds more than 4 certificates");
  if (x5c_array.size() != 3 && x5c_array.size() != 1)
    return malformed("x5c holds " + std::to_string(x5c_array.size())
                     + " certificates, not leaf, intermediate, root");
  std::vector<std::string> ders;
  std::vector<ossl::x509_ptr> certs;
  std::vector<x5c_entry> x5c;
  for (std::size_t i = 0; i < x5c_array.size(); ++i) {
    const auto& entry = x5c_array[i];
    auto der = entry.is_string() ? x5c_decode(entry.get_string()) : std::nullopt;
    if (!der)
      return malformed("x5c[" + std::to_string(i) + "] is not padded base64 of at most 8 KiB");
    ders.push_back(std::move(*der));
  }
  for (std::size_t i = 0; i < ders.size(); ++i) {
    // Remembered certificates come decoded; others are decoded here.
    auto cert = anchors.cache().certificate(ders[i]);
    if (!cert)
      return malformed("x5c[" + std::to_string(i) + "] is not a DER certificate");
    x5c.push_back({ders[i], cert.get()});
    certs.push_back(std::move(cert));
  }

  const auto payload = boost::json::parse(*payload_bytes, ec);
  // Apple signs the JSON literal null as signedRenewalInfo at times.
  if (ec || !(payload.is_object() || payload.is_null()))
    return malformed("payload is not a JSON object");

  // 2. Signature (invalid_signature), with the leaf's key.
  EVP_PKEY* key = X509_get0_pubkey(x5c[0].cert);
  if (!is_p256(key))
    return refused(fraud_reason::invalid_signature, "leaf key is not EC P-256");
  const auto signing_input
    = compact.substr(0, segments->header.size() + 1 + segments->payload.size());
  if (!es256_verifies(anchors, key, signing_input, *signature))
    return refused(fraud_reason::invalid_signature, "ES256 signature does not verify");

  // 3. Chain (untrusted_certificate), at signedDate: remembered, or built and checked.
  std::optional<unix_ms> signed_date;
  if (const auto* v
      = payload.is_object() ? payload.get_object().if_contains(options.date_key) : nullptr)
    signed_date = json_unix_ms(*v);
  const auto at = options.at ? options.at : signed_date;
  if (!at)
    return refused(fraud_reason::untrusted_certificate,
                   std::string("payload has no ") + options.date_key
                     + " to check the chain at");
  std::vector<std::string_view> embedded(ders.begin() + 1, ders.end());
  bool xcode = false;
  if (auto memo
      = anchors.cache().known_chain(verification_cache::chain_kind::jws, ders[0], *at, embedded)) {
    xcode = memo->sandbox;
  } else {
    auto chain = check_jws_chain(anchors, x5c, *at);
    if (!chain.ok)
      return refused(fraud_reason::untrusted_certificate, std::move(chain.detail));
    remember_chain(anchors, chain, x5c);
    xcode = chain.sandbox;
  }

  jws_verification out;
  out.payload = std::move(*payload_bytes);
  out.signed_date = signed_date;
  out.xcode = xcode;
  return out;
}

} // namespace

jws_verification verify_jws(std::string_view compact, const trust_anchors& anchors,
                            const jws_options& options) {
  return ossl::guarded_verification<jws_verification>(
    options.fault_for_tests, [&] { return verify(compact, anchors, options); });
}

} // namespace receiptd::model::store_a
