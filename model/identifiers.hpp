#pragma once
// UUIDs (record and app ids, identifier_for_vendor) and IP addresses.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace receiptd::model {

using uuid_bytes = std::array<std::uint8_t, 16>;

// Random (version 4) UUID in lowercase canonical form.
std::string make_uuid();

// Accepts the canonical 8-4-4-4-12 hex form, either case.
std::optional<uuid_bytes> parse_uuid(std::string_view text);
inline bool is_uuid(std::string_view text) {
  return parse_uuid(text).has_value();
}

// "f8:ff:c2:1e:91:82" (or with dashes), the device id macOS receipts are bound to.
std::optional<std::array<std::uint8_t, 6>> parse_mac_address(std::string_view text);

// IPv4 or IPv6 text → canonical text (inet_ntop form: "::1", "2001:db8::1",
// IPv4-mapped stays mapped). nullopt when it is neither.
std::optional<std::string> canonical_ip(std::string_view text);

} // namespace receiptd::model
