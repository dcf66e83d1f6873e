#include "model/identifiers.hpp"

#include <arpa/inet.h>

#include "model/encoding.hpp"

namespace receiptd::model {

std::string make_uuid() {
  auto b = random_bytes(16);
  b[6] = static_cast<char>((b[6] & 0x0F) | 0x40);
  b[8] = static_cast<char>((b[8] & 0x3F) | 0x80);
  auto hex = hex_encode(b);
  return hex.substr(0, 8) + '-' + hex.substr(8, 4) + '-' + hex.substr(12, 4)
         + '-' + hex.substr(16, 4) + '-' + hex.substr(20);
}

std::optional<uuid_bytes> parse_uuid(std::string_view s) {
  if (s.size() != 36)
    return std::nullopt;
  uuid_bytes out{};
  size_t k = 0;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size();) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-')
        return std::nullopt;
      ++i;
      continue;
    }
    int hi = nibble(s[i]), lo = nibble(s[i + 1]);
    if (hi < 0 || lo < 0)
      return std::nullopt;
    out[k++] = static_cast<std::uint8_t>(hi << 4 | lo);
    i += 2;
  }
  return out;
}

std::optional<std::string> canonical_ip(std::string_view text) {
  if (text.empty() || text.size() > 64)
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
