#pragma once
// SPEC §2.3 Timestamp: {"ms": <unix ms>, "utc": "YYYY-MM-DD hh:mm:ss UTC"}.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace receiptd::model {

using unix_ms = std::int64_t;

// "2023-02-22 14:30:15 UTC" (seconds precision; the ms property keeps the rest).
std::string format_utc(unix_ms ms);
// The same text in `buf` (no allocation: an answer writes a dozen), as a view of it.
using utc_buffer = char[48];
std::string_view format_utc(unix_ms ms, utc_buffer& buf);
boost::json::value timestamp_json(unix_ms ms);
boost::json::value timestamp_json(const std::optional<unix_ms>& ms); // null when absent

// RFC 3339 as Apple writes it in receipts: "2023-02-22T14:30:15Z", with optional
// fractional seconds and "+hh:mm" offsets. Empty text is absent (nullopt).
std::optional<unix_ms> parse_rfc3339(std::string_view text);

// Apple's legacy "2015-11-18 04:34:41 Etc/GMT" form (transaction receipts).
std::optional<unix_ms> parse_apple_gmt(std::string_view text);

} // namespace receiptd::model
