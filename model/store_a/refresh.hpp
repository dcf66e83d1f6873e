#pragma once
// Scheduled refresh of StoreKit 2 subscriptions: a notification that
// never came must not leave a subscription live forever. A validated
// auto-renewable transaction whose subscription's expiry has passed while its
// status is unknown or live gets a job (the sweep: db::database::
// enqueue_refreshes) and is asked again through the App Store Server API's Get
// All Subscription Statuses. The answer updates what the subscription is
// (status, expiry, renewal), never whether the upload was genuine.

#include <optional>
#include <string_view>
#include <vector>

#include "model/records.hpp"
#include "model/result.hpp"
#include "model/store_a/jws.hpp"
#include "model/store_a/notification.hpp"
#include "model/store_a/server_api.hpp"

namespace receiptd::model::store_a {

// Subscription statuses that can still change on their own: a transaction
// whose subscription_status is none or one of these is refreshed once its
// expiry passed. (The sweep's SQL names the same: db/sql_upkeep.hpp.)
inline constexpr std::string_view live_subscription_statuses[]
  = {"active", "billing_retry", "grace_period"};
bool is_live_subscription_status(std::string_view status);

// The newest transaction of the record's subscription as Apple answered it,
// with its renewal info, both verified under Apple's chain.
struct subscription_status {
  int status = 0;
  signed_transaction transaction;
  std::optional<renewal_info> renewal;
};

// The answer's entry for the record's subscription (originalTransactionId the
// record's): none when the answer lists none for it. An error (its message
// says why, for the log) when the entry's signedTransactionInfo or
// signedRenewalInfo does not verify or parse, is anchored only by a StoreKit
// test root, or names another bundle, environment or subscription than the
// record: an unusable answer, asked again later.
result<std::optional<subscription_status>>
status_of(const transaction_record& r, const std::vector<subscription_status_entry>& entries,
          const trust_anchors& anchors);

// Lands a refresh's answer on a validated transaction record (`s`: status_of's
// entry, when the answer was confirmed and usable):
//  - confirmed with an entry: subscription_status (by name; a status Apple adds
//    later keeps the record's), subscription_expires_date (the later one),
//    auto_renew and auto_renew_product_id; the record of the very transaction
//    Apple names also takes its own fields and revocation as signed. Unless a
//    notification signed after the answer's transaction was applied already
//    (notified_at): then only store_detail. notified_at becomes the answer's
//    signedDate;
//  - confirmed without an entry, or rejected (Apple does not know the
//    transaction at either host): settled, only store_detail says so;
//  - unreachable: only store_detail; the caller asks again later.
// Never fraud, never a change of validation state. Returns whether the refresh
// is settled (not unreachable).
bool apply_refresh(transaction_record& r, const store_verdict& v,
                   const std::optional<subscription_status>& s);

} // namespace receiptd::model::store_a
