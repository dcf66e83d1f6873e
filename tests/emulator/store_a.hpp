#pragma once
// Store A (App Store): verifyReceipt (PROTOCOL.md "Store A") and the App Store
// Server API's Get Transaction Info (PROTOCOL.md "Store A — App Store Server API").

#include <string>
#include <string_view>

#include "http_util.hpp"

namespace receiptd::emulator {

class emulator_state;

// POST /verifyReceipt (sandbox_path false) and /sandbox/verifyReceipt (true).
// Apple answers HTTP 200 whatever the status.
reply verify_receipt(const emulator_state& state, bool sandbox_path, std::string_view body);

struct apple_transaction;

// GET /inApps/v1/transactions/{id} (sandbox_host false) and
// GET /sandbox/inApps/v1/transactions/{id} (true): the bearer JWT is checked
// first (401, counted, when it fails), then the registered transaction answers.
reply transaction_info(emulator_state& state, bool sandbox_host, const std::string& transaction_id,
                       std::string_view authorization);

// The transaction as a StoreKit JWS signed by the emulator's PKI, with
// `environment` ("Production"/"Sandbox") and signedDate = now.
std::string signed_transaction(const emulator_state& state, const apple_transaction& transaction,
                               std::string_view environment);

} // namespace receiptd::emulator
