#pragma once
// The loaded trust material and the certificate chain checks (internal).

#include <string>
#include <string_view>
#include <vector>

#include "model/store_a/verification_cache.hpp"
#include "model/store_a/openssl_ptr.hpp"
#include "model/store_a/receipt.hpp"

namespace receiptd::model::store_a {

// Immutable after load_trust_anchors, except the verification cache (see
// verification_cache.hpp), which has its own lock: X509_STORE lookups take
// OpenSSL's lock, the intermediates stack is only read (X509_verify_cert copies
// it), so one instance serves every thread.
class trust_anchors {
public:
  X509_STORE* roots() const { return roots_.get(); }
  X509_STORE* sandbox_roots() const { return sandbox_roots_.get(); } // null when none
  STACK_OF(X509) * intermediates() const { return intermediates_.get(); }
  const EVP_MD* sha1() const { return sha1_.get(); } // fetched once, not per verify
  // SHA-1/256/384/512 by NID (prefetched: an implicit fetch per call costs locks); null otherwise.
  const EVP_MD* digest(int nid) const;
  const verification_cache& cache() const { return cache_; }

private:
  friend result<std::shared_ptr<const trust_anchors>> load_trust_anchors(const trust_config&);
  trust_anchors() = default;

  ossl::x509_store_ptr roots_;
  ossl::x509_store_ptr sandbox_roots_;
  ossl::x509_stack_ptr intermediates_;
  ossl::evp_md_ptr sha1_;
  ossl::evp_md_ptr sha256_;
  ossl::evp_md_ptr sha384_;
  ossl::evp_md_ptr sha512_;
  verification_cache cache_;
};

struct chain_check {
  bool ok = false;
  bool sandbox = false;       // anchored by a sandbox-only root
  std::string detail;         // why it failed
  ossl::x509_stack_ptr chain; // on success: leaf first, root last
};

// The instants a verified chain stands for, for remembering it
// (verification_cache.hpp): from its latest notBefore to its earliest notAfter
// (+999 ms: X509_verify_cert compares whole seconds). False, and nothing to
// remember, when a certificate's time cannot be read.
bool set_validity(const chain_check& chain, verification_cache::chain_memo& memo);

// Unified receipts: `leaf` is the PKCS#7 signer, `embedded` the certificates the
// receipt carries. Apple roots first (with the Apple OIDs), then sandbox roots.
chain_check check_unified_chain(const trust_anchors& anchors, X509* leaf, STACK_OF(X509) * embedded,
                                unix_ms at);

// Transaction receipts, pinned per signature blob version (2 or 3): the leaf
// must be Apple's receipt-signing certificate of that version (its OID,
// CA:FALSE, digitalSignature, no extended key usage, its subject). Depends on
// the leaf alone, so it is checked before any remembered chain is consulted.
// "" when the leaf passes, else why not.
std::string transaction_leaf_problem(X509* leaf, int blob_version);

// Transaction receipts: leaf ← configured intermediate ← Apple root, exactly,
// the intermediate being the iTunes Store CA (v2) or the WWDR CA (v3), by its
// Apple OID and name.
chain_check check_transaction_chain(const trust_anchors& anchors, X509* leaf, int blob_version,
                                    unix_ms at);

// A certificate as a JWS's x5c carries it: its DER and the certificate decoded
// from it.
struct x5c_entry {
  std::string_view der;
  X509* cert = nullptr;
};

// StoreKit 2 signed data (jws.hpp), `x5c` in the header's order, leaf first.
// Three certificates: the chain built at `at` from the roots with x5c[1] as
// the only untrusted certificate must be exactly leaf ← x5c[1] ← a root that is
// byte for byte x5c[2] (x5c[2] itself is never trusted); the leaf carries OID
// 1.2.840.113635.100.6.11.1, the intermediate 1.2.840.113635.100.6.2.1.
// One certificate: it must itself be one of the sandbox roots (Xcode's
// StoreKit test certificate signs JWS directly), and then `sandbox` is set.
// Any other count is refused.
chain_check check_jws_chain(const trust_anchors& anchors, const std::vector<x5c_entry>& x5c,
                            unix_ms at);

} // namespace receiptd::model::store_a
