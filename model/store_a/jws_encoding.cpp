// The text forms of a compact JWS (jws_internal.hpp, jws.hpp's split_jws):
// strict base64url for its segments (model/encoding.hpp), strict padded base64
// for x5c.

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
    if (part.empty() || part.size() % 4 == 1 || !is_base64url(part))
      return std::nullopt;
  }
  return jws_segments{parts[0], parts[1], parts[2]};
}

} // namespace receiptd::model::store_a
