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
  std::string bundle_id;            // 2, decoded UTF8String
  std::string bundle_id_raw;        // 2, the value octets as signed (device hash input)
  std::string app_version;          // 3
  std::string opaque;               // 4, raw
  std::string sha1_hash;            // 5, raw (20 bytes)
  std::optional<unix_ms> creation_date;   // 12
  std::string original_app_version; // 19
  std::optional<unix_ms> expiration_date; // 21
  std::vector<apple_in_app_purchase> in_app; // 17, in receipt order
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
result<decoded_receipt> decode_receipt(std::string_view bytes);

// Certificates the chain checks accept, loaded once at start from PEM files.
class trust_anchors;
struct trust_config {
  std::vector<std::string> root_pems;         // PEM text of each trusted root (Apple Root CA, …)
  std::vector<std::string> intermediate_pems; // PEM text of intermediates that receipts may omit
                                              // (iTunes Store CA, WWDR CA for transaction receipts)
  std::vector<std::string> sandbox_root_pems; // opt-in roots whose receipts are sandbox only
                                              // (the Xcode StoreKit test certificate)
};
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
verification verify_receipt(std::string_view bytes, const trust_anchors& anchors,
                            std::string_view expected_bundle_id,
                            const std::optional<std::string>& identifier_for_vendor);

} // namespace receiptd::model::store_a
