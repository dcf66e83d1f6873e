#pragma once
// Scheduled refresh of Play subscriptions: a notification that never
// came must not leave a subscription live forever. A validated subscription
// whose expiry has passed while its state still says it is live gets a job (the
// sweep: db::database::enqueue_refreshes) and is asked again through the Play
// Developer API like a revalidation, except that the answer never downgrades
// it: the store's word updates what the subscription is, not whether the
// upload was genuine.

#include <string_view>

#include "model/records.hpp"
#include "model/verdict.hpp"

namespace receiptd::model::store_b {

// Subscription states after which nothing changes any more: a subscription in
// one of them is never refreshed. (The sweep's SQL names the same states:
// db/sql_upkeep.hpp.)
inline constexpr std::string_view final_subscription_states[]
  = {"SUBSCRIPTION_STATE_EXPIRED", "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"};
bool is_final_subscription_state(std::string_view state);

// Lands a refresh's answer on a validated purchase order (`answered`: the
// purchase as the API answered it, the record's own when it did not):
//  - confirmed: the purchase is the API's (a voided one stays voided), the
//    record stays validated, store_detail says the answer;
//  - rejected: Play no longer knows the token (it forgets a subscription some
//    time after it expired): subscription_state EXPIRED, purchase_state
//    cancelled, no fraud;
//  - unreachable: nothing but store_detail changes (the caller asks again later).
// Returns whether the refresh is settled (not unreachable).
bool apply_refresh(purchase_order_record& r, const store_verdict& v, play_purchase answered);

} // namespace receiptd::model::store_b
