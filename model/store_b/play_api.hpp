#pragma once
// The Play Developer API v3 calls receiptd makes and what their answers mean
// (DESIGN.md §2 status table, §4).

#include <string>
#include <string_view>

#include "model/records.hpp"
#include "model/verdict.hpp"

namespace receiptd::model::store_b {

// products: a one-time product, asked of productsv2 first and of products.get
// only when productsv2 answers 404 for it (actors/store_b_client.cpp);
// products_v2 is that first call.
enum class purchase_api { products, subscriptions_v2, products_v2 };

// GET …/applications/{package}/purchases/products/{productId}/tokens/{token}
// GET …/applications/{package}/purchases/subscriptionsv2/tokens/{token}
// GET …/applications/{package}/purchases/productsv2/tokens/{token}
std::string purchase_url(std::string_view api_base, purchase_api api, std::string_view package_name,
                         std::string_view product_id, std::string_view purchase_token);

// http_status 0 means the call never got an HTTP answer (connect error, timeout);
// `transport_error` then says why. On a confirmed answer, `purchase` is enriched
// with what the API says (state, acknowledgement, expiry, test purchase).
// At most this many line items of a productsv2 answer are kept (each becomes a
// purchase); an answer with more is refused as not Play's shape.
inline constexpr std::size_t max_line_items = 50;

store_verdict classify_purchase_response(purchase_api api, int http_status, std::string_view body,
                                         std::string_view transport_error, play_purchase& purchase);

} // namespace receiptd::model::store_b
