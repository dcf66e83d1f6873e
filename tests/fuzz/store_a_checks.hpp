#pragma once
// The path an App Store receipt takes through model/ (validator step 2): decode,
// verify against the real trust anchors, make the record, render the answer.
// Shared by the store_a_* targets, which differ only in how they build the bytes.

#include <optional>
#include <string>
#include <string_view>

#include "model/encoding.hpp"
#include "model/resource_json.hpp"
#include "model/store_a/receipt.hpp"
#include "model/store_a/receipt_record.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace receiptd::fuzz {

// The device ids verify_receipt understands: a UUID (iOS: the vendor id of
// tests/data's tpinappreceipt-sandbox-g5-ios), a MAC address (macOS), or none.
inline std::optional<std::string> device_id_for(std::size_t selector) {
  switch (selector % 3) {
    case 0:
      return std::string("956328D9-CC6A-47F4-BE40-6953FB0AB6C7");
    case 1:
      return std::string("f8:ff:c2:1e:91:82");
    default:
      return std::nullopt;
  }
}

inline void check_store_a_bytes(std::string_view bytes, std::size_t selector) {
  namespace sa = model::store_a;
  auto decoded = sa::decode_receipt(bytes);
  if (!decoded) {
    FUZZ_CHECK(!decoded.errors().empty());
    FUZZ_CHECK(decoded.errors().front().code == "malformed_receipt");
  }
  // The receipt's own bundle id, so the bundle and device hash checks run too.
  const std::string bundle = decoded ? decoded->bundle_id : "com.example.app";
  model::store_a_upload upload;
  upload.receipt_bytes = std::string(bytes);
  upload.receipt_data = model::base64_encode(bytes);
  upload.identifier_for_vendor = device_id_for(selector);
  auto v = sa::verify_receipt(bytes, apple_anchors(), bundle, upload.identifier_for_vendor);
  if (verbose())
    std::fprintf(stderr, "verify_receipt: %s %s (bundle %s)\n",
                 std::string(to_string(v.reason)).c_str(), v.detail.c_str(), bundle.c_str());
  // Hostile bytes get a verdict; an internal failure (answered 500) is reserved
  // for the machine's trouble, not the input's.
  FUZZ_CHECK(!v.internal_error);
  // Nothing undecodable passes, and a pass always carries the receipt it judged.
  if (!decoded)
    FUZZ_CHECK(v.reason != model::fraud_reason::none);
  if (v.reason == model::fraud_reason::none)
    FUZZ_CHECK(v.receipt.has_value());

  model::app app;
  app.id = "00000000-0000-4000-8000-000000000001";
  app.bundle_id = bundle;
  auto record = sa::make_record(upload, app, v, "192.0.2.1", fixed_now);
  record.id = "00000000-0000-4000-8000-000000000002";
  auto answer = model::answer_for(record, v.reason);
  FUZZ_CHECK(answer.status >= 200 && answer.status < 500);
  parses_as_json(answer.body);
  parses_as_json(boost::json::serialize(model::receipt_json(record)));
}

} // namespace receiptd::fuzz
