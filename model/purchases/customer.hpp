#pragma once
// A customer is an app's user_identifier: what they may unlock now, computed
// (never stored) from their purchases, the app's entitlement rules, promotional
// grants and the time — GET /client|/server/customers/{user_identifier}.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "model/purchases/purchase.hpp"
#include "model/purchases/rules.hpp"

namespace receiptd::model::purchases {

// An entitlement granted by the app's backend, not bought (ownership "granted").
struct grant {
  std::string id; // UUID
  std::string app_id;
  std::string user_identifier;
  environment env = environment::production;
  std::string entitlement;
  unix_ms starts_at = 0;
  unix_ms expires_at = 0;
  unix_ms created_at = 0;

  bool active_at(unix_ms now) const { return starts_at <= now && now < expires_at; }
};

// The entitlement names active at `now` (sorted, unique): of purchases active
// then whose product matches, and of grants running then.
std::vector<std::string> active_entitlements(const std::vector<purchase>& purchases,
                                             const std::vector<grant>& grants,
                                             const entitlement_rules& rules, unix_ms now);

// How recent a purchase is: of an entitlement no purchase grants now, the
// answer shows the most recent purchase that matches it (the newest of those
// read first when two are as recent).
unix_ms recency_of(const purchase& p);

// What the customer lookup groups a customer's purchases by product with, in an
// indexed column: the product id itself, or, for one longer than an index entry
// may be (a genuine receipt may carry a product id of most of a megabyte;
// PostgreSQL refuses btree entries beyond ~2.7 kB), "sha256:" and its digest.
std::string product_key(std::string_view product_id);
inline constexpr std::size_t max_plain_product_key = 256;

// Of a customer's purchases (newest first), the ones customer_json reads at
// `now`, in the same order: those active then, and for each product the most
// recent one (recency_of, then the newest). The answer from these is the answer
// from all; the customer lookup reads only these (db::purchase_repository).
std::vector<purchase> answer_purchases(std::vector<purchase> purchases, unix_ms now);

// The answer: {"customer": {"user_identifier", "environment", "entitlements":
// {NAME: {"is_active", "expires_at", "grace_period_end_at", "product_id",
// "offering", "in_app_purchase_id", "will_renew", "in_billing_retry",
// "ownership"}}, "in_app_purchases": [...], "requested_at"}}. Every entitlement
// the app defines is listed (or granted): an active one with the purchase or
// grant that grants it longest, an inactive one with its last purchase, if any.
// in_app_purchases: the customer's active purchases and those the entitlements
// name, newest first.
// `original_versions`: the originalApplicationVersion of the customer's
// validated app transactions; an entitlement no purchase or grant makes active
// is active for good when one of them matches its version patterns, shown with
// "ownership": "purchased", no product and "original_application_version".
boost::json::object customer_json(const std::string& user_identifier, environment env,
                                  const std::vector<purchase>& purchases,
                                  const std::vector<grant>& grants,
                                  const entitlement_rules& rules, unix_ms now,
                                  const std::vector<std::string>& original_versions = {});

// Until when customer_json's answer at `now` stays the same but for
// requested_at, as long as nothing is written: the earliest time after `now` at
// which a purchase's activity changes by time passing alone (next_change), or a
// grant starts or ends. None: only a write changes it.
std::optional<unix_ms> answer_same_until(const std::vector<purchase>& purchases,
                                         const std::vector<grant>& grants, unix_ms now);

// A customer answer given again: `body`, customer_json(..., now) serialized, cut
// before requested_at's value (nullopt when it does not end with requested_at's
// value for `now`), and that head completed with another time.
std::optional<std::string> answer_head(std::string_view body, unix_ms now);
std::string answer_at(std::string_view head, unix_ms now);

// A grant's JSON: {"id", "entitlement", "user_identifier", "environment",
// "starts_at", "expires_at", "created_at"}.
boost::json::object grant_json(const grant& g);

} // namespace receiptd::model::purchases
