// iOS 6 transaction receipts: the outer plist, the base64 purchase-info plist
// inside it and the binary signature blob (version, signature, certificate), then
// the same verification and answer as unified receipts.
//
// The first byte picks how the rest is read:
//  - even: the rest is the outer plist text as uploaded (after base64);
//  - odd:  three fields separated by "|@|": the purchase-info plist text, the
//    signature blob, and extra outer entries (e.g. "environment" = "Sandbox";).
//    They are base64-encoded and assembled here, so mutations reach the inner
//    plist and the blob instead of breaking the outer base64.

#include "tests/fuzz/store_a_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace receiptd;
  if (size == 0)
    return 0;
  auto rest = fuzz::as_text(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    fuzz::check_store_a_bytes(rest, data[0] >> 1);
    return 0;
  }
  auto fields = fuzz::split_fields(rest, 3);
  std::string outer = "{\n\t\"signature\" = \"" + model::base64_encode(fields[1])
    + "\";\n\t\"purchase-info\" = \"" + model::base64_encode(fields[0]) + "\";\n";
  outer.append(fields[2]);
  outer += "\n}";
  fuzz::check_store_a_bytes(outer, data[0] >> 1);
  return 0;
}
