#pragma once
// A productsv2 purchase's line items as stored (db column line_items): a JSON
// array of {"product_id","quantity","refundable_quantity","consumed",
// "offer_id","purchase_option_id","price","currency_code","tax","refunded"}.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/records.hpp"

namespace receiptd::model::store_b {

// none for an empty list (a purchase of one product).
std::optional<std::string> line_items_json(const std::vector<play_line_item>& items);
// nullopt when the text is not such an array.
std::optional<std::vector<play_line_item>> parse_line_items_json(std::string_view text);

} // namespace receiptd::model::store_b
