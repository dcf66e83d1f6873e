#pragma once
// What jws*.cpp share (internal): the bounds on one JWS, its strict base64
// readers, and Apple's JSON instants.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "model/timestamp.hpp"

namespace receiptd::model::store_a {

// Bounds on what one JWS may cost (decoded bytes). Apple's headers are ~3.3 KB
// (three certificates of ~0.6–1.1 KB), its payloads under 12 KB (a notification
// holding a signed transaction and renewal info); the rest is headroom.
inline constexpr std::size_t max_header_bytes = 16 * 1024;
inline constexpr std::size_t max_payload_bytes = 64 * 1024;
inline constexpr std::size_t max_certificate_bytes = 8 * 1024;
inline constexpr std::size_t max_x5c_entries = 4;
inline constexpr std::size_t es256_signature_bytes = 64; // r ‖ s, 32 bytes each (RFC 7518 §3.4)

// The decoded size of `n` unpadded base64 characters (n % 4 != 1).
constexpr std::size_t decoded_size(std::size_t n) {
  return n / 4 * 3 + (n % 4 == 0 ? 0 : n % 4 - 1);
}

// One x5c entry (RFC 7515 §4.1.6): standard base64 with its padding, whole
// quanta, nothing else, at most max_certificate_bytes decoded and not empty.
std::optional<std::string> x5c_decode(std::string_view text);

// The latest instant a payload date may name: 9999-12-31T23:59:59.999Z (the
// four-digit years Timestamp objects are written with).
inline constexpr unix_ms max_payload_ms = 253'402'300'799'999;

// Unix milliseconds from a JSON number: an integer, or a number with a fraction
// floored (Xcode's StoreKit testing writes "signedDate":1697679936056.485, and
// Apple's library truncates it). nullopt for any other value, and outside
// [0, max_payload_ms].
inline std::optional<unix_ms> json_unix_ms(const boost::json::value& v) {
  if (v.is_int64()) {
    const auto n = v.get_int64();
    return n >= 0 && n <= max_payload_ms ? std::optional<unix_ms>(n) : std::nullopt;
  }
  if (v.is_uint64()) {
    const auto n = v.get_uint64();
    return n <= static_cast<std::uint64_t>(max_payload_ms)
      ? std::optional<unix_ms>(static_cast<unix_ms>(n))
      : std::nullopt;
  }
  if (v.is_double()) {
    const double d = v.get_double();
    if (!std::isfinite(d) || d < 0 || d > static_cast<double>(max_payload_ms))
      return std::nullopt;
    return static_cast<unix_ms>(std::floor(d));
  }
  return std::nullopt;
}

} // namespace receiptd::model::store_a
