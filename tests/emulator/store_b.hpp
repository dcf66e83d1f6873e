#pragma once
// Store B (Google Play): the OAuth 2.0 token endpoint and the Play Developer API
// purchase endpoints, PROTOCOL.md "Store B".

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "http_util.hpp"

namespace receiptd::emulator {

class emulator_state;

// POST /token: service-account JWT bearer grant (RFC 7523).
reply token_endpoint(emulator_state& state, std::string_view body);

// A parsed purchase path.
struct purchase_query {
  bool subscription = false; // subscriptionsv2.get / subscriptions:acknowledge, else products
  std::string package_name;
  std::string product_id; // products: productId; subscriptions:acknowledge: subscriptionId
  std::string token;
  bool v2 = false; // productsv2.getproductpurchasev2 (no product in the path)
};

// GET …/purchases/products/{productId}/tokens/{token} and
// GET …/purchases/subscriptionsv2/tokens/{token}.
reply purchase_endpoint(const emulator_state& state, const purchase_query& query,
                        std::string_view authorization);

// GET …/applications/{package}/orders/{orderId} (order_ids: that one) and
// GET …/applications/{package}/orders:batchGet?orderIds=… (batch).
reply orders_endpoint(emulator_state& state, const std::string& package_name,
                      const std::vector<std::string>& order_ids, bool batch,
                      std::string_view authorization);

// POST androidpublisher/v3/applications/{package}/orders/{orderId}:reviewrefund,
// recorded (GET /control/refund_answers).
reply review_refund_endpoint(emulator_state& state, const std::string& package_name,
                             const std::string& order_id, std::string_view authorization,
                             std::string_view body);

// POST …/purchases/products/{productId}/tokens/{token}:acknowledge and
// POST …/purchases/subscriptions/{subscriptionId}/tokens/{token}:acknowledge.
reply acknowledge_endpoint(emulator_state& state, const purchase_query& query,
                           std::string_view authorization, std::string_view body);

// GET …/applications/{package}/purchases/voidedpurchases with its query
// parameters (startTime, endTime, maxResults, token, type; others ignored).
reply voided_purchases_endpoint(const emulator_state& state, const std::string& package_name,
                                const std::map<std::string, std::string>& params,
                                std::string_view authorization);

// Google's JSON error envelope for an HTTP status, with the reason and message
// Google uses for it ({"error":{"code","message","errors":[…],"status"}});
// `message` and `reason`, when not empty, replace the status's usual ones.
boost::json::object google_error(int http_status, std::string_view message = {},
                                 std::string_view reason = {});

} // namespace receiptd::emulator
