#include "model/store_a/trust.hpp"

#include <cstdint>
#include <cstring>
#include <algorithm>
#include <ctime>
#include <limits>
#include <optional>
#include <new>
#include <string_view>

#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "model/store_a/parsed.hpp"

namespace receiptd::model::store_a {

namespace {

// DER content octets of the Apple certificate-policy marker extensions
// (1.2.840.113635.100 = 2A 86 48 86 F7 63 64). Apple, "Receipt Validation
// Programming Guide": the receipt signing leaf carries 1.2.840.113635.100.6.11.1,
// the WWDR intermediate 1.2.840.113635.100.6.2.1.
constexpr unsigned char receipt_signing_oid[]
  = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x63, 0x64, 0x06, 0x0B, 0x01};
constexpr unsigned char wwdr_intermediate_oid[]
  = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x63, 0x64, 0x06, 0x02, 0x01};
// iOS 6 transaction receipts (v2 blobs), as carried by Apple's certificates
// (config/trust/apple-itunes-store-ca.pem; the leaves of every v2 receipt in
// tests/data/apple-transaction): the iTunes Store CA carries
// 1.2.840.113635.100.6.2.2, its "PurchaseReceiptCertificate" leaves
// 1.2.840.113635.100.6.5.1.
constexpr unsigned char itunes_intermediate_oid[]
  = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x63, 0x64, 0x06, 0x02, 0x02};
constexpr unsigned char purchase_receipt_oid[]
  = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x63, 0x64, 0x06, 0x05, 0x01};

// All of Apple's marker OIDs above are ten octets long.
constexpr std::size_t oid_size = sizeof receipt_signing_oid;

bool has_extension(X509* cert, const unsigned char* oid) {
  for (int i = 0, n = X509_get_ext_count(cert); i < n; ++i) {
    const ASN1_OBJECT* obj = X509_EXTENSION_get_object(X509_get_ext(cert, i));
    if (obj != nullptr && OBJ_length(obj) == oid_size
        && std::memcmp(OBJ_get0_data(obj), oid, oid_size) == 0)
      return true;
  }
  return false;
}

// The one `nid` entry of a certificate name equals `value` (a second entry of
// the same type would leave two readings of the name).
bool name_entry_is(X509_NAME* name, int nid, std::string_view value) {
  int i = X509_NAME_get_index_by_NID(name, nid, -1);
  if (i < 0 || X509_NAME_get_index_by_NID(name, nid, i) >= 0)
    return false;
  const ASN1_STRING* s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
  return s != nullptr
    && std::string_view(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                        static_cast<std::size_t>(ASN1_STRING_length(s)))
    == value;
}

// What Apple's transaction receipt certificates carry, per blob version.
struct transaction_pins {
  const unsigned char* leaf_oid;
  const char* leaf_oid_text;
  const char* leaf_cn; // null: not pinned
  const char* leaf_ou; // null: not pinned
  const unsigned char* issuer_oid;
  const char* issuer_oid_text;
  const char* issuer_cn;
};

// v2: every real v2 leaf (tests/data/apple-transaction, 2009–2016) is
// "CN=PurchaseReceiptCertificate, OU=Apple iTunes Store, O=Apple Inc., C=US"
// with OID …6.5.1, a critical keyUsage of digitalSignature only, CA:FALSE and
// no extendedKeyUsage, issued by "Apple iTunes Store Certification Authority".
// v3: issued by the WWDR CA (DESIGN.md §3), whose other leaves are developer,
// distribution and push certificates whose private keys every developer holds;
// the receipt-signing leaf is told apart by OID …6.11.1, as in unified
// receipts. No public v3 receipt is at hand to pin its subject beyond O.
const transaction_pins v2_pins{purchase_receipt_oid,
                               "1.2.840.113635.100.6.5.1",
                               "PurchaseReceiptCertificate",
                               "Apple iTunes Store",
                               itunes_intermediate_oid,
                               "1.2.840.113635.100.6.2.2",
                               "Apple iTunes Store Certification Authority"};
