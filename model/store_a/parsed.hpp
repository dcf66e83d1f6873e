#pragma once
// What decoding leaves behind for verification (internal): the public
// decoded_receipt plus the SignedData already parsed from the same bytes, so
// verify_receipt never parses anything twice. Certificates are decoded only by
// verification, through trust_anchors' certificate cache.

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

// Style detection, then the unified or transaction decoder.
result<parsed_receipt> parse_receipt(std::string_view bytes);

// unified_receipt.cpp: PKCS#7 wrapper + payload.
result<parsed_receipt> parse_unified(std::string_view der);

// asn1_payload.cpp: the signed ASN.1 attribute set of a unified receipt.
result<unified_receipt> decode_payload(std::string_view payload);

// transaction_receipt.cpp: an iOS 6 receipt from its outer plist text.
result<parsed_receipt> parse_transaction(std::string_view plist_text);

} // namespace receiptd::model::store_a
