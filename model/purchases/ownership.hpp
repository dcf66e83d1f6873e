#pragma once
// Who a purchase belongs to is decided per purchase, whatever proof carries it
// (a unified receipt, an iOS 6 receipt, a StoreKit 2 transaction, a Play
// purchase order, wrapped or re-wrapped however): an upload naming another
// user than the one the purchase is bound to is a transfer, allowed by the
// app's policy or refused (409 bound_to_other_user), as a re-upload of the
// same record is (model/records.hpp).

#include <optional>
#include <string>

#include "model/purchases/purchase.hpp"
#include "model/result.hpp"
#include "model/transfer_policy.hpp"

namespace receiptd::model::purchases {

// The refusal of an upload binding `user` to `p` under `policy`, or nullopt
// when it may (the same user, no user named, an unbound or unproven purchase,
// or a transfer the policy allows).
std::optional<field_error> transfer_refusal(const purchase& p,
                                            const std::optional<std::string>& user,
                                            const transfer_policy& policy);

} // namespace receiptd::model::purchases
