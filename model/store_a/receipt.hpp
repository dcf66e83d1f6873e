#pragma once
// Store A (App Store) receipts decoded locally: unified PKCS#7 app receipts and
// iOS 6 transaction receipts (DESIGN.md §3). Pure: bytes in, values out.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/records.hpp"
#include "model/result.hpp"

namespace receiptd::model::store_a {

// The ASN.1 payload of a unified receipt, every documented attribute.
struct unified_receipt {
  std::string receipt_type;         // 0: "Production", "ProductionSandbox", "Xcode", …
                                    //    (absent or "Production" → production, else sandbox)
  std::string bundle_id;            // 2, decoded UTF8String
  std::string bundle_id_raw;        // 2, the value octets as signed (device hash input)
  std::string app_version;          // 3
  std::string opaque;               // 4, raw
  std::string sha1_hash;            // 5, raw (20 bytes)
  std::string age_rating;           // 10 (undocumented; "4+" in Mac App Store receipts)
  std::optional<unix_ms> creation_date;   // 12
  std::string original_app_version; // 19
  std::optional<unix_ms> expiration_date; // 21
  std::vector<apple_in_app_purchase> in_app; // 17, in receipt order (same as decoded_receipt::in_app)
  std::size_t payload_size = 0;     // bytes of the signed ASN.1 payload (the PKCS#7 content)
};

// An iOS 6 transaction receipt: the outer plist and the decoded purchase-info.
struct transaction_receipt {
  std::map<std::string, std::string> outer;         // signature, purchase-info, environment, pod, …
  std::map<std::string, std::string> purchase_info; // bid, product-id, transaction-id, …
  std::string purchase_info_bytes; // base64-decoded purchase-info: the signed bytes after the version byte
  int signature_version = 0;       // 2 or 3
  std::string signature;           // 128 or 256 bytes
  std::string leaf_der;            // the embedded leaf certificate
};

struct decoded_receipt {
  receipt_style style = receipt_style::unified;
  std::string bundle_id;
  environment env = environment::production; // from the receipt itself
  std::optional<unix_ms> signed_at; // creation date (unified) / purchase date (transaction)
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
// Certificates are not decoded here (verify_receipt does that). Never throws;
// hostile bytes yield an error value.
result<decoded_receipt> decode_receipt(std::string_view bytes);

// Certificates the chain checks accept, loaded once at start from PEM files.
// One instance is shared by every verifying thread. Its trust decisions are fixed
// at load; it also remembers decoded certificates and verified chains (bounded,
// behind its own lock) because OpenSSL 3.0 spends ~100 µs decoding each
// certificate: see verification_cache.hpp.
class trust_anchors;
struct trust_config {
  std::vector<std::string> root_pems;         // PEM text of each trusted root (Apple Root CA, …)
  std::vector<std::string> intermediate_pems; // PEM text of intermediates that receipts may omit
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
  std::optional<decoded_receipt> receipt;   // whenever the bytes decoded
};

// Decodes, then checks in this order: signature (invalid_signature), chain to a
// trust anchor at the receipt's own date with the Apple OIDs (untrusted_certificate),
// bundle id (bundle_id_mismatch), and — when identifier_for_vendor is given —
// the device hash (device_hash_mismatch). Undecodable bytes: malformed_receipt.
//
// Details of each step:
//  - signature: unified, the single PKCS#7 signer (SHA-1, SHA-256, SHA-384 or SHA-512,
//    with or without signed attributes) against its embedded certificate; transaction, SHA1withRSA over the
//    blob's version byte followed by the decoded purchase-info, with the embedded leaf.
//  - chain: evaluated at the receipt's creation date (unified attr 12) or purchase date
//    (transaction); "now" only when the receipt carries no date. Unified: the embedded
//    certificates must lead to a root, the leaf carrying OID 1.2.840.113635.100.6.11.1
//    and the next certificate 1.2.840.113635.100.6.2.1; failing that, a sandbox root
//    (no OIDs required) is tried and, if it anchors the chain, the environment becomes
//    sandbox. Transaction: leaf ← configured intermediate ← root.
//  - device hash: identifier_for_vendor is a UUID (iOS) or a MAC address
//    "f8:ff:c2:1e:91:82" (macOS receipts hash the primary MAC). Unified: SHA-1(id bytes ‖
//    attr 4 ‖ attr 2's value octets) == attr 5. Transaction: `unique-vendor-identifier`
//    equals it, ignoring case. A receipt without the hash or vendor id does not match.
// Thread-safe; never throws (an internal failure such as bad_alloc is reported as
// malformed_receipt with the detail "internal error").
verification verify_receipt(std::string_view bytes, const trust_anchors& anchors,
                            std::string_view expected_bundle_id,
                            const std::optional<std::string>& identifier_for_vendor);

struct verify_options {
  // Evaluate certificate validity at this instant instead of the receipt's own
  // date (audits, and tests showing that the date matters).
  std::optional<unix_ms> at;
};
verification verify_receipt(std::string_view bytes, const trust_anchors& anchors,
                            std::string_view expected_bundle_id,
                            const std::optional<std::string>& identifier_for_vendor,
                            const verify_options& options);

} // namespace receiptd::model::store_a
