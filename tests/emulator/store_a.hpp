#pragma once
// Store A (App Store): verifyReceipt (PROTOCOL.md "Store A") and the App Store
// Server API's Get Transaction Info and Get All Subscription Statuses
// (PROTOCOL.md "Store A — App Store Server API").

#include <map>
#include <string>
#include <string_view>
#include <vector>

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

// GET /inApps/v1/subscriptions/{id} and GET /sandbox/inApps/v1/subscriptions/{id}
// (Get All Subscription Statuses): the JWT as above, then the StatusResponse of
// the subscription the named transaction belongs to. `status_filter`: the
// query's `status` values ("1" … "5"); empty lists every status.
reply subscription_statuses(emulator_state& state, bool sandbox_host,
                            const std::string& transaction_id, std::string_view authorization,
                            const std::vector<std::string>& status_filter);

struct apple_app_transaction;

// GET /inApps/v1/transactions/appTransactions/{anyTransactionId} and
// GET /sandbox/inApps/v1/transactions/appTransactions/{id} (Get App Transaction
// Info, App Store Server API 1.17): the JWT as above, then the registered app
// transaction's AppTransactionInfoResponse ({"signedAppTransactionInfo"}), or
// its registered failure; 404 AppTransactionDoesNotExistError when none.
reply app_transaction_info(emulator_state& state, bool sandbox_host, const std::string& any_id,
                           std::string_view authorization);

// The app transaction as a StoreKit JWS signed by the emulator's PKI, with
// `environment` as its receiptType and receiptCreationDate = now; `device`
// keeps its deviceVerification (what the device gets), else they are left out
// (what the Server API answers).
std::string signed_app_transaction(const emulator_state& state, const apple_app_transaction& t,
                                   std::string_view environment, bool device);

// GET /inApps/v2/history/{id}[?revision=r] and its /sandbox twin (Get
// Transaction History v2): the JWT as above, then one page of the history of
// the named transaction's bundle and customer. `query`: the request's.
reply transaction_history(emulator_state& state, bool sandbox_host,
                          const std::string& transaction_id, std::string_view authorization,
                          const std::map<std::string, std::string>& query);

// PUT /inApps/v2/transactions/consumption/{id} and the same under /sandbox:
// Send Consumption Information, recorded (GET /control/refund_answers).
reply consumption(emulator_state& state, bool sandbox_host, const std::string& transaction_id,
                  std::string_view authorization, std::string_view body);

// The transaction as a StoreKit JWS signed by the emulator's PKI, with
// `environment` ("Production"/"Sandbox") and signedDate = now.
std::string signed_transaction(const emulator_state& state, const apple_transaction& transaction,
                               std::string_view environment);

} // namespace receiptd::emulator
