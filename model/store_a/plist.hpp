#pragma once
// The old-style (OpenStep) property list text of iOS 6 transaction receipts
// (internal). Only what those receipts use: one dictionary of string values,
// e.g. { "signature" = "…"; "purchase-info" = "…"; }.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "model/result.hpp"

namespace receiptd::model::store_a {

using plist_dict = std::map<std::string, std::string>;

inline constexpr std::size_t max_plist_entries = 128;

// Parses `{ key = value; … }` where keys and values are quoted strings (with the
// OpenStep escapes \" \\ \n \t \r \b \f \a \v, \ooo octal and \Uxxxx) or bare
// words; /* */ and // comments are whitespace. Nested dictionaries and arrays,
// duplicate keys (two readers could pick different ones), non-UTF-8 values and
// anything after the closing brace are errors. `what` names the text in messages.
// More than max_plist_entries keys are an error too: Apple's dictionaries hold 5
// (outer) and 13–19 (purchase-info) entries, and 200,000 of them took 38 ms to
// parse without this bound.
result<plist_dict> parse_plist_dict(std::string_view text, std::string_view what);

} // namespace receiptd::model::store_a
