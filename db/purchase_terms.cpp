#include "db/purchase_terms.hpp"

#include "model/entitlements/matcher.hpp"
#include "model/entitlements/rules.hpp"

namespace receiptd::db {

std::string rules_text(const model::app& a) {
  return a.entitlement_rules;
}

purchase_terms compile_terms(const model::app& a) {
  purchase_terms t;
  t.observe = observe_options(a);
  // Rules a hand-written row made unusable match nothing (the supervisor logs
  // them when it compiles the same text for its app contexts).
  if (auto parsed = model::entitlements::parse_rules(a.entitlement_rules))
    if (auto compiled = model::entitlements::matcher::compile(*parsed))
      t.rules = model::purchases::rules_of(*compiled);
  return t;
}

model::purchases::observe_options observe_options(const model::app& a) {
  return {.customer_from_account_token
          = a.customer_id_from == model::customer_id_source::app_account_token};
}

} // namespace receiptd::db
