#pragma once
// Store A (App Store) receipts decoded locally: unified PKCS#7 app receipts and
// iOS 6 transaction receipts (DESIGN.md §3). Pure: bytes in, values out.

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/clock.hpp"
#include "model/records.hpp"
#include "model/result.hpp"

namespace receiptd::model::store_a {

// The ASN.1 payload of a unified receipt, every documented attribute.
struct unified_receipt {
  std::string receipt_type;             // 0: "Production", "ProductionSandbox", "Xcode", …
                                        //    (absent or "Production" → production, else sandbox)
  std::string bundle_id;                // 2, decoded UTF8String
  std::string bundle_id_raw;            // 2, the value octets as signed (device hash input)
  std::string app_version;              // 3
  std::string opaque;                   // 4, raw
  std::string sha1_hash;                // 5, raw (20 bytes)
  std::string age_rating;               // 10 (undocumented; "4+" in Mac App Store receipts)
  std::optional<unix_ms> creation_date; // 12
  std::string original_app_version;     // 19
  std::optional<unix_ms> expiration_date; // 21
  std::vector<apple_in_app_purchase>
    in_app;                     // 17, in receipt order (same as decoded_receipt::in_app)
  std::size_t payload_size = 0; // bytes of the signed ASN.1 payload (the PKCS#7 content)
};

// An iOS 6 transaction receipt: the outer plist and the decoded purchase-info.
struct transaction_receipt {
  std::map<std::string, std::string> outer; // signature, purchase-info, environment, pod, …
  std::map<std::string, std::string> purchase_info; // bid, product-id, transaction-id, …
  std::string
    purchase_info_bytes; // base64-decoded purchase-info: the signed bytes after the version byte
  int signature_version = 0; // 2 or 3
  std::string signature;     // 128 or 256 bytes
  std::string leaf_der;      // the embedded leaf certificate
};

struct decoded_receipt {
  receipt_style style = receipt_style::unified;
  std::string bundle_id;
  environment env = environment::production; // from the receipt itself
  std::optional<unix_ms> signed_at; // creation date (unified) / purchase date (transaction)
  // Hex SHA-256 of what the signature covers: the PKCS#7 content (unified), the
  // decoded purchase-info (transaction). The certificate set and a transaction
  // receipt's outer keys are not signed: two receipts that differ only there are
  // one receipt, and one record (the re-upload key).
  std::string signed_content_hash;
  std::vector<apple_in_app_purchase> in_app;
  std::variant<unified_receipt, transaction_receipt> detail;
};

// Style detection and full decoding, without any signature check.
// Errors carry field "receipt" and code "malformed_receipt".
//  - bytes whose first non-blank character is '{' are an old-style plist; it must
//    hold "signature" and "purchase-info" (a transaction receipt). Apple's unsigned
//    mock (only "purchase-info") is therefore malformed: every receipt Apple issued
//    carries its signature, so its absence is a structural defect, not a failed check.
//  - anything else must be a PKCS#7 SignedData (DER or BER) wrapping the payload.
// Certificates are not decoded here (verify_receipt does that). More than
// default_max_in_app_purchases in-app purchases (below) are malformed. Never
// throws; hostile bytes yield an error value.
result<decoded_receipt> decode_receipt(std::string_view bytes);

// Certificates the chain checks accept, loaded once at start from PEM files.
// One instance is shared by every verifying thread. Its trust decisions are fixed
// at load; it also remembers decoded certificates and verified chains (bounded,
// behind its own lock) because OpenSSL 3.0 spends ~100 µs decoding each
// certificate: see verification_cache.hpp.
class trust_anchors;
struct trust_config {
  std::vector<std::string> root_pems; // PEM text of each trusted root (Apple Root CA, …)
  std::vector<std::string>
    intermediate_pems; // PEM text of intermediates that receipts may omit
                       // (iTunes Store CA, WWDR CA for transaction receipts).
                       // Unified receipts embed their own intermediate and
                       // are chained with the embedded certificates only.
  std::vector<std::string> sandbox_root_pems; // opt-in roots whose receipts are sandbox only
                                              // (the Xcode StoreKit test certificate)
};
// Each PEM text may hold several certificates. Errors (field "trust", code
// "invalid_certificate") name the list and index of the text that did not parse;
// at least one root (root_pems or sandbox_root_pems) is required.
result<std::shared_ptr<const trust_anchors>> load_trust_anchors(const trust_config& cfg);

struct verification {
  fraud_reason reason = fraud_reason::none; // none: everything checked out
  std::string detail;                       // why, in a few words, for logs
  // Set when the receipt's signature and chain verified and its payload decoded
  // (reason none, bundle_id_mismatch or device_hash_mismatch). Refused for its
  // signature or chain: only its style is set, since what unverified bytes claim
  // is never decoded in full (a forged payload may hold 65,000 purchases).
  // Malformed: empty.
  std::optional<decoded_receipt> receipt;
  // Verification itself failed (bad_alloc, an OpenSSL internal error): no
  // verdict on the receipt. reason stays none and receipt empty; callers must
  // test this first and answer 500 without storing anything.
  bool internal_error = false;
};

// Apple's receipts carry at most a few hundred in-app purchases (consumables
// drop out once finished); every purchase becomes a stored row and ~300 bytes
// of each answer, so more than this is refused as malformed.
inline constexpr std::size_t default_max_in_app_purchases = 2000;

// Checks in this order, decoding only what the next check needs: structure of
// the wrapper (malformed_receipt), signature (invalid_signature), chain to a trust
// anchor at the receipt's own date with Apple's markers (untrusted_certificate),
// the payload in full (malformed_receipt, including more in-app purchases than
// max_in_app_purchases), bundle id (bundle_id_mismatch), and — when
// identifier_for_vendor is given — the device hash (device_hash_mismatch).
//
// Details of each step:
//  - structure: unified, the PKCS#7 wrapper's shape (counts and sizes of its
//    parts, content type data) is walked before it is decoded; transaction, the
//    outer plist and the signature blob.
//  - signature: unified, the single PKCS#7 signer (SHA-1, SHA-256, SHA-384 or SHA-512,
//    with or without signed attributes) against its embedded certificate; transaction,
//    SHA1withRSA over the blob's version byte followed by the decoded purchase-info,
//    with the embedded leaf. The key must be RSA of 1024 to 4096 bits with a public
//    exponent of at most 64 bits (or EC, for PKCS#7 signers); any other is refused
//    before it is used.
//  - chain: evaluated at the receipt's creation date (unified attr 12) or purchase date
//    (transaction); "now" only when the receipt carries no date. Unified: the embedded
//    certificates must lead to a root, the leaf carrying OID 1.2.840.113635.100.6.11.1
//    and the next certificate 1.2.840.113635.100.6.2.1; failing that, a sandbox root
//    (no OIDs required) is tried and, if it anchors the chain, the environment becomes
//    xcode. Transaction: leaf ← configured intermediate ← root, pinned per blob version
//    (trust.hpp): v2, a "PurchaseReceiptCertificate" leaf (OID 1.2.840.113635.100.6.5.1)
//    under the iTunes Store CA (1.2.840.113635.100.6.2.2); v3, a receipt-signing leaf
//    (1.2.840.113635.100.6.11.1) under the WWDR CA (1.2.840.113635.100.6.2.1).
//  - device hash: identifier_for_vendor is a UUID (iOS) or a MAC address
//    "f8:ff:c2:1e:91:82" (macOS receipts hash the primary MAC). Unified: SHA-1(id bytes ‖
//    attr 4 ‖ attr 2's value octets) == attr 5. Transaction: `unique-vendor-identifier`
//    equals it, ignoring case. A receipt without the hash or vendor id does not match.
// Thread-safe; never throws: an internal failure such as bad_alloc sets
// internal_error, never a fraud reason.
verification verify_receipt(std::string_view bytes, const trust_anchors& anchors,
                            std::string_view expected_bundle_id,
                            const std::optional<std::string>& identifier_for_vendor);

struct verify_options {
  // Evaluate certificate validity at this instant instead of the receipt's own
  // date (audits, and tests showing that the date matters).
  std::optional<unix_ms> at;
  // "Now", for a receipt that carries no date of its own (never null).
  const time_source* clock = &system_time();
  // store-a.max-in-app-purchases.
  std::size_t max_in_app_purchases = default_max_in_app_purchases;
  // Test seam: called inside verify_receipt's failure guard before any work.
  // Tests throw from it to show that an internal failure is internal_error,
  // never a fraud verdict. Null in the product.
  void (*fault_for_tests)() = nullptr;
};
verification verify_receipt(std::string_view bytes, const trust_anchors& anchors,
                            std::string_view expected_bundle_id,
                            const std::optional<std::string>& identifier_for_vendor,
                            const verify_options& options);

} // namespace receiptd::model::store_a
