#pragma once
// The stored records (DESIGN.md §5) behind the SPEC §2.1/§2.2 resources, and the
// revalidation job that follows a pending record.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/result.hpp"
#include "model/store_time.hpp"
#include "model/timestamp.hpp"
#include "model/transfer_policy.hpp"
#include "model/verdict.hpp"

namespace receiptd::model {

namespace purchases {
struct purchase_set; // model/purchases/purchase.hpp
}

// Caller-supplied annotations echoed in the resource (SPEC §2).
struct echo_fields {
  std::optional<std::string> user_identifier; // nullopt: not sent (or null)
  std::optional<std::string> metadata;        // compact JSON object text; nullopt: not sent
  std::optional<std::string> ip_address;      // canonical text; nullopt: stored as NULL
};

// The users a proof was bound to before its current user_identifier, oldest
// first (a transfer appends the one it replaces).
using previous_owners = std::vector<std::string>;

// What an upload carries to its save and what the save decided, beside the record
// itself. Not stored.
struct upload_terms {
  transfer_policy transfers; // the app's policy, for merge_reupload
  // Set by merge_reupload when this upload may not change the stored record
  // (errc::conflict).
  std::optional<field_error> refused;
  // The app has webhook endpoints (model::app::has_webhooks, as its uploads saw
  // the app): the save writes an event for what changed.
  bool announce = false;
};

// ---- Store B (Google Play) ------------------------------------------------

// What a Play purchase is, and its state, as the resource spells them ("type",
// "purchase_state") and the database stores them.
enum class product_kind { unknown, product, subscription };
std::string_view to_string(product_kind x);
product_kind parse_product_kind(std::string_view text); // unknown for any other text

enum class purchase_state { unknown, purchased, cancelled, refunded, pending };
std::string_view to_string(purchase_state x);
purchase_state parse_purchase_state(std::string_view text); // unknown for any other text

// Whether receiptd acknowledges a Play purchase for the app: it will
// (a job is due), it did or Play says it is, or it gave up (Google's three-day
// deadline passed, the attempts ran out or Play refused it). None: receiptd
// leaves it to the app (the app does not enable it, or the purchase is not one
// to acknowledge).
enum class acknowledgement_state { pending, acknowledged, failed };
std::string_view to_string(acknowledgement_state x);
std::optional<acknowledgement_state> parse_acknowledgement_state(std::string_view text);

// An installment subscription's commitment (subscriptionsv2, the line item's
// autoRenewingPlan.installmentDetails, an InstallmentPlan): the payments the
// customer committed to at sign-up and after each commitment period, those
// left in this one, and whether it ends once they are paid (pendingCancellation).
struct play_installments {
  std::optional<int> initial_payments;    // initialCommittedPaymentsCount
  std::optional<int> subsequent_payments; // subsequentCommittedPaymentsCount (none: plain renewals)
  std::optional<int> remaining_payments;  // remainingCommittedPaymentsCount
  bool pending_cancellation = false;      // pendingCancellation present

  bool operator==(const play_installments&) const = default;
};

// What Play's orders resource (orders.get / orders.batchGet) says an order
// cost, in milliunits of its currency (Money units and nanos): what the buyer
// paid (total, tax included), the tax in it, and what was refunded of it
// (the full refund's or the partial refunds' totals).
struct play_price {
  std::optional<std::int64_t> price;
  std::optional<std::string> currency_code; // ISO 4217
  std::optional<std::int64_t> tax;
  std::optional<std::int64_t> refunded;

  bool operator==(const play_price&) const = default;
};

// One line item of a one-time purchase (purchases.productsv2 productLineItem:
// its productId and productOfferDetails), and what its order's line item cost.
struct play_line_item {
  std::string product_id;
  std::optional<int> quantity;
  std::optional<int> refundable_quantity;
  std::optional<bool> consumed; // consumptionState CONSUMPTION_STATE_CONSUMED
  std::optional<std::string> offer_id;
  std::optional<std::string> purchase_option_id;
  play_price cost;

