// verify_receipt: the local fraud checks of DESIGN.md §2, in the order of the
// fraud reasons: malformed → invalid_signature → untrusted_certificate →
// bundle_id_mismatch → device_hash_mismatch.

#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>

#include <new>

#include <openssl/pkcs7.h>

#include "model/store_a/parsed.hpp"
#include "model/store_a/device_hash.hpp"
#include "model/store_a/trust.hpp"

namespace receiptd::model::store_a {

namespace {

using der_and_cert = std::pair<std::string_view, X509*>;

// The embedded certificates, decoded through the cache, with the DER each came from.
struct embedded_certs {
  ossl::x509_stack_ptr stack{sk_X509_new_null()};
  std::vector<der_and_cert> sources;
  std::vector<std::string_view> ders;
};

embedded_certs decode_embedded(const content_info& ci, const trust_anchors& anchors) {
  embedded_certs out;
  if (!out.stack)
    throw std::bad_alloc();
  for (auto der : embedded_certificates(ci)) {
    // An undecodable certificate is left out: if it mattered, the signer or the
    // chain will be missing.
    auto cert = anchors.cache().certificate(der);
    if (!cert)
      continue;
    if (sk_X509_push(out.stack.get(), cert.get()) <= 0)
      throw std::bad_alloc();
    out.sources.emplace_back(der, cert.release());
    out.ders.push_back(der);
  }
  return out;
}

std::optional<unix_ms> to_unix_ms(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1)
    return std::nullopt;
  return static_cast<unix_ms>(timegm(&tm)) * 1000;
}

// Remembers a chain that verified (see verification_cache.hpp): the embedded
// certificates that are part of it, compared by content (an embedded copy of
// the root is the same certificate as the store's), and the instants it stands for.
void remember_chain(const trust_anchors& anchors, verification_cache::chain_kind kind,
                    const chain_check& chain, const std::vector<der_and_cert>& sources,
                    std::string_view leaf_der) {
  using kind_t = verification_cache::chain_kind;
  verification_cache::chain_memo memo;
  memo.sandbox = chain.sandbox;
  memo.valid_from = std::numeric_limits<unix_ms>::min();
  memo.valid_until = std::numeric_limits<unix_ms>::max();
  std::vector<der_and_cert> admitted;
  const int n = sk_X509_num(chain.chain.get());
  for (int i = 0; i < n; ++i) {
    X509* c = sk_X509_value(chain.chain.get(), i);
    auto from = to_unix_ms(X509_get0_notBefore(c));
    auto until = to_unix_ms(X509_get0_notAfter(c));
    if (!from || !until)
      return;
    // X509_verify_cert compares whole seconds (see trust.cpp).
    memo.valid_from = std::max(memo.valid_from, *from);
    memo.valid_until = std::min(memo.valid_until, *until + 999);
    auto src = std::find_if(sources.begin(), sources.end(),
                            [&](const der_and_cert& s) { return X509_cmp(s.second, c) == 0; });
    if (src != sources.end())
      admitted.push_back(*src);
    if (kind == kind_t::unified && i > 0 && i < n - 1) {
      if (src == sources.end())
        return; // an intermediate the receipt did not carry: nothing to match later
      memo.intermediates.emplace_back(src->first);
    }
  }
  anchors.cache().remember(admitted, kind, leaf_der, std::move(memo));
}

// SHA1withRSA over the version byte followed by the decoded purchase-info, for
// both blob versions (DESIGN.md §3; the Mbaasy gem verified v2 and v3 this way).
bool check_transaction_signature(const trust_anchors& anchors, X509* leaf,
                                 const transaction_receipt& t, std::string& detail) {
  EVP_PKEY* key = X509_get0_pubkey(leaf);
  if (key == nullptr || !EVP_PKEY_is_a(key, "RSA")) {
    detail = "leaf certificate has no RSA key";
    return false;
  }
  ossl::evp_md_ctx_ptr ctx{EVP_MD_CTX_new()};
  const auto version = static_cast<unsigned char>(t.signature_version);
  bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, anchors.sha1(), nullptr, key) == 1
            && EVP_DigestVerifyUpdate(ctx.get(), &version, 1) == 1
            && EVP_DigestVerifyUpdate(ctx.get(), t.purchase_info_bytes.data(),
                                      t.purchase_info_bytes.size())
                 == 1
            && EVP_DigestVerifyFinal(ctx.get(),
                                     reinterpret_cast<const unsigned char*>(t.signature.data()),
                                     t.signature.size())
                 == 1;
  if (!ok)
    detail = "signature does not match purchase-info";
  return ok;
}

unix_ms now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// The outcome of the signature and chain steps.
struct crypto_verdict {
  fraud_reason reason = fraud_reason::none;
  std::string detail;
  bool sandbox = false; // anchored by a sandbox root
};

crypto_verdict reject(fraud_reason reason, std::string detail) {
  return {reason, std::move(detail), false};
}