const transaction_pins v3_pins{receipt_signing_oid,
                               "1.2.840.113635.100.6.11.1",
                               nullptr,
                               nullptr,
                               wwdr_intermediate_oid,
                               "1.2.840.113635.100.6.2.1",
                               "Apple Worldwide Developer Relations Certification Authority"};

const transaction_pins* pins_for(int blob_version) {
  return blob_version == 2 ? &v2_pins : blob_version == 3 ? &v3_pins : nullptr;
}

// Verifies `leaf` up to a root of `store` at instant `at`: the built chain
// (leaf first), or why not (code untrusted_certificate).
result<ossl::x509_stack_ptr> verify_at(X509_STORE* store, X509* leaf, STACK_OF(X509) * untrusted,
                                       unix_ms at) {
  // Failing to allocate is ours, not the receipt's: thrown, so that
  // verify_receipt reports an internal error rather than a verdict.
  ossl::x509_store_ctx_ptr ctx{X509_STORE_CTX_new()};
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store, leaf, untrusted) != 1)
    throw std::bad_alloc();
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  // Receipts are judged when they were signed: every App Store chain in the
  // public vectors has expired since (DESIGN.md §3).
  X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(at >= 0 ? at / 1000 : (at - 999) / 1000));
  // Security level 0: no minimum on key size or signature digest. Apple signed
  // certificates with sha1WithRSA (Apple Root CA itself, the 2013 WWDR CA, the
  // iTunes Store CA) and the v2 transaction leaf has an RSA-1024 key; a system or
  // future default level >= 1 would reject them with CA_MD_TOO_WEAK / CA_KEY_TOO_SMALL.
  // Trust comes from the pinned roots, not from algorithm strength.
  X509_VERIFY_PARAM_set_auth_level(param, 0);
  if (int rc = X509_verify_cert(ctx.get()); rc != 1) {
    int err = X509_STORE_CTX_get_error(ctx.get());
    if (rc < 0 && err == X509_V_ERR_OUT_OF_MEM)
      throw std::bad_alloc();
    return refusal(fraud_reason::untrusted_certificate,
                   std::string(X509_verify_cert_error_string(err)) + " (depth "
                     + std::to_string(X509_STORE_CTX_get_error_depth(ctx.get())) + ")");
  }
  ossl::x509_stack_ptr chain{X509_STORE_CTX_get1_chain(ctx.get())};
  if (!chain)
    return refusal(fraud_reason::untrusted_certificate, "no chain");
  return chain;
}

} // namespace

const EVP_MD* trust_anchors::digest(int nid) const {
  switch (nid) {
    case NID_sha1:
      return sha1_.get();
    case NID_sha256:
      return sha256_.get();
    case NID_sha384:
      return sha384_.get();
    case NID_sha512:
      return sha512_.get();
    default:
      return nullptr;
  }
}

chain_check check_unified_chain(const trust_anchors& anchors, X509* leaf, STACK_OF(X509) * embedded,
                                unix_ms at) {
  chain_check out;
  std::string apple_detail;
  if (auto apple = verify_at(anchors.roots(), leaf, embedded, at); !apple) {
    apple_detail = apple.err().message();
  } else {
    // leaf ← WWDR intermediate ← root; a leaf signed by the root directly, or an
    // intermediate posing as leaf, lacks one of the markers.
    STACK_OF(X509)* chain = apple->get();
    if (sk_X509_num(chain) < 3)
      apple_detail = "chain has no intermediate";
    else if (!has_extension(sk_X509_value(chain, 0), receipt_signing_oid))
      apple_detail = "leaf lacks the receipt-signing OID 1.2.840.113635.100.6.11.1";
    else if (!has_extension(sk_X509_value(chain, 1), wwdr_intermediate_oid))
      apple_detail = "intermediate lacks the WWDR OID 1.2.840.113635.100.6.2.1";
    else {
      out.ok = true;
      out.chain = std::move(*apple);
      return out;
    }
  }
  out.detail = "Apple chain: " + apple_detail;
  if (anchors.sandbox_roots() != nullptr) {
    // Xcode's StoreKit test certificate signs receipts itself (a single
    // self-signed certificate without Apple's markers): opt-in, sandbox only.
    auto sandbox = verify_at(anchors.sandbox_roots(), leaf, embedded, at);
    if (sandbox) {
      out.ok = true;
      out.sandbox = true;
      out.detail.clear();
      out.chain = std::move(*sandbox);
      return out;
    }
    out.detail += "; sandbox root: " + sandbox.err().message();
  }
  return out;
}

