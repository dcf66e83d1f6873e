#pragma once
// An App Store Server Notification's signedPayload checked end to end:
// the outer JWS and the nested signedTransactionInfo / signedRenewalInfo
// verified under Apple's chain, parsed, and matched to the app the URL names.
// Pure, like verify_jws.

#include <string_view>

#include "model/result.hpp"
#include "model/store_a/notification.hpp"

namespace receiptd::model::store_a {

// unauthorized (401): a JWS (outer or nested) whose signature or Apple chain
// does not verify, one anchored only by a StoreKit test root (Xcode sends no
// server notifications), or a payload for another app (data.bundleId, or the
// nested transaction's bundleId, is not `bundle_id`); bad_request (400): a
// verified payload that is not a notification (parse_notification,
// parse_signed_transaction, parse_renewal_info refuse it);
// internal_error: verification itself failed.
result<verified_notification> verify_notification(std::string_view signed_payload,
                                                  const trust_anchors& anchors,
                                                  std::string_view bundle_id);

} // namespace receiptd::model::store_a
