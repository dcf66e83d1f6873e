// The text forms of a compact JWS (jws_internal.hpp, jws.hpp's split_jws):
// strict base64url for its segments, strict padded base64 for x5c.

#include <array>
#include <cstdint>

#include "model/store_a/jws.hpp"
#include "model/store_a/jws_internal.hpp"

namespace receiptd::model::store_a {

namespace {

using decode_table = std::array<std::int8_t, 256>;

constexpr decode_table make_table(char c62, char c63) {
  decode_table t{};
  for (auto& v : t)
    v = -1;
  constexpr char letters_digits[]
    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  for (int i = 0; i < 62; ++i)
    t[static_cast<unsigned char>(letters_digits[i])] = static_cast<std::int8_t>(i);
  t[static_cast<unsigned char>(c62)] = 62;
  t[static_cast<unsigned char>(c63)] = 63;
  return t;
}
constexpr auto base64url_table = make_table('-', '_'); // RFC 4648 §5
constexpr auto base64_table = make_table('+', '/');    // RFC 4648 §4

// Strict unpadded base64 in the given alphabet: nothing else (no whitespace,
// no '='), and the unused low bits of the last character zero, so the bytes
// have one spelling. A header and payload are ~4 KB and up to 64 KiB: decoded
// a quantum at a time into the final buffer.
std::optional<std::string> decode_unpadded(std::string_view text, const decode_table& table) {
  const std::size_t n = text.size();
  if (n % 4 == 1)
    return std::nullopt;
  std::string out(decoded_size(n), '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  const auto* in = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const int a = table[in[i]], b = table[in[i + 1]], c = table[in[i + 2]], d = table[in[i + 3]];
    if ((a | b | c | d) < 0)
      return std::nullopt;
    const auto v = static_cast<std::uint32_t>(a << 18 | b << 12 | c << 6 | d);
    *o++ = static_cast<unsigned char>(v >> 16);
    *o++ = static_cast<unsigned char>(v >> 8);
    *o++ = static_cast<unsigned char>(v);
  }
  if (const auto rest = n - i; rest >= 2) {
    const int a = table[in[i]], b = table[in[i + 1]], c = rest == 3 ? table[in[i + 2]] : 0;
    if ((a | b | c) < 0 || (rest == 2 ? (b & 0x0F) : (c & 0x03)) != 0)
      return std::nullopt;
    const auto v = static_cast<std::uint32_t>(a << 18 | b << 12 | c << 6);
    *o++ = static_cast<unsigned char>(v >> 16);
    if (rest == 3)
      *o++ = static_cast<unsigned char>(v >> 8);
  }
  return out;
}

} // namespace

std::optional<std::string> base64url_decode(std::string_view text) {
  return decode_unpadded(text, base64url_table);
}

// x5c entries are standard base64 with padding (RFC 7515 §4.1.6): whole
// quanta, '=' only as the padding of the last, no whitespace. (model/encoding's
// base64_decode is the lenient reader of uploaded receipts: it skips
// whitespace and accepts a missing pad.)
std::optional<std::string> x5c_decode(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0 || text.size() > (max_certificate_bytes + 2) / 3 * 4)
    return std::nullopt;
  std::size_t pad = 0;
  while (pad < 2 && text[text.size() - 1 - pad] == '=')
    ++pad;
  auto der = decode_unpadded(text.substr(0, text.size() - pad), base64_table);
  if (!der || der->empty() || der->size() > max_certificate_bytes)
    return std::nullopt;
  return der;
}

std::optional<jws_segments> split_jws(std::string_view compact) {
  std::string_view parts[3];
  std::size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const auto dot = compact.find('.', start);
    if ((i < 2) == (dot == std::string_view::npos))
      return std::nullopt; // fewer or more than two dots
    const auto end = i < 2 ? dot : compact.size();
    parts[i] = compact.substr(start, end - start);
    start = end + 1;
  }
  for (auto part : parts) {
    if (part.empty() || part.size() % 4 == 1)
      return std::nullopt;
    for (char c : part)
      if (base64url_table[static_cast<unsigned char>(c)] < 0)
        return std::nullopt;
  }
  return jws_segments{parts[0], parts[1], parts[2]};
}

} // namespace receiptd::model::store_a
