#pragma once
// Small text checks shared by the Store A decoders (internal).

#include <cstdint>
#include <optional>
#include <string_view>

namespace receiptd::model::store_a::text {

// Well-formed UTF-8 (RFC 3629: no overlongs, no surrogates, at most U+10FFFF).
// Decoded strings end up in JSON answers and PostgreSQL text columns, both of
// which reject anything else.
bool is_valid_utf8(std::string_view s);

// A plain non-negative decimal ("1448346881000"): digits only, fits in int64.
std::optional<std::int64_t> parse_decimal(std::string_view s);

// ASCII case-insensitive equality.
bool iequals(std::string_view a, std::string_view b);

} // namespace receiptd::model::store_a::text
