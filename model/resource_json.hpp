#pragma once
// JSON shapes of the responses: the SPEC §2.1/§2.2 resources (plus the additive
// validation_state) and the DESIGN.md §2 error payload.

#include <string>

#include <boost/json/object.hpp>

#include "model/records.hpp"
#include "model/result.hpp"

namespace receiptd::model {

namespace store_a {
struct app_transaction_record; // model/store_a/app_transaction.hpp
}

boost::json::object purchase_order_json(const purchase_order_record& r);
boost::json::object receipt_json(const receipt_record& r);
boost::json::object transaction_json(const transaction_record& r);
// The resource of a record, whichever kind.
inline boost::json::object resource_json(const purchase_order_record& r) {
  return purchase_order_json(r);
}
inline boost::json::object resource_json(const receipt_record& r) {
  return receipt_json(r);
}
inline boost::json::object resource_json(const transaction_record& r) {
  return transaction_json(r);
}
// The app transaction resource (POST /client/store_a/app_transactions).
boost::json::object app_transaction_json(const store_a::app_transaction_record& r);
inline boost::json::object resource_json(const store_a::app_transaction_record& r) {
  return app_transaction_json(r);
}
// The same resources as text, written from the values (what an upload or a
// lookup answers).
std::string resource_text(const purchase_order_record& r);
std::string resource_text(const receipt_record& r);
std::string resource_text(const transaction_record& r);
std::string resource_text(const store_a::app_transaction_record& r);
boost::json::object in_app_purchase_json(const play_purchase& p);
boost::json::object in_app_purchase_json(const apple_in_app_purchase& p);

// {"errors":[{"field":…,"code":…,"message":…}]} — "field" omitted when empty.
std::string error_body(const field_errors& errors);
// The 402 body: the errors plus the stored record under "purchase_order"/"receipt"/
// "transaction".
std::string rejection_body(const purchase_order_record& r);
std::string rejection_body(const receipt_record& r);
std::string rejection_body(const transaction_record& r);

// The 402 body for an upload refused for `reason` whose stored record kept
// another verdict (a validated purchase is not downgraded by a forged re-upload).
std::string rejection_body(const purchase_order_record& r, fraud_reason reason);
std::string rejection_body(const receipt_record& r, fraud_reason reason);
std::string rejection_body(const transaction_record& r, fraud_reason reason);
std::string rejection_body(const store_a::app_transaction_record& r, fraud_reason reason);

// The status and body an upload gets once its record is stored: the resource
// with 200/206, the rejection body with 402. `own_verdict` is the upload's own
// fraud reason: an upload refused on its own proof is a 402 whatever the record
// it collided with says. A re-upload the save refused (`stored.terms.refused`:
// another product, another user) is a 409 with that error.
struct upload_answer {
  int status;
  std::string body;
};
upload_answer answer_for(const purchase_order_record& stored, fraud_reason own_verdict);
upload_answer answer_for(const receipt_record& stored, fraud_reason own_verdict);
upload_answer answer_for(const transaction_record& stored, fraud_reason own_verdict);
upload_answer answer_for(const store_a::app_transaction_record& stored, fraud_reason own_verdict);

std::string upload_response_body(const purchase_order_record& r);
std::string upload_response_body(const receipt_record& r);
std::string upload_response_body(const transaction_record& r);
std::string upload_response_body(const store_a::app_transaction_record& r);

} // namespace receiptd::model
