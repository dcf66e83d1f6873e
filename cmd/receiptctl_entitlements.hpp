#pragma once
// receiptctl entitlement set|list|remove: an app's entitlement rules
// (model/entitlements/rules.hpp), each pattern checked (RE2) before it is stored.

#include <boost/json/value.hpp>

#include "cmd/receiptctl_options.hpp"
#include "db/database.hpp"

namespace receiptd::cmd {

int entitlement_command(const ctl_options& a, db::database& db);

// The app's stored rules as JSON ({"premium":{"monthly":{"product_id":[…]}}}); a
// stored text that is not JSON (a row written by hand) as that string.
boost::json::value entitlements_json(const model::app& app);

} // namespace receiptd::cmd
