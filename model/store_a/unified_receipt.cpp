// A unified app receipt: PKCS#7 SignedData whose content is the ASN.1 payload
// (Apple, "Receipt Validation Programming Guide": "The receipt is a PKCS #7
// container"). Xcode's StoreKit-testing receipts use BER indefinite lengths, so
// the wrapper goes through OpenSSL's BER-capable decoder (pkcs7.cpp), never a
// DER-only parser.

#include "model/store_a/parsed.hpp"

#include "model/encoding.hpp"

namespace receiptd::model::store_a {

namespace {

environment environment_of(const unified_receipt& r) {
  // Attribute 0 is "Production" in the App Store, "ProductionSandbox" in the
  // sandbox and "Xcode" for StoreKit testing; receipts older than the attribute
  // come from production.
  if (r.receipt_type.empty() || r.receipt_type == "Production")
    return environment::production;
  return environment::sandbox;
}

} // namespace

decoded_receipt unified_from_payload(unified_receipt payload) {
  decoded_receipt d;
  d.style = receipt_style::unified;
  d.bundle_id = payload.bundle_id;
  d.env = environment_of(payload);
  d.signed_at = payload.creation_date;
  d.in_app = payload.in_app;
  d.detail = std::move(payload);
  return d;
}

result<parsed_receipt> parse_unified(std::string_view der, std::size_t max_in_app_purchases) {
  auto ci = parse_signed_data(der);
  if (!ci)
    return ci.errors();
  // The payload is decoded in place, without a copy.
  payload_options options;
  options.max_in_app_purchases = max_in_app_purchases;
  auto content = signed_content(**ci);
  auto payload = decode_payload(content, options);
  if (!payload)
    return payload.errors();
  parsed_receipt out;
  out.receipt = unified_from_payload(std::move(payload).value());
  out.receipt.signed_content_hash = sha256_hex(content);
  out.signed_data = std::move(*ci);
  return out;
}

} // namespace receiptd::model::store_a
