// The ASN.1 payload of a unified receipt (SET OF ReceiptAttribute, Apple's
// "Receipt Validation Programming Guide"), fuzzed on its own: the input is the
// payload, wrapped here in a minimal unsigned SignedData so every mutation lands
// in the attribute decoder instead of the PKCS#7 envelope. decode_receipt only:
// without a signer verify_receipt stops before the payload matters.

#include "tests/fuzz/store_a_checks.hpp"

namespace {

// DER tag-length-value with a definite length.
std::string tlv(unsigned char tag, std::string_view content) {
  std::string out(1, static_cast<char>(tag));
  const auto n = content.size();
  if (n < 0x80) {
    out += static_cast<char>(n);
  } else {
    std::string len;
    for (auto v = n; v > 0; v >>= 8)
      len.insert(len.begin(), static_cast<char>(v & 0xff));
    out += static_cast<char>(0x80 | len.size());
    out += len;
  }
  out.append(content);
  return out;
}

// ContentInfo { signedData, [0] SignedData { 1, {}, ContentInfo { data, [0] OCTET
// STRING payload }, {} } } (RFC 2315 §7, §9.1).
std::string wrap(std::string_view payload) {
  static const std::string signed_data_oid("\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x07\x02", 11);
  static const std::string data_oid("\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x07\x01", 11);
  std::string inner = data_oid + tlv(0xa0, tlv(0x04, payload));
  std::string sd
    = std::string("\x02\x01\x01", 3) + tlv(0x31, "") + tlv(0x30, inner) + tlv(0x31, "");
  return tlv(0x30, signed_data_oid + tlv(0xa0, tlv(0x30, sd)));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace sa = receiptd::model::store_a;
  using namespace receiptd;
  const std::string bytes = wrap(fuzz::as_text(data, size));
  auto decoded = sa::decode_receipt(bytes);
  if (!decoded) {
    FUZZ_CHECK(decoded.errors().front().code == "malformed_receipt");
    return 0;
  }
  FUZZ_CHECK(decoded->style == model::receipt_style::unified);
  // What a record of this receipt shows, had it verified.
  sa::verification v;
  v.receipt = std::move(decoded).value();
  model::store_a_upload upload;
  upload.receipt_bytes = bytes;
  upload.receipt_data = model::base64_encode(bytes);
  model::app app;
  app.id = "00000000-0000-4000-8000-000000000001";
  app.bundle_id = v.receipt->bundle_id;
  auto record = sa::make_record(upload, app, v, "192.0.2.1", fuzz::fixed_now);
  record.id = "00000000-0000-4000-8000-000000000002";
  fuzz::parses_as_json(model::answer_for(record, v.reason).body);
  return 0;
}
