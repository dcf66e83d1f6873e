#pragma once
// Play Billing purchase data (the INAPP_PURCHASE_DATA JSON string), DESIGN.md §4.

#include <optional>
#include <string>
#include <string_view>

#include "model/records.hpp"
#include "model/result.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::store_b {

struct purchase_data {
  std::optional<std::string> order_id; // absent on some test purchases
  std::string package_name;
  std::string product_id;
  std::string purchase_token;
  std::optional<unix_ms> purchase_time;
  std::optional<int> purchase_state; // 0 purchased, 1 cancelled, 2 refunded, 4 pending
  std::optional<bool> acknowledged;
  std::optional<bool> auto_renewing; // present only on subscriptions
  std::optional<int> quantity;
  std::optional<std::string> account_id; // obfuscatedAccountId

  bool is_subscription() const { return auto_renewing.has_value(); }
};

// The string is parsed, never re-serialized: the signature covers its exact bytes.
// Errors carry field "purchase_data".
result<purchase_data> parse_purchase_data(std::string_view json);

// Purchase data's purchaseState: 0 purchased, 1 cancelled, 2 refunded, 4 pending.
model::purchase_state purchase_state_of(std::optional<int> data_state);

} // namespace receiptd::model::store_b
