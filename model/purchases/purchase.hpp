#pragma once
// The In-App Purchase resource: one purchase, whatever the store and whatever
// proofs carried it (Mbaasy's "In-App Purchase Resource"). Records stay the
// proofs as received; a purchase is derived from them (model/purchases/fold.hpp)
// and updated in place as its store truth changes. One subscription is one
// purchase across its renewals: Apple's original transaction id, Play's chain
// of purchase tokens (linkedPurchaseToken).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/records.hpp"
#include "model/store_time.hpp"
#include "model/timestamp.hpp"
#include "model/verdict.hpp"

namespace receiptd::model::purchases {

enum class marketplace { store_a, store_b };
std::string_view to_string(marketplace m);
std::optional<marketplace> parse_marketplace(std::string_view text);

// What was bought. Unknown stays unknown (nullopt): a type is never guessed.
enum class purchase_type { consumable, non_consumable, subscription, non_renewing_subscription };
std::string_view to_string(purchase_type t);
std::optional<purchase_type> parse_purchase_type(std::string_view text);

// Who holds it: bought by the customer, or shared with them by a family member
// (Apple Family Sharing).
enum class ownership { purchased, family_shared };
std::string_view to_string(ownership o);
std::optional<ownership> parse_ownership(std::string_view text);

// A record a purchase was built from, and what that record proves: validated by
// the store, or signed by the store and not confirmed yet (pending). A record
// the store rejected, or whose proof failed locally, proves nothing and is no
// source.
struct source {
  record_kind kind = record_kind::store_a_receipt;
  std::string id;
  bool validated = false;
  bool operator==(const source&) const = default;
};
// "receipt", "transaction", "purchase_order" (the resource's "kind").
std::string_view source_kind_name(record_kind k);

struct purchase {
  std::string id; // UUID
  std::string app_id;
  marketplace market = marketplace::store_a;
  environment env = environment::production;
  // The keys that name it: Apple's original transaction id; Play's purchase
  // tokens, oldest first (a resubscription or upgrade links the next one).
  std::vector<std::string> keys;
  std::string app_identifier; // bundle id or package name

  // The customer (model/purchases/ownership.hpp decides who may take it).
  std::optional<std::string> user_identifier;
  std::vector<std::string> previous_users; // oldest first
  std::optional<std::string> metadata;     // the last upload's, compact JSON text

  // The unit the period facts belong to: Apple's newest transaction, Play's
  // newest token of the chain, and its purchase time (the newer unit wins).
  std::string unit;
  unix_ms unit_time = 0;

  // What the stores said, each fact with when they said it (store_time.hpp).
  said<std::string> product_id;
  said<std::optional<int>> quantity;
  said<std::optional<purchase_type>> type;
  said<std::optional<std::string>> country_code;
  said<std::optional<std::string>> currency_code;
  said<std::optional<std::int64_t>> price; // milliunits
  said<std::optional<bool>> is_auto_renewing;
  said<std::optional<bool>> in_trial_period;
  said<std::optional<bool>> in_intro_period;
  said<std::optional<bool>> in_grace_period;
  said<std::optional<bool>> in_billing_retry;
  said<std::optional<bool>> is_on_hold;
  said<std::optional<bool>> is_paused;
  said<std::optional<bool>> is_upgraded;
  said<std::optional<bool>> is_pending; // Play purchaseState pending
  said<ownership> owned_as{ownership::purchased, std::nullopt};
  said<std::optional<unix_ms>> current_period_start_at;
  said<std::optional<unix_ms>> current_period_end_at;
  said<std::optional<unix_ms>> grace_period_end_at;
  said<std::optional<unix_ms>> canceled_at;
  // The offer the current unit was bought with (App Store: offerType by name —
  // "introductory", "promotional", "offer_code", "win_back" —, offerDiscountType
  // and billingPlanType in lower case, offerPeriod as ISO 8601), the app
  // download it belongs to (appTransactionId) and a 12-month commitment's terms.
  said<std::optional<std::string>> offer_type;
  said<std::optional<std::string>> offer_discount_type;
  said<std::optional<std::string>> offer_period;
  said<std::optional<std::string>> billing_plan_type;
  said<std::optional<commitment_info>> commitment;
  said<std::optional<std::string>> app_transaction_id;
  // The current unit's revocation (refund, family sharing revoked, Play voided):
  // undone only by a reversal the store said after it (fold.hpp). Its type
  // ("refund_full", "refund_prorated", "family_revoke", Play's
  // "refund_partial_quantity"; none: not said, a whole
  // revocation) and, for a refund, the share refunded in milliunits of a
  // percent: a partial one does not revoke the purchase (activity.hpp).
  said<std::optional<unix_ms>> revoked_at;
  std::optional<int> revocation_reason;
  std::optional<std::string> revocation_type;
  std::optional<int> revocation_percentage;

  std::optional<unix_ms> purchased_at; // the earliest original purchase time known
  std::vector<source> sources;         // newest last, at most max_sources
  bool notified = false; // a verified store notification spoke of it (a proof too)
  std::optional<unix_ms> last_synced_at; // the newest store answer or notification
  // The latest refund request a store made of it, as compact JSON text
  // (received_at, deadline_at, state, answered_at, sent, store_status): set
  // by the refund answerer, never by a fold.
  std::optional<std::string> refund_request;
  unix_ms created_at = 0;
  unix_ms updated_at = 0;
  std::int64_t versions = 0; // +1 on every change

  bool operator==(const purchase&) const = default;
};

constexpr std::size_t max_sources = 32;

// The purchases a record names, with the "entitlement/offering" names each
// grants under the app's rules, as evaluated at `at` (what a record's answer
// embeds: model/resource_json.hpp).
struct purchase_set {
  std::vector<purchase> items;
  std::vector<std::vector<std::string>> entitlements; // per item
  unix_ms at = 0;
};

// Whether any source proves it (a purchase whose every source turned out forged
// or store-rejected grants nothing).
bool proven(const purchase& p);
// The revocation_type of a Play quantity-based partial refund (voidedQuantity
// of a one-time product's quantity; refundType 2 of a voided purchase
// notification): revocation_percentage is the share of the quantity voided.
inline constexpr std::string_view play_partial_refund = "refund_partial_quantity";

// Whether its current unit is revoked as a whole: a revocation that is not a
// prorated refund (Apple) or quantity-based partial refund (Play) of less than
// all of it (revocation_percentage < 100000).
bool revoked_whole(const purchase& p);
bool validated(const purchase& p);

} // namespace receiptd::model::purchases
