#pragma once
// From an upload to a purchase order record: the local checks that need no
// store (signature, package name). How a verdict lands on the record is the
// same for both stores (model/records.hpp apply_store_verdict).

#include <string_view>

#include "model/app.hpp"
#include "model/records.hpp"
#include "model/store_b/licence_key.hpp"
#include "model/store_b/play_api.hpp"
#include "model/upload_request.hpp"

namespace receiptd::model::store_b {

// The record as uploaded, before any verdict (state pending).
purchase_order_record make_record(const store_b_upload& u, const app& a, std::string_view peer_ip,
                                  unix_ms now);
purchase_order_record make_record(const store_b_legacy_upload& u, const app& a,
                                  std::string_view peer_ip, unix_ms now);

// Signature over the exact purchase_data bytes, then the package name.
fraud_reason check_locally(const store_b_upload& u, const licence_key& key, const app& a);
// A legacy upload has no signature: only the package name can be checked.
fraud_reason check_locally(const store_b_legacy_upload& u, const app& a);

// Which API answers for this purchase: the signed purchase data says whether it
// is a subscription; a legacy upload does not (products first, then subscriptionsv2).
purchase_api first_api(const purchase_order_record& r);

} // namespace receiptd::model::store_b