std::string transaction_leaf_problem(X509* leaf, int blob_version) {
  const auto* pins = pins_for(blob_version);
  if (pins == nullptr)
    return "unknown signature blob version";
  // X509_check_purpose computes the extension flags once (and is thread-safe).
  X509_check_purpose(leaf, -1, 0);
  const std::uint32_t flags = X509_get_extension_flags(leaf);
  if (flags & EXFLAG_INVALID)
    return "leaf has invalid extensions";
  if (!has_extension(leaf, pins->leaf_oid))
    return std::string("leaf lacks the receipt-signing OID ") + pins->leaf_oid_text;
  if (flags & EXFLAG_CA)
    return "leaf is a CA certificate";
  if (!(flags & EXFLAG_KUSAGE) || !(X509_get_key_usage(leaf) & KU_DIGITAL_SIGNATURE))
    return "leaf key usage does not include digitalSignature";
  // Developer, distribution and push certificates restrict their keys to code
  // signing or TLS client authentication; receipt-signing leaves carry no
  // extended key usage at all.
  if (flags & EXFLAG_XKUSAGE)
    return "leaf has an extended key usage (receipt-signing certificates have none)";
  X509_NAME* subject = X509_get_subject_name(leaf);
  if (!name_entry_is(subject, NID_organizationName, "Apple Inc.")
      || (pins->leaf_cn && !name_entry_is(subject, NID_commonName, pins->leaf_cn))
      || (pins->leaf_ou && !name_entry_is(subject, NID_organizationalUnitName, pins->leaf_ou)))
    return "leaf subject is not Apple's receipt-signing certificate";
  return {};
}

chain_check check_transaction_chain(const trust_anchors& anchors, X509* leaf, int blob_version,
                                    unix_ms at) {
  chain_check out;
  const auto* pins = pins_for(blob_version);
  if (pins == nullptr) {
    out.detail = "unknown signature blob version";
    return out;
  }
  // Only the leaf is embedded: the configured intermediates (iTunes Store CA for
  // v2 blobs, WWDR CA for v3) complete the chain.
  auto chain = verify_at(anchors.roots(), leaf, anchors.intermediates(), at);
  if (!chain) {
    out.detail = chain.err().message();
    return out;
  }
  out.chain = std::move(*chain);
  auto fail = [&](std::string why) {
    out.detail = std::move(why);
    out.chain.reset();
    return std::move(out);
  };
  if (sk_X509_num(out.chain.get()) != 3)
    return fail("chain is not leaf ← intermediate ← root");
  // The issuer is pinned per version: a WWDR-issued certificate must not sign
  // a v2 blob, nor an iTunes Store one a v3 blob.
  X509* issuer = sk_X509_value(out.chain.get(), 1);
  X509_NAME* name = X509_get_subject_name(issuer);
  if (!has_extension(issuer, pins->issuer_oid))
    return fail(std::string("intermediate lacks the OID ") + pins->issuer_oid_text + " of the "
                + pins->issuer_cn);
  if (!name_entry_is(name, NID_commonName, pins->issuer_cn)
      || !name_entry_is(name, NID_organizationName, "Apple Inc."))
    return fail(std::string("intermediate is not the ") + pins->issuer_cn);
  out.ok = true;
  return out;
}

