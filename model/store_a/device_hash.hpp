#pragma once
// Binding a receipt to the device that uploads it (internal).

#include <string>
#include <string_view>

#include "model/store_a/receipt.hpp"

namespace receiptd::model::store_a {

// Unified: SHA-1(identifier bytes ‖ opaque ‖ bundle id value octets) == attribute 5,
// the identifier being a UUID (iOS identifierForVendor) or a MAC address (macOS).
// Transaction: purchase-info `unique-vendor-identifier` equals it, ignoring case.
// Otherwise an error (code device_hash_mismatch) saying why, including when the
// receipt carries nothing to compare with.
status device_matches(const decoded_receipt& r, std::string_view id);

} // namespace receiptd::model::store_a
