#include "model/purchases/ownership.hpp"

#include "model/records.hpp"

namespace receiptd::model::purchases {

std::optional<field_error> transfer_refusal(const purchase& p,
                                            const std::optional<std::string>& user,
                                            const transfer_policy& policy) {
  if (!user || user->empty() || !p.user_identifier || p.user_identifier->empty()
      || *user == *p.user_identifier || !proven(p))
    return std::nullopt;
  if (policy.allows(static_cast<int>(p.previous_users.size())))
    return std::nullopt;
  return bound_to_other_user();
}

} // namespace receiptd::model::purchases
