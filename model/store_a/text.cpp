#include "model/store_a/text.hpp"

#include <charconv>

#include "model/encoding.hpp"

namespace receiptd::model::store_a::text {

bool is_valid_utf8(std::string_view s) {
  return model::is_valid_utf8(s);
}

std::optional<std::int64_t> parse_decimal(std::string_view s) {
  if (s.empty() || s.size() > 19)
    return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9')
      return std::nullopt;
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || ptr != s.data() + s.size())
    return std::nullopt;
  return v;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto x = static_cast<unsigned char>(a[i]);
    auto y = static_cast<unsigned char>(b[i]);
    if (x >= 'A' && x <= 'Z')
      x = static_cast<unsigned char>(x + 32);
    if (y >= 'A' && y <= 'Z')
      y = static_cast<unsigned char>(y + 32);
    if (x != y)
      return false;
  }
  return true;
}

} // namespace receiptd::model::store_a::text
