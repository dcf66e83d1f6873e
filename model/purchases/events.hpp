#pragma once
// The events of purchases and customers, in Mbaasy's event payload shape
// (github.com/mbaasy/docs, integrations/event_payloads.md), beside the record
// events of model/webhooks.hpp:
//   {"id", "type": "in_app_purchase", "name": "in_app_purchase.created" |
//    "in_app_purchase.updated", "versions", "created_at": Timestamp,
//    "data": <the In-App Purchase resource>, "previous_attributes": {…},
//    "new_attributes": {…}}
// previous/new list the attributes that changed ({} on created, never null);
// an integration written for Mbaasy reads data.product_id,
// data.current_period_end_at.ms and branches on name.
//   {"id", "type": "customer", "name": "customer.entitlements_changed",
//    "created_at", "data": {"user_identifier", "environment",
//    "active_entitlements": [names]}, "previous_attributes":
//    {"active_entitlements": [before]}, "new_attributes": {"active_entitlements":
//    [after]}}

#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "model/purchases/purchase.hpp"
#include "model/webhooks.hpp"

namespace receiptd::model::purchases {

// The event of a purchase's change: `before` its resource before (null:
// created), `after` now; nullopt when nothing but updated_at, versions or
// last_synced_at changed.
std::optional<webhook_event> purchase_event(const boost::json::object* before,
                                            const boost::json::object& after, const purchase& p,
                                            unix_ms now);

// Whether the resource changed beyond the bookkeeping fields (updated_at,
// versions, version, last_synced_at): what bumps versions.
bool resource_changed(const boost::json::object& before, const boost::json::object& after);

// The subject id of a customer's events: app, environment and user identifier.
std::string customer_subject(const std::string& app_id, environment env,
                             const std::string& user_identifier);

webhook_event entitlements_event(const std::string& app_id, environment env,
                                 const std::string& user_identifier,
                                 const std::vector<std::string>& before,
                                 const std::vector<std::string>& after, unix_ms now);

} // namespace receiptd::model::purchases
