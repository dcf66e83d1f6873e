// The text forms of a compact JWS (jws_internal.hpp, jws.hpp's split_jws):
// strict base64url for its segments (model/encoding.hpp), strict padded base64
// for x5c.

#include <array>

#include "model/encoding.hpp"
#include "model/store_a/jws.hpp"
#include "model/store_a/jws_internal.hpp"

namespace receiptd::model::store_a {

// x5c entries are standard base64 with padding (RFC 7515 §4.1.6): whole
// quanta, '=' only as the padding of the last, no whitespace. (model/encoding's
// base64_decode is the lenient reader of uploaded receipts: it skips
// whitespace and accepts a missing pad.)
std::optional<std::string> x5c_decode(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0 || text.size() > (max_certificate_bytes + 2) / 3 * 4)
    return std::nullopt;
  auto der = strict_base64_decode(text);
  if (!der || der->empty() || der->size() > max_certificate_bytes)
    return std::nullopt;
  return der;
}

namespace {

// RFC 4648 §5's alphabet, one load per byte: a StoreKit 2 upload splits two
// JWS of several KB each.
constexpr std::array<bool, 256> make_base64url_set() {
  std::array<bool, 256> set{};
  for (int c = 0; c < 256; ++c)
    set[c] = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
      || c == '-' || c == '_';
  return set;
}
constexpr auto base64url_set = make_base64url_set();

bool all_base64url(std::string_view part) {
  bool ok = true;
  for (char c : part)
    ok &= base64url_set[static_cast<unsigned char>(c)];
  return ok;
}

} // namespace

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
    if (part.empty() || part.size() % 4 == 1 || !all_base64url(part))
      return std::nullopt;
  }
  return jws_segments{parts[0], parts[1], parts[2]};
}

} // namespace receiptd::model::store_a
