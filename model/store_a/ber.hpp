#pragma once
// A bounded BER walker (internal): headers, definite and indefinite lengths
// (X.690 §8.1.3), high tag numbers, children of a constructed element. It never
// allocates and never recurses: an indefinite-length element is skipped by
// counting open levels up to max_depth, so hostile input costs one linear pass.
//
// Used to look at the shape of a PKCS#7 wrapper before OpenSSL's template
// decoder allocates anything for it (pkcs7.cpp).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace receiptd::model::store_a::ber {

// Deeper nesting of indefinite lengths than any receipt uses (Xcode's receipts
// nest seven); OpenSSL itself stops constructed strings at 30 (ASN1_MAX_CONSTRUCTED_NEST).
inline constexpr int max_depth = 30;

struct element {
  std::uint8_t identifier = 0; // first identifier octet: class, constructed bit, low tag
  std::uint32_t tag_number = 0;
  bool constructed = false;
  bool indefinite = false;
  std::string_view whole; // identifier, length, content and, if indefinite, the end-of-contents
  std::string_view
    content; // content octets (for indefinite: the children, without the end-of-contents)
};

// Reads the element at the front of `in` and advances past it. Nullopt on
// truncation, a length beyond `in`, an indefinite length on a primitive element,
// nesting deeper than max_depth or an end-of-contents octet pair where an
// element should be.
std::optional<element> read(std::string_view& in);

// Calls fn(child) for each child of a constructed element, in order, while fn
// returns true. False when a child does not read (see read) or fn said stop.
template <class Fn>
bool for_each_child(const element& e, Fn&& fn) {
  if (!e.constructed)
    return false;
  auto rest = e.content;
  while (!rest.empty()) {
    auto child = read(rest);
    if (!child || !fn(*child))
      return false;
  }
  return true;
}

// Counts the children of a constructed element, stopping (and returning
// `limit` + 1) as soon as there are more than `limit`. Nullopt when a child
// does not read.
std::optional<std::size_t> count_children(const element& e, std::size_t limit);

} // namespace receiptd::model::store_a::ber
