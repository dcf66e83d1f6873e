#include "model/store_a/ber.hpp"

#include <limits>

namespace receiptd::model::store_a::ber {

namespace {

struct header {
  std::uint8_t identifier = 0;
  std::uint32_t tag_number = 0;
  bool constructed = false;
  bool indefinite = false;
  std::size_t length = 0; // content length (definite form)
  std::size_t size = 0;   // identifier and length octets
};

// The identifier and length octets at in[pos…] (X.690 §8.1.2, §8.1.3). A
// definite length must fit in what follows.
std::optional<header> read_header(std::string_view in, std::size_t pos) {
  auto octet = [&](std::size_t i) { return static_cast<std::uint8_t>(in[i]); };
  if (pos >= in.size() || in.size() - pos < 2)
    return std::nullopt;
  header h;
  std::size_t i = pos;
  h.identifier = octet(i++);
  h.constructed = (h.identifier & 0x20) != 0;
  if ((h.identifier & 0x1F) == 0x1F) {
    // High tag number: base 128, most significant first; four octets hold 28 bits.
    for (int n = 0;; ++n) {
      if (i >= in.size() || n == 4)
        return std::nullopt;
      std::uint8_t b = octet(i++);
      h.tag_number = (h.tag_number << 7) | (b & 0x7F);
      if ((b & 0x80) == 0)
        break;
    }
  } else {
    h.tag_number = h.identifier & 0x1F;
  }
  if (i >= in.size())
    return std::nullopt;
  std::uint8_t first = octet(i++);
  if (first == 0x80) {
    // Indefinite form: constructed encodings only (X.690 §8.1.3.2).
    if (!h.constructed)
      return std::nullopt;
    h.indefinite = true;
  } else if (first & 0x80) {
    std::size_t octets = first & 0x7F;
    if (octets == 0x7F || in.size() - i < octets) // 0xFF is reserved (§8.1.3.5 c)
      return std::nullopt;
    for (std::size_t k = 0; k < octets; ++k) {
      if (h.length > (std::numeric_limits<std::size_t>::max() >> 8))
        return std::nullopt; // longer than any buffer: no overflow, just a refusal
      h.length = (h.length << 8) | octet(i++);
    }
  } else {
    h.length = first;
  }
  h.size = i - pos;
  if (!h.indefinite && h.length > in.size() - i)
    return std::nullopt;
  return h;
}

bool is_end_of_contents(std::string_view in, std::size_t pos) {
  return in.size() - pos >= 2 && in[pos] == 0 && in[pos + 1] == 0;
}

} // namespace

std::optional<element> read(std::string_view& in) {
  auto h = read_header(in, 0);
  // Identifier octet 0 is reserved for end-of-contents (X.690 §8.1.5).
  if (!h || h->identifier == 0)
    return std::nullopt;
  element e;
  e.identifier = h->identifier;
  e.tag_number = h->tag_number;
  e.constructed = h->constructed;
  e.indefinite = h->indefinite;
  if (!h->indefinite) {
    e.whole = in.substr(0, h->size + h->length);
    e.content = in.substr(h->size, h->length);
    in.remove_prefix(e.whole.size());
    return e;
  }
  // Find the matching end-of-contents in one pass: definite elements are skipped
  // whole, indefinite ones open a level.
  std::size_t pos = h->size;
  int open = 1;
  while (open > 0) {
    if (is_end_of_contents(in, pos)) {
      pos += 2;
      --open;
      continue;
    }
    auto child = read_header(in, pos);
    if (!child || child->identifier == 0)
      return std::nullopt;
    if (child->indefinite) {
      if (++open > max_depth)
        return std::nullopt;
      pos += child->size;
    } else {
      pos += child->size + child->length;
    }
  }
  e.whole = in.substr(0, pos);
  e.content = in.substr(h->size, pos - 2 - h->size);
  in.remove_prefix(pos);
  return e;
}

std::optional<std::size_t> count_children(const element& e, std::size_t limit) {
  std::size_t n = 0;
  bool ok = for_each_child(e, [&](const element&) { return ++n <= limit; });
  if (n > limit)
    return n;
  if (!ok)
    return std::nullopt;
  return n;
}

} // namespace receiptd::model::store_a::ber