chain_check check_jws_chain(const trust_anchors& anchors, const std::vector<x5c_entry>& x5c,
                            unix_ms at) {
  chain_check out;
  if (x5c.size() == 1) {
    // Xcode: one self-signed "StoreKit Testing in Xcode" certificate, trusted
    // only as itself (a chain of one: the leaf is the anchor), opt-in.
    if (anchors.sandbox_roots() == nullptr) {
      out.detail = "a single certificate, and no StoreKit test root is configured";
      return out;
    }
    auto chain = verify_at(anchors.sandbox_roots(), x5c[0].cert, nullptr, at);
    if (!chain) {
      out.detail = "StoreKit test root: " + chain.err().message();
      return out;
    }
    if (sk_X509_num(chain->get()) != 1) {
      out.detail = "the single certificate is not itself a StoreKit test root";
      return out;
    }
    out.ok = true;
    out.sandbox = true;
    out.chain = std::move(*chain);
    return out;
  }
  if (x5c.size() != 3) {
    out.detail = "x5c is not leaf, intermediate, root";
    return out;
  }
  // Only x5c[1] is offered as untrusted: the root must come from the store.
  ossl::x509_stack_ptr untrusted{sk_X509_new_null()};
  if (!untrusted || sk_X509_push(untrusted.get(), x5c[1].cert) <= 0)
    throw std::bad_alloc();
  X509_up_ref(x5c[1].cert); // the stack's reference, freed with it
  auto chain = verify_at(anchors.roots(), x5c[0].cert, untrusted.get(), at);
  if (!chain) {
    out.detail = chain.err().message();
    return out;
  }
  STACK_OF(X509)* c = chain->get();
  if (sk_X509_num(c) != 3 || X509_cmp(sk_X509_value(c, 1), x5c[1].cert) != 0) {
    out.detail = "chain is not leaf ← x5c[1] ← root";
    return out;
  }
  // The root the store holds, byte for byte the one x5c names: Apple's
  // library requires x5c[2] to be its configured root, and a header that says
  // otherwise is not one Apple wrote.
  unsigned char* root_der = nullptr;
  const int root_len = i2d_X509(sk_X509_value(c, 2), &root_der);
  if (root_len < 0)
    throw std::bad_alloc();
  const bool same_root = static_cast<std::size_t>(root_len) == x5c[2].der.size()
    && std::memcmp(root_der, x5c[2].der.data(), x5c[2].der.size()) == 0;
  OPENSSL_free(root_der);
  if (!same_root) {
    out.detail = "x5c[2] is not the trusted root the chain ends at";
    return out;
  }
  if (!has_extension(sk_X509_value(c, 0), receipt_signing_oid)) {
    out.detail = "leaf lacks the receipt-signing OID 1.2.840.113635.100.6.11.1";
    return out;
  }
  if (!has_extension(sk_X509_value(c, 1), wwdr_intermediate_oid)) {
    out.detail = "intermediate lacks the WWDR OID 1.2.840.113635.100.6.2.1";
    return out;
  }
  out.ok = true;
  out.chain = std::move(*chain);
  return out;
}

namespace {

field_error trust_error(std::string message) {
  return field_error{"trust", "invalid_certificate", std::move(message)};
}

// Every certificate of a PEM text (a file may bundle several).
bool read_pem(const std::string& pem, std::vector<ossl::x509_ptr>& out) {
  ossl::bio_ptr bio{BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))};
  if (!bio)
    return false;
  std::size_t before = out.size();
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    // Compute the cached extension data now, under no contention, instead of on
    // the first verification.
    X509_check_purpose(x, -1, 0);
    out.emplace_back(x);
  }
  // Reading stops with PEM_R_NO_START_LINE at the end of the text; anything
  // else is a broken certificate.
  unsigned long err = ERR_peek_last_error();
  bool clean_end = ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE;
  ERR_clear_error();
  return clean_end && out.size() > before;
}

