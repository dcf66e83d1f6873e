#pragma once
// Play acknowledgement: Google refunds a purchase nobody acknowledged
// within three days of it. For an app that enables it, receiptd acknowledges
// each validated Play purchase the Play Developer API calls unacknowledged
// (purchases.products.acknowledge, purchases.subscriptions.acknowledge), through
// the record's job: retried with the revalidation backoff until Google's
// deadline. It never consumes a purchase: consuming is the app's call, made when
// it has granted the item, and an acknowledged purchase can still be consumed.

#include <string>
#include <string_view>

#include "model/records.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::store_b {

// Google refunds an unacknowledged purchase this long after it was made.
inline constexpr unix_ms acknowledgement_window_ms = 3LL * 24 * 3600 * 1000;

// After a store answer has landed on the record (apply_store_verdict, the
// purchase as the API says it): what receiptd does about acknowledging it.
//  - The API says acknowledged: acknowledged, when receiptd tracks it (the app
//    enables it, or the record has a state already); else left none.
//  - The app enables it, the record is validated and not fraud, the purchase is
//    purchased (a subscription: not pending; a refunded or voided one never)
//    and the API says unacknowledged (acknowledged == false): pending (the save
//    gives it a job), unless the deadline (purchase time + window; without a
//    purchase time, created_at + window) has passed already (now is later than
//    it): failed. A record already acknowledged or failed stays so: Play may
//    read unacknowledged for a moment after taking one, and refuses a second.
//  - Otherwise the state is left as it was.
void settle_acknowledgement(purchase_order_record& r, bool app_acknowledges, unix_ms now);

// POST …/applications/{package}/purchases/products/{productId}/tokens/{token}:acknowledge
// POST …/applications/{package}/purchases/subscriptions/{productId}/tokens/{token}:acknowledge
// (the record's kind chooses; an unknown kind is asked as a product).
std::string acknowledge_url(std::string_view api_base, const purchase_order_record& r);

// What an acknowledge call's answer means. http_status 0: no answer
// (`transport_error` says why).
enum class acknowledge_outcome {
  done,      // 2xx: acknowledged
  retry,     // no answer, 408, 429, 5xx: ask again later
  refused,   // 400, 403, 404, 409, 410 …: Play will not (detail says why)
  token_401, // the access token was refused: fetch a new one, ask once more
};
struct acknowledge_answer {
  acknowledge_outcome outcome = acknowledge_outcome::retry;
  std::string detail; // a few words for store_detail and logs
  // retry after a 429 or 503 with a Retry-After: not before this instant
  // (model/retry_after.hpp); the caller sets it from the answer's header.
  std::optional<unix_ms> retry_not_before = std::nullopt;
};
acknowledge_answer classify_acknowledge_response(int http_status, std::string_view body,
                                                 std::string_view transport_error);

// Lands an acknowledge answer on a record whose acknowledgement is pending:
// done → acknowledged (and purchase.acknowledged = true); refused → failed;
// retry (and a token_401 that lands here) → stays pending, unless `give_up`
// (the attempts ran out) or the deadline has passed at `now` → failed.
// store_detail says what happened.
// Returns whether the acknowledgement is settled (no further attempt).
bool apply_acknowledgement(purchase_order_record& r, const acknowledge_answer& a, unix_ms now,
                           bool give_up);

// A settled acknowledgement (`acknowledged`: the record as its job read it, with
// apply_acknowledgement's outcome) landed on the record as stored when the job
// completes, read under its row lock. The job asked Play nothing about the
// purchase: only what it did is taken (acknowledgement_state, Play's acknowledged
// once true, store_detail, updated_at); the purchase and the verdict stay as
// stored, which an RTDN or the voided purchases poll may have written since the
// job was claimed.
purchase_order_record land_acknowledgement(const purchase_order_record& stored,
                                           const purchase_order_record& acknowledged);

} // namespace receiptd::model::store_b
