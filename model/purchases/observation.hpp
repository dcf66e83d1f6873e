#pragma once
// What one source of truth says about one purchase, at the time the store said
// it: a stored record (an upload and its store answer, a revalidation, a
// refresh), an App Store Server Notification, an entry of Play's voided
// purchases list. Folded into the purchase by model/purchases/fold.hpp.

#include <optional>
#include <string>
#include <vector>

#include "model/purchases/purchase.hpp"
#include "model/records.hpp"
#include "model/store_a/notification.hpp"

namespace receiptd::model::purchases {

// What a source says of the unit's revocation.
enum class revocation_said {
  nothing,  // silent: what is known stays
  revoked,  // refunded, revoked, voided: revoked_at / revocation_reason
  reversed, // Apple's REFUND_REVERSED
};

// A fact the source states (nullopt: it says nothing about it).
template <class T>
using statement = std::optional<T>;

struct observation {
  // Which purchase: the app, its store, environment and key.
  std::string app_id;
  marketplace market = marketplace::store_a;
  environment env = environment::production;
  std::string key;                        // original transaction id / purchase token
  std::optional<std::string> linked_key;  // Play linkedPurchaseToken: the previous token
  std::string app_identifier;             // bundle id / package name

  // The unit it speaks of (transaction id / token) and that unit's purchase time;
  // none: it speaks of the subscription as a whole (its renewal state), not of
  // one period.
  std::string unit;
  unix_ms unit_time = 0;
  unix_ms at = 0; // when the store signed or said it

  // The record it comes from (none: a notification or Play's voided list), and
  // whether that record proves the purchase; a record that no longer does
  // (store-rejected) is removed from the purchase's sources.
  std::optional<source> from;
  bool proves = false;
  bool store_signed = false; // a verified store notification: proof by itself

  // The customer: an upload's user_identifier (a binding the caller has checked
  // against the transfer policy: model/purchases/ownership.hpp), or the store's
  // account token when the app takes customers from it.
  std::optional<std::string> user_identifier;
  bool binds_user = false;
  std::optional<std::string> metadata; // an upload's
  bool sets_metadata = false;

  statement<std::string> product_id;
  statement<std::optional<int>> quantity;
  statement<std::optional<purchase_type>> type;
  statement<std::optional<std::string>> country_code;
  statement<std::optional<std::string>> currency_code;
  statement<std::optional<std::int64_t>> price;
  statement<std::optional<bool>> is_auto_renewing;
  statement<std::optional<bool>> in_trial_period;
  statement<std::optional<bool>> in_intro_period;
  statement<std::optional<bool>> in_grace_period;
  statement<std::optional<bool>> in_billing_retry;
  statement<std::optional<bool>> is_on_hold;
  statement<std::optional<bool>> is_paused;
  statement<std::optional<bool>> is_upgraded;
  statement<std::optional<bool>> is_pending;
  statement<ownership> owned_as;
  statement<std::optional<unix_ms>> current_period_start_at;
  statement<std::optional<unix_ms>> current_period_end_at;
  statement<std::optional<unix_ms>> grace_period_end_at;
  // Whether the customer (or the store) cancelled renewal: canceled_at becomes
  // `at` when it turns true, null when it turns false.
  statement<bool> canceled;
  std::optional<unix_ms> canceled_at; // when the source says exactly when
  statement<std::optional<std::string>> offer_type;
  statement<std::optional<std::string>> offer_discount_type;
  statement<std::optional<std::string>> offer_period;
  statement<std::optional<std::string>> billing_plan_type;
  statement<std::optional<commitment_info>> commitment;
  statement<std::optional<std::string>> app_transaction_id;
  revocation_said revocation = revocation_said::nothing;
  std::optional<unix_ms> revoked_at;
  std::optional<int> revocation_reason;
  // Said with a revocation: its type (purchase.hpp) and refunded share; none
  // from a source that does not tell (a receipt, Play).
  std::optional<std::string> revocation_type;
  std::optional<int> revocation_percentage;
  std::optional<unix_ms> original_purchase_date;
};

// The keys of the customer-facing options an app sets (model::app).
struct observe_options {
  // A StoreKit 2 appAccountToken / Play obfuscatedExternalAccountId names the
  // customer (the app opted in).
  bool customer_from_account_token = false;
};

// Whether a record proves the purchase it names: the store confirmed it, or a
// signature that checked out stands behind it and the store has not refused it
// (pending, or given up on during an outage). A legacy Play upload has no
// signature: only the store's confirmation proves it.
bool proves_record(const transaction_record& r);
bool proves_record(const receipt_record& r);
bool proves_record(const purchase_order_record& r);

// What a stored record says: one observation per purchase it holds (a unified
// receipt may hold several; a StoreKit 2 transaction with notified
// subscription facts gives a second one for those, at their own time). None for
// a record whose proof failed locally (it names nothing it proved).
std::vector<observation> observe(const transaction_record& r, const observe_options& o);
std::vector<observation> observe(const receipt_record& r, const observe_options& o);
std::vector<observation> observe(const purchase_order_record& r, const observe_options& o);

// What a verified App Store Server Notification says about its transaction's
// purchase, for app `app_id`; none when it says nothing of one (TEST, types
// receiptd does not apply, no signedTransactionInfo).
std::optional<observation> observe(const std::string& app_id,
                                   const store_a::verified_notification& v,
                                   const observe_options& o);

// The subscription kind of Apple's transaction "type" text; nullopt for any other.
std::optional<purchase_type> apple_purchase_type(std::string_view type);

// ISO 3166-1 alpha-2 of an alpha-3 code (App Store storefronts), nullopt when unknown.
std::optional<std::string> alpha2_of(std::string_view alpha3);

} // namespace receiptd::model::purchases
