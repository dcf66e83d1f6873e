#pragma once
// From an upload and its local verification to a receipt record, and how a
// verifyReceipt answer lands on it.

#include <string_view>

#include "model/app.hpp"
#include "model/records.hpp"
#include "model/store_a/receipt.hpp"
#include "model/store_a/verify_receipt_api.hpp"
#include "model/upload_request.hpp"

namespace receiptd::model::store_a {

// The record as uploaded; rejected with the fraud reason when the local
// verification failed, pending otherwise.
receipt_record make_record(const store_a_upload& u, const app& a, const verification& v,
                           std::string_view peer_ip, unix_ms now);

// Xcode StoreKit test receipts (under the opt-in sandbox root) never reach
// verifyReceipt: the local verification is all there is.
bool validated_locally(const verification& v);

// Where to ask first: the receipt's own environment.
verify_endpoint first_endpoint(const receipt_record& r);

void apply_store_verdict(receipt_record& r, const store_verdict& v,
                         const std::vector<apple_in_app_purchase>& enriched);

} // namespace receiptd::model::store_a
