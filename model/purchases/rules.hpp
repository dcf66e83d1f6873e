#pragma once
// What the purchase layer asks of an app's entitlement rules (compiled from the
// patterns receiptctl sets: model/entitlements/): the names of its
// entitlements, and which "entitlement/offering" a product id matches.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/entitlements/matcher.hpp"

namespace receiptd::model::purchases {

class entitlement_rules {
public:
  virtual ~entitlement_rules() = default;
  // Every entitlement the app defines, in a stable order.
  virtual std::vector<std::string> names() const = 0;
  // The "entitlement/offering" pairs whose patterns match `product_id`.
  virtual std::vector<std::string> tags(std::string_view product_id) const = 0;
  // Whether any offering matches the customer's original application version
  // (model/entitlements/rules.hpp: the version subjects), and the pairs that
  // match `original_version` (an app transaction's originalApplicationVersion).
  virtual bool matches_versions() const { return false; }
  virtual std::vector<std::string> version_tags(std::string_view original_version) const {
    return {};
  }
};

// An app without entitlements.
const std::shared_ptr<const entitlement_rules>& no_entitlements();

// The rules an app's compiled matcher gives (null: none).
std::shared_ptr<const entitlement_rules>
rules_of(std::shared_ptr<const entitlements::matcher> compiled);

// "premium/monthly" → "premium"; "premium/monthly" → "monthly".
std::string_view entitlement_of(std::string_view tag);
std::string_view offering_of(std::string_view tag);

} // namespace receiptd::model::purchases
