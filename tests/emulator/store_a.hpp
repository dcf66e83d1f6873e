#pragma once
// Store A (App Store) verifyReceipt, PROTOCOL.md "Store A".

#include <string_view>

#include "http_util.hpp"

namespace receiptd::emulator {

class emulator_state;

// POST /verifyReceipt (sandbox_path false) and /sandbox/verifyReceipt (true).
// Apple answers HTTP 200 whatever the status.
reply verify_receipt(const emulator_state& state, bool sandbox_path, std::string_view body);

} // namespace receiptd::emulator
