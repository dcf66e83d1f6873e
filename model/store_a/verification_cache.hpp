#pragma once
// Memory of certificates and chains that verified before (internal).
//
// Why: OpenSSL 3.0 decodes a certificate's public key through its provider
// decoder framework, ~100 µs per certificate on this hardware (perf: lock and
// name-map lookups), and each chain link costs an RSA verification (~15 µs).
// Apple reuses a handful of leaf and intermediate certificates across all
// receipts, so remembering decoded certificates and verified chains leaves one
// RSA verification (the receipt's own signature) per receipt.
//
// Soundness: a chain's verdict depends only on its certificates, the (immutable)
// trust anchors and the evaluation time, and time enters only through each
// certificate's validity period. A remembered chain therefore stands for any
// instant inside the intersection of its certificates' validity periods, as long
// as the receipt at hand carries the same intermediates.
//
// The one mutable part of trust_anchors, hence its own lock. Only certificates of
// chains that verified are admitted, so clients cannot fill it with their own
// junk; it is bounded anyway and starts over when full.

#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/store_a/openssl_ptr.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::store_a {

class verification_cache {
public:
  static constexpr std::size_t max_entries = 128;

  // A new reference to the certificate encoded by `der`: remembered, or freshly
  // decoded (not remembered). Null unless `der` is exactly one DER certificate.
  ossl::x509_ptr certificate(std::string_view der) const;

  // Unified chains, the chains of each transaction blob version and StoreKit 2
  // JWS chains (jws.hpp) follow different rules (Apple OIDs, the pinned issuer,
  // where the intermediates come from, the x5c shape), so they are remembered
  // apart: a chain that stands for one kind's rules says nothing about another's.
  enum class chain_kind { unified = 0, transaction_v2 = 1, transaction_v3 = 2, jws = 3 };
  static constexpr int chain_kinds = 4;

  struct chain_memo {
    std::vector<std::string> intermediates; // DER, leaf side first (must be embedded again)
    unix_ms valid_from = 0;                 // intersection of the validity periods
    unix_ms valid_until = 0;
    bool sandbox = false; // anchored by a sandbox root
    // The embedded certificates must be exactly `intermediates`, in this order
    // and nothing else (a JWS's x5c after its leaf: its shape is part of what
    // verified). Otherwise each of `intermediates` must merely be among them.
    bool exact = false;
  };

  // The memo of a chain from this leaf that stands at `at` with certificates
  // the receipt embeds (`embedded`: DER); nullopt when there is none.
  std::optional<chain_memo> known_chain(chain_kind kind, std::string_view leaf_der, unix_ms at,
                                        const std::vector<std::string_view>& embedded) const;

  // Admits a verified chain: its certificates (DER of each, X509 of each) and memo.
  void remember(const std::vector<std::pair<std::string_view, X509*>>& certificates,
                chain_kind kind, std::string_view leaf_der, chain_memo memo) const;

  std::size_t certificate_count() const;

private:
  // Transparent hashing: lookups by string_view, without copying the DER.
  struct der_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  template <class V>
  using der_map = std::unordered_map<std::string, V, der_hash, std::equal_to<>>;

  mutable std::shared_mutex mutex_;
  mutable der_map<ossl::x509_ptr> certificates_;
  mutable der_map<chain_memo> chains_[chain_kinds]; // by chain_kind, then leaf DER
};

} // namespace receiptd::model::store_a
