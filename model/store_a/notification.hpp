#pragma once
// App Store Server Notifications V2: the decoded signedPayload, the
// renewal info it may carry, and what a notification does to the records it is
// about. Pure: the JWS (outer and nested) are verified by verify_jws before
// anything here reads them; this file parses verified payloads and applies them.

#include <optional>
#include <string>
#include <string_view>

#include "model/records.hpp"
#include "model/result.hpp"
#include "model/store_a/jws.hpp"

namespace receiptd::model::store_a {

// responseBodyV2DecodedPayload, as receiptd uses it. Apple's names in comments.
struct notification {
  std::string notification_uuid;      // notificationUUID: the idempotency key
  std::string type;                   // notificationType: "REFUND", "DID_RENEW", "TEST", …
  std::string subtype;                // subtype; empty when absent
  std::string version;                // version ("2.0")
  std::optional<unix_ms> signed_date; // signedDate
  // data (or summary, externalPurchaseToken, appData): the app it is for.
  std::string bundle_id;                                 // data.bundleId
  environment env = environment::production;             // data.environment
  std::optional<std::int64_t> app_apple_id;              // data.appAppleId
  std::optional<int> status;                             // data.status: subscription status 1–5
  std::optional<std::string> consumption_request_reason; // data.consumptionRequestReason
  // The nested JWS, still compact (verified by the caller); empty when absent.
  std::string signed_transaction_info; // data.signedTransactionInfo
  std::string signed_renewal_info;     // data.signedRenewalInfo
};

// Parses a verified signedPayload. notificationUUID (at most 128 bytes),
// notificationType (a word of at most 64 bytes of visible ASCII: Apple's are
// A–Z, 0–9, '_') and the bundleId of what it is about are required strings:
// data.bundleId, or summary., externalPurchaseToken. or appData. (RESCIND_CONSENT),
// or of any other object member holding a bundleId (a part Apple adds later);
// its environment one of "Production", "Sandbox", "Xcode" (Xcode is environment
// xcode; an externalPurchaseToken or a later part may have none: production).
// An unknown type or subtype is kept (Apple adds them: recorded, answered 200),
// an optional field of the wrong type is an error. Errors: field
// "signedPayload", code "malformed_notification".
result<notification> parse_notification(std::string_view payload);

// JWSRenewalInfoDecodedPayload, the fields receiptd keeps.
struct renewal_info {
  std::string original_transaction_id;              // originalTransactionId (required)
  std::optional<std::string> product_id;            // productId
  std::optional<std::string> auto_renew_product_id; // autoRenewProductId
  std::optional<int> auto_renew_status;             // autoRenewStatus: 0 off, 1 on
  std::optional<int> expiration_intent;             // expirationIntent
  std::optional<bool> is_in_billing_retry_period;   // isInBillingRetryPeriod
  std::optional<unix_ms> grace_period_expires_date; // gracePeriodExpiresDate
  std::optional<unix_ms> renewal_date;              // renewalDate
  std::optional<unix_ms> signed_date;               // signedDate
  environment env = environment::production;        // environment
  std::optional<std::string> app_account_token;     // appAccountToken (API 1.15)
};

// Parses a verified signedRenewalInfo payload: originalTransactionId a
// required string, environment one of Apple's three, the rest optional but of
// their type. The payload `null` (Apple signed one: tests/data/apple-jws-renewal/
// hound-null-payload-sandbox-2023) is an error here; the caller takes it as no
// renewal info. Errors: field "signedPayload", code "malformed_notification".
result<renewal_info> parse_renewal_info(std::string_view payload);

// A notification whose outer and nested JWS all verified, parsed.
struct verified_notification {
  notification n;
  std::optional<signed_transaction> transaction; // from signed_transaction_info
  std::optional<renewal_info> renewal;           // from signed_renewal_info
  // Signed longer ago than notifications.max-age: recorded, never applied (a
  // replayed public notification cannot move a purchase back in time).
  bool record_only = false;
};

// What a notification does to the records it is about (applied by the
// database in one transaction, which also records the notification itself):
//  - REFUND, REVOKE: the transaction's revocation date and reason (from the
//    verified signedTransactionInfo) on the StoreKit 2 record of that
//    transactionId, and as cancellation_date / cancellation_reason on the
//    receipts' in-app purchase of that transaction_id. Not fraud: is_fraud and
//    validation_state stay as they are. REFUND_REVERSED clears them again when
//    signed after the revocation; nothing else does.
//  - DID_RENEW, SUBSCRIBED, DID_CHANGE_RENEWAL_STATUS, DID_CHANGE_RENEWAL_PREF,
//    EXPIRED, GRACE_PERIOD_EXPIRED, DID_FAIL_TO_RENEW, OFFER_REDEEMED,
//    RENEWAL_EXTENDED, and the Advanced Commerce API's MIGRATION, PRICE_CHANGE
//    and METADATA_UPDATE (each carries the subscription's current signed
//    transaction and renewal info): the subscription fields
//    (subscription_status, subscription_expires_date, auto_renew,
//    auto_renew_product_id, renewal_app_account_token) of every StoreKit 2
//    record with that originalTransactionId; the record of the very
//    transactionId also takes the transaction's own fields (expires_date, …)
//    from signedTransactionInfo.
//  - ONE_TIME_CHARGE (a consumable, non-consumable or non-renewing subscription
//    bought): the record of the very transactionId takes the transaction's own
//    fields, as it would from Apple's answer to a revalidation.
//  - CONSUMPTION_REQUEST, TEST, RESCIND_CONSENT, EXTERNAL_PURCHASE_TOKEN,
//    REFUND_DECLINED, PRICE_INCREASE, RENEWAL_EXTENSION and any other type
//    (one Apple adds later included): recorded only.
// Each part is ordered by store time: the transaction's own fields by the
// record's said_at, the subscription's by transaction.notified_at; what is
// older changes nothing (model/store_time.hpp). Only a record of the
// notification's bundle and environment, and only with the verified
// signedTransactionInfo, is touched; the subscription fields only when that
// transaction is an "Auto-Renewable Subscription". Returns whether the record
// changed; advancing notified_at alone counts (store it, or a late older
// notification would apply), though the resource may be the same.
// notification.cpp details each rule.
bool apply_notification(transaction_record& r, const verified_notification& v);
// Receipts: REFUND, REVOKE and REFUND_REVERSED on the in-app purchase of that
// transaction_id, for a receipt of the notification's bundle and environment.
// A reversal signed before the cancellation changes nothing. Returns whether
// the record changed.
bool apply_notification(receipt_record& r, const verified_notification& v);

// The shared steps of apply_notification and the scheduled refresh
// (model/store_a/refresh.hpp); each returns whether `a` changed.
//  - take_own_fields: a verified transaction's own fields (product, type,
//    dates, quantity, price, …) on the record of that very transactionId
//    (identity already matched); revocation is the caller's.
//  - take_subscription_fields: on a record of the transaction's subscription
//    (same originalTransactionId, matched by the caller), when the transaction
//    is an "Auto-Renewable Subscription": `status` (none keeps the record's),
//    subscription_expires_date the later of the known one and expiresDate
//    (unless keep_expiry), and from `renewal` of that originalTransactionId
//    auto_renew (autoRenewStatus 0/1; another value keeps it),
//    auto_renew_product_id and renewal_app_account_token (appAccountToken).
//  - take_revocation / clear_revocation: a verified transaction's revocation
//    (date, reason, type, percentage; said at `said_at`) on the record of that
//    transactionId, or none of it (a REFUND_REVERSED).
bool take_own_fields(apple_transaction& a, const signed_transaction& t);
bool take_subscription_fields(apple_transaction& a, const signed_transaction& t,
                              const std::optional<std::string>& status,
                              const std::optional<renewal_info>& renewal, bool keep_expiry);
bool take_revocation(apple_transaction& a, const signed_transaction& t,
                     std::optional<unix_ms> said_at);
bool clear_revocation(apple_transaction& a);

// Apple's subscription status (data.status) by name: 1 "active", 2 "expired",
// 3 "billing_retry", 4 "grace_period", 5 "revoked"; nullopt for others.
std::optional<std::string> subscription_status_name(int status);

} // namespace receiptd::model::store_a
