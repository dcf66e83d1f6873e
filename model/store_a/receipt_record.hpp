#pragma once
// From an upload and its local verification to a receipt record, and how a
// verifyReceipt answer lands on it.

#include <optional>
#include <string>
#include <string_view>

#include "model/app.hpp"
#include "model/records.hpp"
#include "model/store_a/receipt.hpp"
#include "model/store_a/server_api.hpp"
#include "model/store_a/verify_receipt_api.hpp"
#include "model/upload_request.hpp"

namespace receiptd::model::store_a {

// The record as uploaded; rejected with the fraud reason when the local
// verification failed (without the in-app purchases it claims), pending
// otherwise. Xcode StoreKit test receipts (environment xcode, under the opt-in
// test root) never reach verifyReceipt: validated when the app accepts them
// (app::accept_storekit_test_receipts), untrusted_certificate when it does not.
receipt_record make_record(const store_a_upload& u, const app& a, const verification& v,
                           std::string_view peer_ip, unix_ms now);

// Where to ask first: the receipt's own environment.
verify_endpoint first_endpoint(const receipt_record& r);

void apply_store_verdict(receipt_record& r, const store_verdict& v,
                         const std::vector<apple_in_app_purchase>& enriched);

// ---- unified receipts through the App Store Server API ------------

// Whether a receipt is confirmed with the App Store Server API instead of
// verifyReceipt (store-a.confirm-with): only unified receipts, and — under
// `automatic` — only for an app with Server API credentials.
bool confirm_with_server_api(const receipt_record& r, confirmation how, bool app_has_key);

// The in-app transaction whose history the Server API is asked for: the newest purchase's
// (latest purchase date; the last in receipt order among equals); nullopt when
// the receipt holds none.
std::optional<std::string> transaction_to_confirm(const receipt_record& r);

// How the Server API confirms it: model/store_a/history.hpp apply_history.

} // namespace receiptd::model::store_a
