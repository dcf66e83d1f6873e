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

enum class rtdn_kind { subscription, one_time_product, voided_purchase, test };
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
  std::optional<int> product_type;     // voided: 1 subscription, 2 one-time
  std::optional<int> refund_type;      // voided: 1 full, 2 quantity-based partial
};

// Parses a push body. Errors have code bad_request (400, Pub/Sub does not retry
// them as a 5xx) with field "message" (the envelope: not JSON, no message, no
// messageId, data missing or not strict base64) or "message.data" (not a JSON
// object, no packageName, none or more than one of the four notification
// kinds, a purchaseToken missing or over 2,048 bytes, wrong types). Strings are
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

// The Play Developer API call that tells the truth about the purchase: a
// subscription's (or a voided subscription's) → subscriptionsv2, a one-time
// product's → products (needs the product id: the notification's sku, else the
// stored record's).
bool asks_subscriptions(const rtdn& n);

} // namespace receiptd::model::store_b
