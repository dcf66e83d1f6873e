// Style detection (DESIGN.md §3): an old-style plist is a transaction receipt,
// anything else must be PKCS#7. A PKCS#7 structure starts with a SEQUENCE tag
// (0x30), a plist with '{' after optional blanks, so the two never overlap.

#include "model/store_a/openssl_ptr.hpp"
#include "model/store_a/parsed.hpp"

namespace receiptd::model::store_a {

namespace {

bool looks_like_plist(std::string_view bytes) {
  for (char c : bytes) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
      continue;
    return c == '{';
  }
  return false;
}

} // namespace

bool is_transaction_style(std::string_view bytes) {
  return looks_like_plist(bytes);
}

result<parsed_receipt> parse_receipt(std::string_view bytes, std::size_t max_in_app_purchases) {
  if (looks_like_plist(bytes))
    return parse_transaction(bytes);
  return parse_unified(bytes, max_in_app_purchases);
}

result<decoded_receipt> decode_receipt(std::string_view bytes) {
  ossl::error_queue_guard guard;
  try {
    auto parsed = parse_receipt(bytes, default_max_in_app_purchases);
    if (!parsed)
      return parsed.errors();
    return std::move(parsed->receipt);
  } catch (...) { // bad_alloc is the only candidate; errors stay values
    return malformed("internal error");
  }
}

} // namespace receiptd::model::store_a
