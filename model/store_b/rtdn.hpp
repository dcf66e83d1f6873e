#pragma once
// Google Play Real-time developer notifications: the Pub/Sub push
// body, parsed. Pure. The content is not signed: receiptd never trusts what it
// says about a purchase, only which purchase to look at again (the Play
// Developer API's answer is applied, actors/notification_handler.cpp).

#include <optional>
#include <string>
#include <string_view>

#include "model/records.hpp"
#include "model/result.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::store_b {

// The DeveloperNotification's kind. pending_refund_review (2026: a refund
// waiting for the developer's review, orders.reviewrefund) and other (a kind
// Google added that receiptd does not know) name no purchase: they are
// recorded and acknowledged, never refused, so that Pub/Sub does not redeliver
// them for a week.
enum class rtdn_kind {
  subscription,
  one_time_product,
  voided_purchase,
  test,
  pending_refund_review,
  other
};
std::string_view to_string(rtdn_kind k);

// The push: {"message": {"data": base64(DeveloperNotification JSON),
// "messageId": "…", "publishTime": "…", …}, "subscription": "projects/…"}.
struct rtdn {
  std::string message_id;   // message.messageId (or message.message_id): the idempotency key
  std::string package_name; // packageName
  std::optional<unix_ms> event_time; // eventTimeMillis (a decimal string)
  rtdn_kind kind = rtdn_kind::test;
  // subscriptionNotification / oneTimeProductNotification: notificationType
  // (e.g. 3 SUBSCRIPTION_CANCELED, 1 ONE_TIME_PRODUCT_PURCHASED); 0 otherwise.
  int notification_type = 0;
  std::string purchase_token;          // empty for a test notification
  std::string product_id;              // subscriptionId / sku; empty for voided and test
  std::optional<std::string> order_id; // voidedPurchaseNotification.orderId
  // pendingRefundReviewNotification.pendingRefundToken: what orders.reviewrefund
  // answers (its orderId is order_id).
  std::optional<std::string> refund_token;
  std::optional<int> product_type;     // voided: 1 subscription, 2 one-time
  std::optional<int> refund_type;      // voided: 1 full, 2 quantity-based partial
  // other: the key the kind arrived under ("…Notification", at most 64 bytes
  // of printable ASCII; empty when none looked like one).
  std::string kind_key;
};

// Play's name of the notification's notificationType
// ("SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED", "ONE_TIME_PRODUCT_CANCELED"):
// empty for a type receiptd has no name for (it is kept and applied all the
// same: every subscription and one-time product notification is answered by
// asking the Play Developer API) and for the kinds without types.
std::string_view notification_type_name(const rtdn& n);

// What the stored notification says its kind and subtype are
// (store_notifications.type and .subtype): the kind's text, and the
// notificationType in decimal, the kind key of an `other` kind, or "".
std::string notification_subtype(const rtdn& n);

// Parses a push body. Errors have code bad_request (400, Pub/Sub does not retry
// them as a 5xx) with field "message" (the envelope: not JSON, no message, no
// messageId, data missing or not strict base64) or "message.data" (not a JSON
// object, no packageName, more than one of the kinds receiptd knows, a
// purchaseToken missing or over 2,048 bytes, wrong types). A notification of
// none of the kinds receiptd knows is kind `other`, never an error. Strings are
// bounded (product ids 256, ids 256).
result<rtdn> parse_rtdn_push(std::string_view body);

// What an RTDN writes to its purchase order. `stored` is the record as it is now,
// read under its row lock in the transaction that writes it; `answered` is the
// record as the handler read it before it asked the Play Developer API, with the
// API's confirmed answer landed on it (apply_store_verdict and the purchase as
// answered). The push owns only that answer: the verdict (validation_state,
// fraud_reason, environment, store_detail) and the purchase as the API says it.
// What others wrote meanwhile stays: the voided purchases list's fields
// (keep_notified) and receiptd's acknowledgement (acknowledgement_state, and
// Play's acknowledged once true: Play never takes an acknowledgement back).
// Returns whether the resource changed (store_detail aside): nothing to write
// when it did not.
bool land_rtdn_answer(purchase_order_record& stored, const purchase_order_record& answered);

// Whether the notification names a purchase to look at again (subscription,
// one-time product, voided purchase); the others are recorded only.
bool names_purchase(const rtdn& n);

// A voidedPurchaseNotification says a purchase was refunded, cancelled or
// charged back, in whole or (refundType 2) in part. The push is not trusted for
// that: `p` is the purchase as the Play Developer API answered afterwards, and
// only what the answer confirms is applied —
//  - the purchase no longer stands (a one-time product cancelled, purchaseState
//    1, or with nothing left to refund, refundableQuantity 0; a subscription
//    expired: Play ends a revoked one at once): it is voided whole;
//  - a one-time product with less left to refund than was bought
//    (refundableQuantity below quantity, a quantity-based partial refund): that
//    many are voided (voided_quantity), the rest stay the customer's.
// Voided as of the notification's eventTimeMillis, else `at`; the notification
// tells no voidedReason or voidedSource (the voided purchases list does), so
// they are left unsaid. A purchase the API says still stands (a subscription
// whose renewal order alone was refunded) is left as the API says. Returns
// whether it changed `p`.
bool apply_voided_notification(play_purchase& p, const rtdn& n, unix_ms at);

// The Play Developer API call that tells the truth about the purchase: a
// subscription's (or a voided subscription's) → subscriptionsv2, a one-time
// product's → products (needs the product id: the notification's sku, else the
// stored record's).
bool asks_subscriptions(const rtdn& n);

} // namespace receiptd::model::store_b
