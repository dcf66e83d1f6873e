#pragma once
// What the purchase layer reads of an app's row: its entitlement rules
// (compiled) and its customer options.

#include <string>

#include "db/purchase_projection.hpp"
#include "model/app.hpp"

namespace receiptd::db {

// The text the app's rules are compiled from: a change of it recompiles them.
std::string rules_text(const model::app& a);
purchase_terms compile_terms(const model::app& a);
model::purchases::observe_options observe_options(const model::app& a);

} // namespace receiptd::db
