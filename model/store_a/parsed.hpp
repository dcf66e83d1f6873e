#pragma once
// What decoding leaves behind for verification (internal): the public
// decoded_receipt plus the SignedData already parsed from the same bytes, so
// verify_receipt never parses anything twice. Certificates are decoded only by
// verification, through trust_anchors' certificate cache.

#include <optional>
#include <string>
#include <string_view>

#include "model/result.hpp"
#include "model/store_a/pkcs7.hpp"
#include "model/store_a/receipt.hpp"

namespace receiptd::model::store_a {

struct parsed_receipt {
  decoded_receipt receipt;
  content_info_ptr signed_data; // unified: content, signer info, raw embedded certificates
};

inline field_error malformed(std::string message) {
  return field_error{"receipt", "malformed_receipt", std::move(message)};
}

// Why a local check (signature, chain, device) refused a receipt: code is the
// fraud reason verify_receipt records, message the verdict's detail.
inline field_error refusal(fraud_reason reason, std::string message) {
  return field_error{"receipt", std::string(to_string(reason)), std::move(message)};
}

// Style detection: an old-style plist is a transaction receipt.
bool is_transaction_style(std::string_view bytes);

// Style detection, then the unified or transaction decoder (everything decoded).
result<parsed_receipt> parse_receipt(std::string_view bytes, std::size_t max_in_app_purchases);

// unified_receipt.cpp: PKCS#7 wrapper (pkcs7.hpp parse_signed_data) + payload.
// Verification parses the wrapper alone first: the payload is decoded only once
// the signature and chain hold.
result<parsed_receipt> parse_unified(std::string_view der, std::size_t max_in_app_purchases);

// A decoded_receipt from a decoded payload.
decoded_receipt unified_from_payload(unified_receipt payload);

struct payload_options {
  // false: in-app purchases (attribute 17) are skipped undecoded and uncounted;
  // the rest is decoded (how verification learns the creation date cheaply).
  bool in_app = true;
  // More in-app purchases than this: malformed.
  std::size_t max_in_app_purchases = default_max_in_app_purchases;
};

// asn1_payload.cpp: the signed ASN.1 attribute set of a unified receipt.
result<unified_receipt> decode_payload(std::string_view payload, const payload_options& options);

// transaction_receipt.cpp: an iOS 6 receipt from its outer plist text.
result<parsed_receipt> parse_transaction(std::string_view plist_text);

// The parts of a transaction receipt verification needs before the
// purchase-info plist is parsed: the outer plist, the split signature blob and
// the base64-decoded purchase-info bytes (in `receipt`, whose purchase_info and
// in-app purchase are still empty).
result<parsed_receipt> parse_transaction_envelope(std::string_view plist_text);

// Parses the purchase-info plist of an envelope into its purchase, bundle id
// and date; the error (malformed_receipt) when it does not parse.
std::optional<field_error> decode_purchase_info(parsed_receipt& envelope);

} // namespace receiptd::model::store_a
