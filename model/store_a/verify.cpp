// verify_receipt: the local fraud checks of DESIGN.md §2. Each step decodes only
// what it needs, so unverified bytes cost little: the wrapper's shape, then the
// signature, then (unified) the payload without its in-app purchases for the
// creation date, then the chain, and only then the payload in full (an
// unsigned receipt of 65,500 in-app purchases used to be decoded, stored
// and answered in full).

#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>

#include <new>

#include <openssl/pkcs7.h>

#include "model/encoding.hpp"
#include "model/key_limits.hpp"
#include "model/store_a/parsed.hpp"
#include "model/store_a/device_hash.hpp"
#include "model/store_a/trust.hpp"

namespace receiptd::model::store_a {

namespace {

using der_and_cert = std::pair<std::string_view, X509*>;
using chain_kind = verification_cache::chain_kind;

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

// Remembers a chain that verified (see verification_cache.hpp): the embedded
// certificates that are part of it, compared by content (an embedded copy of
// the root is the same certificate as the store's), and the instants it stands for.
void remember_chain(const trust_anchors& anchors, chain_kind kind, const chain_check& chain,
                    const std::vector<der_and_cert>& sources, std::string_view leaf_der) {
  verification_cache::chain_memo memo;
  memo.sandbox = chain.sandbox;
  if (!set_validity(chain, memo))
    return;
  std::vector<der_and_cert> admitted;
  const int n = sk_X509_num(chain.chain.get());
  for (int i = 0; i < n; ++i) {
    X509* c = sk_X509_value(chain.chain.get(), i);
    auto src = std::find_if(sources.begin(), sources.end(),
                            [&](const der_and_cert& s) { return X509_cmp(s.second, c) == 0; });
    if (src != sources.end())
      admitted.push_back(*src);
    if (kind == chain_kind::unified && i > 0 && i < n - 1) {
      if (src == sources.end())
        return; // an intermediate the receipt did not carry: nothing to match later
      memo.intermediates.emplace_back(src->first);
    }
  }
  anchors.cache().remember(admitted, kind, leaf_der, std::move(memo));
}

// SHA1withRSA over the version byte followed by the decoded purchase-info, for
// both blob versions (DESIGN.md §3; the Mbaasy gem verified v2 and v3 this way).
status check_transaction_signature(const trust_anchors& anchors, X509* leaf,
                                   const transaction_receipt& t) {
  auto invalid
    = [](std::string why) { return refusal(fraud_reason::invalid_signature, std::move(why)); };
  EVP_PKEY* key = X509_get0_pubkey(leaf);
  if (key == nullptr || !EVP_PKEY_is_a(key, "RSA"))
    return invalid("leaf certificate has no RSA key");
  if (auto problem = rsa_key_problem(key); !problem.empty())
    return invalid("leaf " + problem);
  ossl::evp_md_ctx_ptr ctx{EVP_MD_CTX_new()};
  if (!ctx)
    throw std::bad_alloc(); // not the receipt's fault: never a verdict
  const auto version = static_cast<unsigned char>(t.signature_version);
  bool ok = EVP_DigestVerifyInit(ctx.get(), nullptr, anchors.sha1(), nullptr, key) == 1
    && EVP_DigestVerifyUpdate(ctx.get(), &version, 1) == 1
    && EVP_DigestVerifyUpdate(ctx.get(), t.purchase_info_bytes.data(), t.purchase_info_bytes.size())
      == 1
    && EVP_DigestVerifyFinal(ctx.get(), reinterpret_cast<const unsigned char*>(t.signature.data()),
                             t.signature.size())
      == 1;
  if (!ok)
    return invalid("signature does not match purchase-info");
  return done{};
}

verification refused(fraud_reason reason, std::string detail) {
  verification out;
  out.reason = reason;
  out.detail = std::move(detail);
  return out;
}

// A receipt refused by its signature or chain: recorded with its style only.
verification refused(fraud_reason reason, std::string detail, receipt_style style) {
  auto out = refused(reason, std::move(detail));
  out.receipt.emplace();
  out.receipt->style = style;
  return out;
}

verification malformed_verdict(const field_errors& errors) {
  return refused(fraud_reason::malformed_receipt, errors.front().message);
}

// The checks that follow a verified signature and chain.
verification check_claims(decoded_receipt r, std::string_view expected_bundle_id,
                          const std::optional<std::string>& identifier_for_vendor) {
  verification out;
  if (r.bundle_id != expected_bundle_id) {
    out.reason = fraud_reason::bundle_id_mismatch;
    out.detail = "receipt is for bundle \"" + r.bundle_id.substr(0, 100) + "\"";
  } else if (identifier_for_vendor) {
    if (auto device = device_matches(r, *identifier_for_vendor); !device) {
      out.reason = fraud_reason::device_hash_mismatch;
      out.detail = device.err().message();
    }
  }
  out.receipt = std::move(r);
  return out;
}

verification verify_unified(std::string_view der, const trust_anchors& anchors,
                            std::string_view expected_bundle_id,
                            const std::optional<std::string>& identifier_for_vendor,
                            const verify_options& options) {
  constexpr auto style = receipt_style::unified;
  auto wrapper = parse_signed_data(der);
  if (!wrapper)
    return malformed_verdict(wrapper.errors());
  const content_info& ci = **wrapper;

  // 1. The signature, with the embedded certificate it names.
  PKCS7_SIGNER_INFO* si = single_signer(ci);
  if (si == nullptr || si->issuer_and_serial == nullptr)
    return refused(fraud_reason::invalid_signature, "expected exactly one signer", style);
  auto certs = decode_embedded(ci, anchors);
  X509* signer = X509_find_by_issuer_and_serial(certs.stack.get(), si->issuer_and_serial->issuer,
                                                si->issuer_and_serial->serial);
  auto signer_source = std::find_if(certs.sources.begin(), certs.sources.end(),
                                    [&](const der_and_cert& c) { return c.second == signer; });
  if (signer == nullptr || signer_source == certs.sources.end())
    return refused(fraud_reason::invalid_signature, "signer certificate is not embedded", style);
  if (auto signature = verify_signer(ci, *si, signer, anchors); !signature)
    return refused(fraud_reason::invalid_signature, signature.err().message(), style);

  // 2. The payload without its in-app purchases: the creation date the chain
  //    is judged at.
  const auto payload = signed_content(ci);
  auto header = decode_payload(payload, payload_options{false, options.max_in_app_purchases});
  if (!header)
    return malformed_verdict(header.errors());
  const unix_ms at = options.at ? *options.at
    : header->creation_date     ? *header->creation_date
                                : options.clock->now_ms();

  // 3. The chain (remembered, or built and checked).
  bool sandbox = false;
  const auto signer_der = signer_source->first;
  if (auto memo = anchors.cache().known_chain(chain_kind::unified, signer_der, at, certs.ders)) {
    sandbox = memo->sandbox;
  } else {
    auto chain = check_unified_chain(anchors, signer, certs.stack.get(), at);
    if (!chain.ok)
      return refused(fraud_reason::untrusted_certificate, std::move(chain.detail), style);
    remember_chain(anchors, chain_kind::unified, chain, certs.sources, signer_der);
    sandbox = chain.sandbox;
  }

  // 4. Only now the whole payload, in-app purchases counted before each is decoded.
  auto full = decode_payload(payload, payload_options{true, options.max_in_app_purchases});
  if (!full)
    return malformed_verdict(full.errors());
  auto r = unified_from_payload(std::move(full).value());
  // What the signature covers: the receipt's re-upload key, whatever certificates
  // wrap it (the PKCS#7 certificate set is not signed).
  r.signed_content_hash = sha256_hex(payload);
  if (sandbox) // the opt-in Xcode StoreKit test root
    r.env = environment::xcode;
  return check_claims(std::move(r), expected_bundle_id, identifier_for_vendor);
}

verification verify_transaction(std::string_view text, const trust_anchors& anchors,
                                std::string_view expected_bundle_id,
                                const std::optional<std::string>& identifier_for_vendor,
                                const verify_options& options) {
  constexpr auto style = receipt_style::transaction;
  auto parsed = parse_transaction_envelope(text);
  if (!parsed)
    return malformed_verdict(parsed.errors());
  const auto& t = std::get<transaction_receipt>(parsed->receipt.detail);

  // 1. The signature over the purchase-info bytes, with the embedded leaf.
  auto leaf = anchors.cache().certificate(t.leaf_der);
  if (!leaf)
    return refused(fraud_reason::invalid_signature, "signature blob certificate is not X.509",
                   style);
  if (auto signature = check_transaction_signature(anchors, leaf.get(), t); !signature)
    return refused(fraud_reason::invalid_signature, signature.err().message(), style);
  // 2. The leaf must be Apple's receipt-signing certificate for this blob
  //    version. Checked on every receipt: the remembered chains below stand
  //    for the issuer and validity, not for this.
  if (auto problem = transaction_leaf_problem(leaf.get(), t.signature_version); !problem.empty())
    return refused(fraud_reason::untrusted_certificate, std::move(problem), style);

  // 3. The purchase-info plist: the purchase date the chain is judged at.
  if (auto error = decode_purchase_info(*parsed))
    return malformed_verdict({*error});
  const auto& r = parsed->receipt;
  const unix_ms at = options.at ? *options.at
    : r.signed_at               ? *r.signed_at
                                : options.clock->now_ms();

  // 4. The chain, pinned per blob version.
  const auto kind
    = t.signature_version == 2 ? chain_kind::transaction_v2 : chain_kind::transaction_v3;
  if (!anchors.cache().known_chain(kind, t.leaf_der, at, {})) {
    auto chain = check_transaction_chain(anchors, leaf.get(), t.signature_version, at);
    if (!chain.ok)
      return refused(fraud_reason::untrusted_certificate, std::move(chain.detail), style);
    remember_chain(anchors, kind, chain, {{t.leaf_der, leaf.get()}}, t.leaf_der);
  }
  return check_claims(std::move(parsed->receipt), expected_bundle_id, identifier_for_vendor);
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
  return ossl::guarded_verification<verification>(options.fault_for_tests, [&] {
    return is_transaction_style(bytes)
      ? verify_transaction(bytes, anchors, expected_bundle_id, identifier_for_vendor, options)
      : verify_unified(bytes, anchors, expected_bundle_id, identifier_for_vendor, options);
  });
}

} // namespace receiptd::model::store_a
