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

// The in-app transaction the Server API is asked about: the newest purchase's
// (latest purchase date; the last in receipt order among equals); nullopt when
// the receipt holds none.
std::optional<std::string> transaction_to_confirm(const receipt_record& r);

// How the Server API's answer about `transaction_id` lands on the receipt: a
// confirmed answer counts only once its signedTransactionInfo verifies like an
// upload and names that transaction and the receipt's bundle (else unusable:
// pending; or store_rejected when it is another transaction or bundle). Then
// the receipt is validated and that purchase takes the answer's expiry and
// revocation (as cancellation_date). Returns why a confirmed answer was
// unusable, else "" (transaction_record.hpp's apply_server_answer).
std::string apply_server_answer(receipt_record& r, const std::string& transaction_id,
                                const store_verdict& v, std::string_view signed_info,
                                const trust_anchors& anchors);

} // namespace receiptd::model::store_a