result<ossl::x509_store_ptr> make_store(const std::vector<std::string>& pems, const char* what) {
  ossl::x509_store_ptr store{X509_STORE_new()};
  if (!store)
    return trust_error("cannot allocate a certificate store");
  for (std::size_t i = 0; i < pems.size(); ++i) {
    std::vector<ossl::x509_ptr> certs;
    auto name = std::string(what) + "[" + std::to_string(i) + "]";
    if (!read_pem(pems[i], certs))
      return trust_error(name + ": not PEM certificates");
    for (auto& c : certs) {
      // A root must anchor a chain by itself; an intermediate here would only
      // ever fail with "unable to get local issuer certificate".
      if (X509_self_signed(c.get(), 0) != 1)
        return trust_error(name + ": a root certificate must be self-signed");
      if (X509_STORE_add_cert(store.get(), c.get()) != 1)
        return trust_error(name + ": cannot add to the store");
    }
  }
  return store;
}

} // namespace

result<std::shared_ptr<const trust_anchors>> load_trust_anchors(const trust_config& cfg) {
  ossl::error_queue_guard guard;
  try {
    if (cfg.root_pems.empty() && cfg.sandbox_root_pems.empty())
      return trust_error("no trust root configured");
    std::shared_ptr<trust_anchors> a(new trust_anchors());
    auto roots = make_store(cfg.root_pems, "root_pems");
    if (!roots)
      return roots.errors();
    a->roots_ = std::move(roots).value();
    if (!cfg.sandbox_root_pems.empty()) {
      auto sandbox = make_store(cfg.sandbox_root_pems, "sandbox_root_pems");
      if (!sandbox)
        return sandbox.errors();
      a->sandbox_roots_ = std::move(sandbox).value();
    }
    a->intermediates_.reset(sk_X509_new_null());
    if (!a->intermediates_)
      return trust_error("cannot allocate the intermediates");
    for (std::size_t i = 0; i < cfg.intermediate_pems.size(); ++i) {
      std::vector<ossl::x509_ptr> certs;
      if (!read_pem(cfg.intermediate_pems[i], certs))
        return trust_error("intermediate_pems[" + std::to_string(i) + "]: not PEM certificates");
      for (auto& c : certs) {
        if (sk_X509_push(a->intermediates_.get(), c.get()) <= 0)
          return trust_error("cannot store an intermediate");
        c.release(); // now owned by the stack
      }
    }
    a->sha1_.reset(EVP_MD_fetch(nullptr, "SHA1", nullptr));
    a->sha256_.reset(EVP_MD_fetch(nullptr, "SHA256", nullptr));
    a->sha384_.reset(EVP_MD_fetch(nullptr, "SHA384", nullptr));
    a->sha512_.reset(EVP_MD_fetch(nullptr, "SHA512", nullptr));
    if (!a->sha1_ || !a->sha256_ || !a->sha384_ || !a->sha512_)
      return trust_error("SHA-1/SHA-2 are not available from the OpenSSL providers");
    return std::shared_ptr<const trust_anchors>(std::move(a));
  } catch (...) {
    return trust_error("internal error");
  }
}

bool set_validity(const chain_check& chain, verification_cache::chain_memo& memo) {
  auto to_unix_ms = [](const ASN1_TIME* t) -> std::optional<unix_ms> {
    std::tm tm{};
    if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1)
      return std::nullopt;
    return static_cast<unix_ms>(timegm(&tm)) * 1000;
  };
  memo.valid_from = std::numeric_limits<unix_ms>::min();
  memo.valid_until = std::numeric_limits<unix_ms>::max();
  for (int i = 0, n = sk_X509_num(chain.chain.get()); i < n; ++i) {
    X509* c = sk_X509_value(chain.chain.get(), i);
    auto from = to_unix_ms(X509_get0_notBefore(c));
    auto until = to_unix_ms(X509_get0_notAfter(c));
    if (!from || !until)
      return false;
    memo.valid_from = std::max(memo.valid_from, *from);
    memo.valid_until = std::min(memo.valid_until, *until + 999);
  }
  return true;
}

} // namespace receiptd::model::store_a
