#include "model/identifiers.hpp"

#include <arpa/inet.h>

#include "model/encoding.hpp"

namespace receiptd::model {

std::string make_uuid() {
  unsigned char b[16];
  random_bytes(b, sizeof b);
  b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40); // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80); // RFC 4122 variant
  // Written in place (every record and purchase gets one): 8-4-4-4-12 digits.
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(36, '-');
  std::size_t at = 0;
  for (unsigned char c : b) {
    if (at == 8 || at == 13 || at == 18 || at == 23)
      ++at;
    out[at++] = digits[c >> 4];
    out[at++] = digits[c & 15];
  }
  return out;
}

std::optional<uuid_bytes> parse_uuid(std::string_view s) {
  if (s.size() != 36)
    return std::nullopt;
  uuid_bytes out{};
  size_t k = 0;
  for (size_t i = 0; i < s.size();) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-')
        return std::nullopt;
      ++i;
      continue;
    }
    int hi = hex_digit_value(s[i]), lo = hex_digit_value(s[i + 1]);
    if (hi < 0 || lo < 0)
      return std::nullopt;
    out[k++] = static_cast<std::uint8_t>(hi << 4 | lo);
    i += 2;
  }
  return out;
}

std::optional<std::array<std::uint8_t, 6>> parse_mac_address(std::string_view s) {
  if (s.size() != 17)
    return std::nullopt;
  std::array<std::uint8_t, 6> out{};
  for (std::size_t i = 0, k = 0; i < 17; i += 3, ++k) {
    if (i > 0 && s[i - 1] != ':' && s[i - 1] != '-')
      return std::nullopt;
    int hi = hex_digit_value(s[i]), lo = hex_digit_value(s[i + 1]);
    if (hi < 0 || lo < 0)
      return std::nullopt;
    out[k] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return out;
}

std::optional<std::string> canonical_ip(std::string_view text) {
  // inet_pton reads a C string: "192.0.2.1\0junk" would pass as its first part.
  if (text.empty() || text.size() > 64 || text.find('\0') != std::string_view::npos)
    return std::nullopt;
  std::string s(text);
  char buf[INET6_ADDRSTRLEN];
  in_addr v4;
  if (inet_pton(AF_INET, s.c_str(), &v4) == 1) {
    inet_ntop(AF_INET, &v4, buf, sizeof(buf));
    return std::string(buf);
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, s.c_str(), &v6) == 1) {
    inet_ntop(AF_INET6, &v6, buf, sizeof(buf));
    return std::string(buf);
  }
  return std::nullopt;
}

} // namespace receiptd::model
