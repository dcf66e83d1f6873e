#pragma once
// A bounded reader for the DER inside a unified receipt's payload (internal).
// Apple's payload is DER with definite lengths (the Xcode receipts use BER only in
// the PKCS#7 wrapper, which OpenSSL decodes); every read checks the remaining
// length first, so hostile input can only make a read fail, never overrun.

#include <cstdint>
#include <optional>
#include <string_view>

namespace receiptd::model::store_a::der {

namespace tag {
inline constexpr std::uint8_t integer = 0x02;
inline constexpr std::uint8_t octet_string = 0x04;
inline constexpr std::uint8_t utf8_string = 0x0C;
inline constexpr std::uint8_t printable_string = 0x13;
inline constexpr std::uint8_t ia5_string = 0x16;
inline constexpr std::uint8_t sequence = 0x30;
inline constexpr std::uint8_t set = 0x31;
} // namespace tag

struct tlv {
  std::uint8_t tag = 0;
  std::string_view value; // the content octets
  std::string_view whole; // tag, length and content octets
};

// Reads one TLV from the front of `in` and advances past it. Only low tag numbers
// (< 31) and definite lengths up to what remains in `in` are accepted.
std::optional<tlv> read(std::string_view& in);

// Reads one TLV that must carry `expected` as its tag.
std::optional<tlv> read(std::string_view& in, std::uint8_t expected);

// The content of an INTEGER as a signed 64-bit value (1 to 8 octets).
std::optional<std::int64_t> to_int64(std::string_view content);

} // namespace receiptd::model::store_a::der
