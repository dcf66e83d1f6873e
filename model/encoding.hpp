#pragma once
// Byte encodings and digests used across both stores.

#include <optional>
#include <string>
#include <string_view>

namespace receiptd::model {

// Standard base64 (RFC 4648 §4). ASCII whitespace is skipped (some clients wrap
// receipts at 64 columns); missing '=' padding is tolerated. Any other character,
// padding in the middle or an impossible length yields nullopt.
std::optional<std::string> base64_decode(std::string_view text);
std::string base64_encode(std::string_view bytes);
// Unpadded base64url (RFC 4648 §5), as JWTs use it.
std::string base64url_encode(std::string_view bytes);
// The strict readers of signed data (a JWS's segments, its x5c certificates),
// where bytes must have one spelling: the alphabet only (no whitespace) and the
// unused low bits of the last character zero; nullopt otherwise.
//  - base64url_decode: unpadded base64url (RFC 7515 §2), no '='.
//  - strict_base64_decode: standard base64 with its padding (whole quanta,
//    '=' only as the last one or two characters).
std::optional<std::string> base64url_decode(std::string_view text);

// Whether every byte of `text` is of the base64url alphabet (RFC 4648 §5; no '=').
bool is_base64url(std::string_view text);
std::optional<std::string> strict_base64_decode(std::string_view text);

std::string hex_encode(std::string_view bytes);
// The value of one hex digit, either case; -1 for any other character.
int hex_digit_value(char c);

// Well-formed UTF-8 (RFC 3629: no overlongs, no surrogates, at most U+10FFFF):
// what JSON answers and PostgreSQL text columns take.
bool is_valid_utf8(std::string_view s);

// Raw digests (20 and 32 bytes).
std::string sha1(std::string_view bytes);
std::string sha256(std::string_view bytes);
inline std::string sha256_hex(std::string_view bytes) {
  return hex_encode(sha256(bytes));
}

// Random bytes from OpenSSL's CSPRNG.
std::string random_bytes(std::size_t n);
void random_bytes(unsigned char* out, std::size_t n); // into out[0, n)

// Compares in time independent of where the inputs differ.
bool constant_time_equal(std::string_view a, std::string_view b);

} // namespace receiptd::model
