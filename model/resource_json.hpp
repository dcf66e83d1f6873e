#pragma once
// JSON shapes of the responses: the SPEC §2.1/§2.2 resources (plus the additive
// validation_state) and the DESIGN.md §2 error payload.

#include <string>

#include <boost/json/object.hpp>

#include "model/records.hpp"
#include "model/result.hpp"

namespace receiptd::model {

boost::json::object purchase_order_json(const purchase_order_record& r);
boost::json::object receipt_json(const receipt_record& r);
boost::json::object in_app_purchase_json(const play_purchase& p);
boost::json::object in_app_purchase_json(const apple_in_app_purchase& p);

// {"errors":[{"field":…,"code":…,"message":…}]} — "field" omitted when empty.
std::string error_body(const field_errors& errors);
// The 402 body: the errors plus the stored record under "purchase_order"/"receipt".
std::string rejection_body(const purchase_order_record& r);
std::string rejection_body(const receipt_record& r);

// The response body an upload gets once its record is stored: the resource for
// 200/206, the rejection body for 402.
std::string upload_response_body(const purchase_order_record& r);
std::string upload_response_body(const receipt_record& r);

} // namespace receiptd::model
