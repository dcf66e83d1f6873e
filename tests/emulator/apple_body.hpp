#pragma once
// verifyReceipt success bodies in the shapes Apple returns
// (tests/data/responses/apple-verifyReceipt/): every value a string inside the
// receipt, dates as "2020-07-14 19:36:40 Etc/GMT" with _ms and _pst companions.

#include <string_view>

#include <boost/json/object.hpp>

#include "model/store_a/receipt.hpp"

namespace receiptd::emulator {

// "Production" / "Sandbox", as in verifyReceipt's "environment".
std::string_view apple_environment(model::environment env);

// {"status":0,"environment",…,"receipt":{…}} and, for unified receipts,
// "latest_receipt_info", "latest_receipt" and "pending_renewal_info".
boost::json::object apple_success_body(const model::store_a::decoded_receipt& receipt,
                                       std::string_view environment, std::string_view receipt_data,
                                       bool exclude_old);

// The date triple Apple writes for one instant: key, key_ms, key_pst.
void put_apple_date(boost::json::object& o, std::string_view key, model::unix_ms ms);

} // namespace receiptd::emulator