  bool operator==(const play_line_item&) const = default;
};

// The in_app_purchase resource of a purchase order: purchase data, then the
// Play Developer API's answer where it says more.
struct play_purchase {
  std::string product_id;
  product_kind kind = product_kind::unknown;
  std::optional<unix_ms> purchase_time;
  model::purchase_state purchase_state = model::purchase_state::unknown;
  std::optional<int> quantity;
  // products.get refundableQuantity: how many of `quantity` are not refunded
  // yet (quantity-based partial refunds lower it, a full refund makes it 0).
  std::optional<int> refundable_quantity;
  std::optional<bool> acknowledged;
  std::optional<bool> auto_renewing;
  std::optional<unix_ms> expiry_time;            // subscriptions
  std::optional<std::string> subscription_state; // subscriptionsv2 "SUBSCRIPTION_STATE_…"
  bool is_test = false;                          // purchaseType 0 / testPurchase
  // The subscription this token replaced (subscriptionsv2 linkedPurchaseToken:
  // an upgrade, downgrade or resubscription): one purchase across the chain.
  std::optional<std::string> linked_purchase_token;
  std::optional<std::string> region_code; // subscriptionsv2 regionCode (alpha-2)
  // obfuscatedAccountId of the purchase data / obfuscatedExternalAccountId of the
  // API: the app's own account id, when the app set one at purchase.
  std::optional<std::string> account_id;
  std::optional<bool> consumed;       // products consumptionState 1
  std::optional<bool> in_free_trial;  // the line item's offerPhase freeTrial
  std::optional<bool> in_intro_price; // the line item's offerPhase introductoryPrice
  // subscriptionsv2, the line item (2024–2025): its offerPhase by name
  // ("base_price", "free_trial", "introductory_price", "proration_period"); the
  // latest successful order (latestSuccessfulOrderId; the deprecated top-level
  // latestOrderId only when the line item has none); a prepaid plan (no
  // auto-renewal; prepaidPlan.allowExtendAfterTime: when the customer may top
  // it up); an installment plan; the product a deferred replacement will
  // switch it to at its next renewal (deferredItemReplacement.productId).
  std::optional<std::string> offer_phase;
  std::optional<std::string> latest_order_id;
  std::optional<bool> prepaid;
  std::optional<unix_ms> allow_extend_after;
  std::optional<play_installments> installments;
  std::optional<std::string> deferred_product_id;
  // productsv2 (Billing Library 8 one-time products): the purchase option and
  // offer the claimed product was bought with; every line item of the purchase,
  // in Play's order, when it has more than one (each is a purchase of its own:
  // model/purchases/observe.cpp). latest_order_id holds a one-time purchase's
  // orderId too: the order its price comes from.
  std::optional<std::string> offer_id;
  std::optional<std::string> purchase_option_id;
  std::vector<play_line_item> line_items;
  // The claimed product's price (its order line item's, or the order's when the
  // order has one line item), and when the order was last read: none when it is
  // still to be read (the upload's orders call failed, or a refund may have
  // changed it: the orders sweep reads it).
  play_price cost;
  std::optional<unix_ms> order_read_at;
  // Refunded or charged back, as Play's voided purchases list says:
  // when, why (voidedReason 0–7), by whom (voidedSource 0 user, 1 developer,
  // 2 Google) and, for a quantity-based partial refund, how many. A voided
  // purchase's purchase_state is refunded whatever the API's purchase says.
  std::optional<unix_ms> voided_time;
  std::optional<int> voided_reason;
  std::optional<int> voided_source;
  std::optional<int> voided_quantity;

  bool operator==(const play_purchase&) const = default;
};

// What every stored record has, whichever store and kind: identity, verdict,
// the app's echo fields, times, and the terms of its last upload.
struct record_base {
  std::string id; // UUID
  std::string app_id;
  fraud_reason fraud = fraud_reason::none;
  environment env = environment::production;
  echo_fields echo;
  validation_state state = validation_state::pending;
  unix_ms created_at = 0;
  unix_ms updated_at = 0;
  std::string store_detail; // last store answer in a few words (not in the resource)
  // The last store answer asked not to be called again before this instant (a
  // 429's Retry-After: store_verdict::retry_not_before); the record's next job
  // attempt is no earlier. Not stored: it travels with the verdict to the job.
  std::optional<unix_ms> retry_not_before;
  // The newest time the store signed or said what the record holds (a signed
  // proof's own date, a store answer, a notification; model/store_time.hpp):
  // what is older changes nothing it contradicts. None: not known.
  std::optional<unix_ms> said_at;
  previous_owners previous_users;
  upload_terms terms;
  // The In-App Purchases the record names, as its save or lookup left them (not
  // stored with the record: purchases are their own rows); null when not read.
  std::shared_ptr<const purchases::purchase_set> purchases;
  // The proof's size as uploaded when only its first bytes are kept
  // (trim_rejected_proof); none when it is kept whole.
  std::optional<std::int64_t> proof_size;

