#include "model/store_a/der.hpp"

namespace receiptd::model::store_a::der {

std::optional<tlv> read(std::string_view& in) {
  if (in.size() < 2)
    return std::nullopt;
  auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(in[i]); };
  tlv out;
  out.tag = byte(0);
  if ((out.tag & 0x1F) == 0x1F)
    return std::nullopt; // high tag numbers never occur in the payload (X.690 §8.1.2.4)
  std::size_t pos = 2;
  std::size_t length = byte(1);
  if (length & 0x80) {
    auto octets = length & 0x7F;
    // 0x80 is BER's indefinite form; more than 4 length octets cannot describe
    // anything a receipt holds.
    if (octets == 0 || octets > 4 || in.size() < 2 + octets)
      return std::nullopt;
    length = 0;
    for (std::size_t i = 0; i < octets; ++i)
      length = (length << 8) | byte(2 + i);
    pos += octets;
  }
  if (length > in.size() - pos)
    return std::nullopt;
  out.value = in.substr(pos, length);
  out.whole = in.substr(0, pos + length);
  in.remove_prefix(pos + length);
  return out;
}

std::optional<tlv> read(std::string_view& in, std::uint8_t expected) {
  auto copy = in;
  auto t = read(copy);
  if (!t || t->tag != expected)
    return std::nullopt;
  in = copy;
  return t;
}

std::optional<std::int64_t> to_int64(std::string_view content) {
  if (content.empty() || content.size() > 8)
    return std::nullopt;
  // Two's complement, big-endian (X.690 §8.3.3): start from the sign extension.
  std::uint64_t v = (static_cast<std::uint8_t>(content[0]) & 0x80) ? ~std::uint64_t{0} : 0;
  for (unsigned char c : content)
    v = (v << 8) | c;
  return static_cast<std::int64_t>(v);
}

} // namespace receiptd::model::store_a::der
