#include "model/store_b/refresh.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace receiptd::model::store_b {

bool is_final_subscription_state(std::string_view state) {
  return std::find(std::begin(final_subscription_states), std::end(final_subscription_states),
                   state)
    != std::end(final_subscription_states);
}

bool apply_refresh(purchase_order_record& r, const store_verdict& v, play_purchase answered) {
  r.store_detail = v.detail;
  switch (v.outcome) {
    case store_outcome::confirmed: {
      auto before = std::move(r.purchase);
      r.purchase = std::move(answered);
      keep_notified(r.purchase, before);
      if (v.env)
        r.env = *v.env;
      return true;
    }
    case store_outcome::rejected:
      // Not fraud: the token was genuine when the record was validated.
      r.purchase.subscription_state = "SUBSCRIPTION_STATE_EXPIRED";
      r.purchase.purchase_state
        = r.purchase.voided_time ? purchase_state::refunded : purchase_state::cancelled;
      return true;
    case store_outcome::unreachable:
      break;
  }
  return false;
}

} // namespace receiptd::model::store_b