  bool is_fraud() const { return fraud != fraud_reason::none; }
};

struct purchase_order_record : record_base {
  bool is_legacy = false;
  std::string package_name;
  std::string purchase_token; // the re-upload key, with app_id
  std::optional<std::string> order_id;
  play_purchase purchase;
  std::string purchase_data;      // byte for byte as received; empty for legacy
  std::string purchase_signature; // as received; empty for legacy
  // Play acknowledgement by receiptd (model/store_b/acknowledgement.hpp).
  std::optional<acknowledgement_state> acknowledgement;
};

// ---- Store A (App Store) --------------------------------------------------

enum class receipt_style { unified, transaction };
std::string_view to_string(receipt_style x);
std::optional<receipt_style> parse_receipt_style(std::string_view text);

struct apple_in_app_purchase {
  std::string product_id;                        // 1702 / product-id
  std::string transaction_id;                    // 1703
  std::string original_transaction_id;           // 1705
  int quantity = 1;                              // 1701
  std::optional<unix_ms> purchase_date;          // 1704
  std::optional<unix_ms> original_purchase_date; // 1706
  std::optional<unix_ms> expires_date;           // 1708
  std::optional<unix_ms> cancellation_date;      // 1712
  // Why Apple cancelled it: 0 other, 1 an issue in the app (verifyReceipt's
  // cancellation_reason; a notification's revocationReason). Not in the receipt.
  std::optional<int> cancellation_reason;
  std::optional<std::string> web_order_line_item_id; // 1711 (absent when 0)
  std::optional<bool> is_trial_period;               // 1713 (undocumented)
  std::optional<bool> is_in_intro_offer_period;      // 1719
  std::optional<int> product_type;                   // 1707 (undocumented)
  // Why the App Store Server API's transaction history contradicts this
  // purchase (absent from it, another product or bundle): set, the receipt
  // does not prove it, whatever the receipt's own state. Not in the receipt.
  std::optional<std::string> store_contradiction;
};

struct receipt_record : record_base {
  receipt_style style = receipt_style::unified;
  std::string bundle_id;    // empty when the bytes did not decode
  std::string receipt_hash; // hex SHA-256 of the decoded bytes: the re-upload key, with app_id
  std::string receipt_data; // base64 exactly as received
  std::optional<std::string> country_code;          // upper-case alpha-2
  std::optional<std::string> identifier_for_vendor; // as sent
  std::vector<apple_in_app_purchase> in_app_purchases;
};

// ---- Store A StoreKit 2 transactions ------------------------------

// A monthly subscription with a 12-month commitment (App Store Server API 1.21,
// JWSTransactionDecodedPayload.commitmentInfo, a TransactionCommitmentInfo).
struct commitment_info {
  std::optional<int> billing_period_number;  // billingPeriodNumber: this period's, 1–12
  std::optional<int> total_billing_periods;  // totalBillingPeriods
  std::optional<unix_ms> expires_date;       // commitmentExpiresDate
  std::optional<std::int64_t> price;         // commitmentPrice, milliunits of the currency

