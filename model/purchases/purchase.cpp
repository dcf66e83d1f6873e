#include "model/purchases/purchase.hpp"

#include <algorithm>

namespace receiptd::model::purchases {

std::string_view to_string(marketplace m) {
  return m == marketplace::store_a ? "store_a" : "store_b";
}

std::optional<marketplace> parse_marketplace(std::string_view text) {
  if (text == "store_a")
    return marketplace::store_a;
  if (text == "store_b")
    return marketplace::store_b;
  return std::nullopt;
}

std::string_view to_string(purchase_type t) {
  switch (t) {
    case purchase_type::consumable:
      return "consumable";
    case purchase_type::non_consumable:
      return "non_consumable";
    case purchase_type::subscription:
      return "subscription";
    case purchase_type::non_renewing_subscription:
      return "non_renewing_subscription";
  }
  return "";
}

std::optional<purchase_type> parse_purchase_type(std::string_view text) {
  for (auto t : {purchase_type::consumable, purchase_type::non_consumable,
                 purchase_type::subscription, purchase_type::non_renewing_subscription})
    if (to_string(t) == text)
      return t;
  return std::nullopt;
}

std::string_view to_string(ownership o) {
  return o == ownership::purchased ? "purchased" : "family_shared";
}

std::optional<ownership> parse_ownership(std::string_view text) {
  if (text == "purchased")
    return ownership::purchased;
  if (text == "family_shared")
    return ownership::family_shared;
  return std::nullopt;
}

std::string_view source_kind_name(record_kind k) {
  switch (k) {
    case record_kind::store_a_receipt:
      return "receipt";
    case record_kind::store_a_transaction:
      return "transaction";
    case record_kind::store_a_app_transaction: // the app itself: never a purchase's source
      return "app_transaction";
    case record_kind::store_b_purchase_order:
      return "purchase_order";
  }
  return "";
}

bool proven(const purchase& p) {
  return !p.sources.empty() || p.notified;
}

bool revoked_whole(const purchase& p) {
  if (!p.revoked_at.value)
    return false;
  // Apple's REFUND_PRORATED with revocationPercentage below 100000: the store
  // refunded a share and left the rest to the customer. Anything else — a full
  // refund, a Family Sharing revocation, a store that does not say, a prorated
  // refund that does not say how much — revokes it all.
  // Play's quantity-based partial refund likewise: its share is the quantity
  // voided.
  const bool partial
    = (p.revocation_type == "refund_prorated" || p.revocation_type == play_partial_refund)
    && p.revocation_percentage && *p.revocation_percentage < 100000;
  return !partial;
}

bool validated(const purchase& p) {
  return p.notified
    || std::any_of(p.sources.begin(), p.sources.end(), [](const source& s) { return s.validated; });
}

} // namespace receiptd::model::purchases
