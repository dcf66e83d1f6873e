#pragma once
// Play's orders resource (Play Developer API v3 orders.get and
// orders.batchGet, 2025): what an order cost — its total, tax and refunds, as
// Money (currencyCode, units, nanos) — for the order as a whole and per line
// item. receiptd reads the order a purchase names (products' orderId,
// subscriptions' latestSuccessfulOrderId) to fill the purchase's price and
// currency.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include "model/records.hpp"
#include "model/result.hpp"
#include "model/timestamp.hpp"

namespace receiptd::model::store_b {

// Google answers at most 1000 orders per batchGet.
inline constexpr std::size_t max_orders_per_batch = 1000;

struct play_order {
  std::string order_id;
  std::string purchase_token;
  play_price cost; // the order's total, tax and refunds
  // Each line item's productId and cost (its own total and tax; refunds are
  // the order's only).
  std::vector<std::pair<std::string, play_price>> line_items;
};

// GET …/applications/{package}/orders/{orderId}
std::string order_url(std::string_view api_base, std::string_view package_name,
                      std::string_view order_id);
// GET …/applications/{package}/orders:batchGet?orderIds=…&orderIds=… (repeated,
// as gRPC transcoding writes a repeated query parameter).
std::string orders_batch_url(std::string_view api_base, std::string_view package_name,
                             const std::vector<std::string>& order_ids);

// A Money object as milliunits: units × 1000 + nanos / 10^6 (units and nanos
// share their sign); nullopt when it is not one or overflows.
std::optional<std::int64_t> money_milliunits(const boost::json::value* money);

// orders.get's answer (an Order), or an error naming the status (http_status 0:
// no answer; 404: no such order).
result<play_order> parse_order(int http_status, std::string_view body,
                               std::string_view transport_error);
// orders.batchGet's answer ({"orders": [Order…]}).
result<std::vector<play_order>> parse_orders(int http_status, std::string_view body,
                                             std::string_view transport_error);

// Fills what the order says into the purchase: the claimed product's line item
// (or the order's total when it has one line item) becomes p.cost, each of
// p.line_items gets its own, the refunds are the order's; order_read_at = now.
// Returns whether anything it holds changed.
bool apply_order(play_purchase& p, const play_order& order, unix_ms now);

} // namespace receiptd::model::store_b
