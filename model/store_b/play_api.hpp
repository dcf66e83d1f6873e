#pragma once
// The Play Developer API v3 calls receiptd makes and what their answers mean
// (DESIGN.md §2 status table, §4).

#include <string>
#include <string_view>

#include "model/records.hpp"
#include "model/verdict.hpp"

namespace receiptd::model::store_b {

enum class purchase_api { products, subscriptions_v2 };

// GET …/applications/{package}/purchases/products/{productId}/tokens/{token}
// GET …/applications/{package}/purchases/subscriptionsv2/tokens/{token}
std::string purchase_url(std::string_view api_base, purchase_api api, std::string_view package_name,
                         std::string_view product_id, std::string_view purchase_token);

// http_status 0 means the call never got an HTTP answer (connect error, timeout);
// `transport_error` then says why. On a confirmed answer, `purchase` is enriched
// with what the API says (state, acknowledgement, expiry, test purchase).
store_verdict classify_purchase_response(purchase_api api, int http_status, std::string_view body,
                                         std::string_view transport_error, play_purchase& purchase);

} // namespace receiptd::model::store_b