  bool operator==(const commitment_info&) const = default;
};

// A signed transaction as the resource shows it: the verified JWS payload, then
// the App Store Server API's signedTransactionInfo where it says more. Apple's
// names and values ("type", revocation reason 0/1) are kept.
struct apple_transaction {
  std::string transaction_id;
  std::string original_transaction_id;
  std::string bundle_id;
  std::string product_id;
  std::string type; // "Auto-Renewable Subscription", "Non-Consumable", "Consumable", …
  std::optional<unix_ms> purchase_date;
  std::optional<unix_ms> original_purchase_date;
  std::optional<unix_ms> expires_date;
  std::optional<unix_ms> revocation_date;
  std::optional<int> revocation_reason;
  // revocationType (REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE) and, for a
  // refund, revocationPercentage in milliunits (100000 is all of it): a
  // prorated refund revokes that share only (model/purchases/activity.hpp).
  std::optional<std::string> revocation_type;
  std::optional<int> revocation_percentage;
  // When Apple said the revocation (the signedDate of the proof, answer or
  // notification that carried it): only a REFUND_REVERSED signed later undoes it.
  std::optional<unix_ms> revocation_said_at;
  std::optional<std::string> app_account_token;
  std::optional<int> quantity;
  std::optional<std::string> storefront;
  std::optional<std::int64_t> price; // milliunits
  std::optional<std::string> currency;
  std::optional<std::string> ownership_type;      // inAppOwnershipType: PURCHASED, FAMILY_SHARED
  std::optional<bool> is_upgraded;                // isUpgraded
  std::optional<int> offer_type;                  // offerType: 1 intro, 2 promo, 3 code, 4 win-back
  std::optional<std::string> offer_discount_type; // offerDiscountType: FREE_TRIAL, …, ONE_TIME
  std::optional<std::string> offer_period;        // offerPeriod: ISO 8601 duration ("P1M")
  std::optional<std::string> app_transaction_id;  // appTransactionId: the app download's
  std::optional<std::string> billing_plan_type;   // billingPlanType: BILLED_UPFRONT, MONTHLY
  std::optional<commitment_info> commitment;      // commitmentInfo
  // The subscription this transaction belongs to (its originalTransactionId), as
  // the newest App Store Server Notification about it says; none
  // until one arrives. Status is Apple's subscription status by name: "active"
  // (1), "expired" (2), "billing_retry" (3), "grace_period" (4), "revoked" (5).
  std::optional<std::string> subscription_status;
  std::optional<unix_ms> subscription_expires_date; // the newest period's expiresDate
  std::optional<bool> auto_renew;                   // signedRenewalInfo autoRenewStatus
  std::optional<std::string> auto_renew_product_id; // signedRenewalInfo autoRenewProductId
  // signedRenewalInfo appAccountToken (API 1.15): the account token the
  // subscription renews with, which the app may have changed since the purchase.
  std::optional<std::string> renewal_app_account_token;
  // The newest notification applied (its signedDate): an older one arriving late
  // changes nothing.
  std::optional<unix_ms> notified_at;
};

struct transaction_record : record_base {
  // The re-upload key, with app_id: the transactionId of a JWS that verified
  // under Apple's chain, else "sha256:" + the hex SHA-256 of the JWS
  // (db/migrations/005).
  std::string transaction_key;
  std::string signed_transaction; // the JWS exactly as received
  apple_transaction transaction;  // empty when the JWS did not verify
};

// Any stored record, whichever store and kind.
using any_record = std::variant<purchase_order_record, receipt_record, transaction_record>;

// ---- Revalidation jobs ----------------------------------------------------

// store_a_app_transaction: a StoreKit 2 AppTransaction
// (model/store_a/app_transaction.hpp), a proof of the app itself, not of a purchase
// in it: it has a retry job and a resource of its own, and no In-App Purchase.
enum class record_kind {
  store_a_receipt,
  store_b_purchase_order,
  store_a_transaction,
  store_a_app_transaction
};
std::string_view to_string(record_kind x);
std::optional<record_kind> parse_record_kind(std::string_view text);

struct validation_job {
  std::string id; // UUID
  record_kind kind = record_kind::store_b_purchase_order;
  std::string record_id;
  std::string app_id;
  int attempts = 0; // store calls made by the retry scheduler so far
  unix_ms next_attempt_at = 0;
  std::int64_t version = 0; // fencing token: bumped by every claim
  std::string last_error;
  // Who holds the job and until when (receiptctl jobs); a lease past its end is free.
  std::optional<std::string> lease_owner;
  std::optional<unix_ms> lease_until;
};

// ---- Re-uploads (DESIGN.md §2) -------------------------

// A re-upload of the same proof by the same app keeps id and created_at, takes
// the new echo fields where sent (ip_address always) and the new verdict, except:
//  - an upload whose own proof fails locally (forged or corrupted signature,
//    another bundle, package or device) never touches a record that passed its
//    own local check: data, state and job stay; that upload alone is refused (402);
//  - a validated record is not downgraded by an upload the store did not confirm:
//    a pending verdict keeps it validated, a store rejection is that upload's 402;
//  - a purchase order's product id never changes (409 product_id_mismatch);
//  - naming another user_identifier than the bound one is a transfer, allowed by
//    the app's policy (`incoming.terms.transfers`) or refused (409
//    bound_to_other_user); an allowed transfer records the previous owner.
// A refusal comes back in the result's `terms.refused`, with the stored record
// unchanged. Only a record that proves its purchase (validated, or signed and not
// fraud) binds a product or a user: a forged, store-rejected or unconfirmed
// legacy first upload cannot squat a purchase token.
// A purchase order keeps what Play's voided list told (keep_notified) and
// receiptd's acknowledgement when the upload brings none; an acknowledged one
// stays acknowledged.
purchase_order_record merge_reupload(const purchase_order_record& existing,
                                     const purchase_order_record& incoming);
receipt_record merge_reupload(const receipt_record& existing, const receipt_record& incoming);
transaction_record merge_reupload(const transaction_record& existing,
                                  const transaction_record& incoming);
// What App Store Server Notifications told about a purchase survives a
// later upload or store answer that does not say it: `now` takes from `before`
// the subscription fields and notified_at it lacks, and — with `revocation`, for
// a re-upload of a JWS signed before the refund — the revocation; in-app
// purchases (by transaction_id) take a cancellation date and reason they lack.
void keep_notified(apple_transaction& now, const apple_transaction& before, bool revocation);
void keep_notified(std::vector<apple_in_app_purchase>& now,
                   const std::vector<apple_in_app_purchase>& before);
// A voided Play purchase stays voided: `now`, when it has no voided_time, takes
// the voided fields from `before` (all four: they are one entry of Play's list,
// never mixed with another), and a voided purchase's purchase_state is refunded.
void keep_notified(play_purchase& now, const play_purchase& before);

// What a record's job is for: a pending record is revalidated; a validated Play
// purchase whose acknowledgement is pending is acknowledged; any other record
// with a job (the scheduled refresh gives one to a subscription whose expiry
// has passed) is refreshed: asked again without being downgraded.
enum class job_purpose { revalidate, acknowledge, refresh };
job_purpose purpose_of(const purchase_order_record& r);
job_purpose purpose_of(const receipt_record& r);
job_purpose purpose_of(const transaction_record& r);
// Whether the record keeps a job after this save or completion: pending, or a
// Play acknowledgement still to make.
bool needs_job(const purchase_order_record& r);
bool needs_job(const receipt_record& r);
bool needs_job(const transaction_record& r);

// The 409 of a proof whose purchase is bound to another user (user_identifier,
// bound_to_other_user).
field_error bound_to_other_user();

// Whether `incoming` failed on its own proof, before any store was asked.
bool rejected_locally(validation_state state, fraud_reason reason);

// A proof its own check refused (a forgery: its signature, chain, bundle,
// device or encoding) is kept as what identifies it — its hash or key (the
// record's), the reason, its size as uploaded (proof_size) and its first
// max_rejected_proof_bytes bytes — not whole: forged uploads of any size, each
// one new, would otherwise fill the disk. The resource and the 402 answer show
// none of the proof, so they are unchanged. Nothing changes for any other record.
inline constexpr std::size_t max_rejected_proof_bytes = 4096;
void trim_rejected_proof(purchase_order_record& r);
void trim_rejected_proof(receipt_record& r);
void trim_rejected_proof(transaction_record& r);

// A local verdict (fraud): the record is rejected for `reason`, whichever store.
template <class Record>
void apply_fraud(Record& r, fraud_reason reason) {
  r.fraud = reason;
  r.state = validation_state::rejected;
}

// How a store's verdict lands on a record, whichever store: confirmed validates it
// (the store's environment wins), rejected is fraud, unreachable leaves it pending.
// What a store adds beyond that (Store A's enriched in-app purchases, Store B's
// purchase) the caller sets.
template <class Record>
void apply_store_verdict(Record& r, const store_verdict& v) {
  r.store_detail = v.detail;
  r.retry_not_before = v.outcome == store_outcome::unreachable ? v.retry_not_before : std::nullopt;
  switch (v.outcome) {
    case store_outcome::confirmed:
      r.fraud = fraud_reason::none;
      r.state = validation_state::validated;
      if (v.env)
        r.env = *v.env;
      if (v.said_at && not_older(v.said_at, r.said_at))
        r.said_at = v.said_at;
      break;
    case store_outcome::rejected:
      apply_fraud(r, fraud_reason::store_rejected);
      break;
    case store_outcome::unreachable:
      r.state = validation_state::pending;
      break;
  }
}

} // namespace receiptd::model