crypto_verdict check_unified(const content_info& ci, const trust_anchors& anchors, unix_ms at) {
  using kind = verification_cache::chain_kind;
  PKCS7_SIGNER_INFO* si = single_signer(ci);
  if (si == nullptr || si->issuer_and_serial == nullptr)
    return reject(fraud_reason::invalid_signature, "expected exactly one signer");
  auto certs = decode_embedded(ci, anchors);
  X509* signer = X509_find_by_issuer_and_serial(certs.stack.get(), si->issuer_and_serial->issuer,
                                                si->issuer_and_serial->serial);
  auto signer_source = std::find_if(certs.sources.begin(), certs.sources.end(),
                                    [&](const der_and_cert& c) { return c.second == signer; });
  if (signer == nullptr || signer_source == certs.sources.end())
    return reject(fraud_reason::invalid_signature, "signer certificate is not embedded");
  std::string detail;
  if (!verify_signer(ci, *si, signer, anchors, detail))
    return reject(fraud_reason::invalid_signature, std::move(detail));

  const auto signer_der = signer_source->first;
  if (auto memo = anchors.cache().known_chain(kind::unified, signer_der, at, certs.ders))
    return {fraud_reason::none, {}, memo->sandbox};
  auto chain = check_unified_chain(anchors, signer, certs.stack.get(), at);
  if (!chain.ok)
    return reject(fraud_reason::untrusted_certificate, std::move(chain.detail));
  remember_chain(anchors, kind::unified, chain, certs.sources, signer_der);
  return {fraud_reason::none, {}, chain.sandbox};
}

crypto_verdict check_transaction(const transaction_receipt& t, const trust_anchors& anchors,
                                 unix_ms at) {
  using kind = verification_cache::chain_kind;
  auto leaf = anchors.cache().certificate(t.leaf_der);
  if (!leaf)
    return reject(fraud_reason::invalid_signature, "signature blob certificate is not X.509");
  std::string detail;
  if (!check_transaction_signature(anchors, leaf.get(), t, detail))
    return reject(fraud_reason::invalid_signature, std::move(detail));

  if (anchors.cache().known_chain(kind::transaction, t.leaf_der, at, {}))
    return {};
  auto chain = check_transaction_chain(anchors, leaf.get(), at);
  if (!chain.ok)
    return reject(fraud_reason::untrusted_certificate, std::move(chain.detail));
  remember_chain(anchors, kind::transaction, chain, {{t.leaf_der, leaf.get()}}, t.leaf_der);
  return {};
}

verification verify_parsed(parsed_receipt& parsed, const trust_anchors& anchors,
                           std::string_view expected_bundle_id,
                           const std::optional<std::string>& identifier_for_vendor,
                           const verify_options& options) {
  auto& r = parsed.receipt;
  const unix_ms at = options.at ? *options.at : r.signed_at ? *r.signed_at : now_ms();
  auto crypto = r.style == receipt_style::unified
                  ? check_unified(*parsed.signed_data, anchors, at)
                  : check_transaction(std::get<transaction_receipt>(r.detail), anchors, at);
  verification out;
  if (crypto.reason != fraud_reason::none) {
    out.reason = crypto.reason;
    out.detail = std::move(crypto.detail);
    return out;
  }
  if (crypto.sandbox)
    r.env = environment::sandbox;
  if (r.bundle_id != expected_bundle_id) {
    out.reason = fraud_reason::bundle_id_mismatch;
    out.detail = "receipt is for bundle \"" + r.bundle_id.substr(0, 100) + "\"";
    return out;
  }
  std::string detail;
  if (identifier_for_vendor && !device_matches(r, *identifier_for_vendor, detail)) {
    out.reason = fraud_reason::device_hash_mismatch;
    out.detail = std::move(detail);
  }
  return out;
}

} // namespace

verification verify_receipt(std::string_view bytes, const trust_anchors& anchors,
                            std::string_view expected_bundle_id,
                            const std::optional<std::string>& identifier_for_vendor) {
  return verify_receipt(bytes, anchors, expected_bundle_id, identifier_for_vendor, {});
}

verification verify_receipt(std::string_view bytes, const trust_anchors& anchors,
                            std::string_view expected_bundle_id,
                            const std::optional<std::string>& identifier_for_vendor,
                            const verify_options& options) {
  ossl::error_queue_guard guard;
  try {
    auto parsed = parse_receipt(bytes);
    if (!parsed) {
      verification out;
      out.reason = fraud_reason::malformed_receipt;
      out.detail = parsed.errors().front().message;
      return out;
    }
    auto out = verify_parsed(*parsed, anchors, expected_bundle_id, identifier_for_vendor, options);
    out.receipt = std::move(parsed->receipt);
    return out;
  } catch (...) { // bad_alloc is the only candidate; errors stay values
    verification out;
    out.reason = fraud_reason::malformed_receipt;
    out.detail = "internal error";
    return out;
  }
}

} // namespace receiptd::model::store_a
