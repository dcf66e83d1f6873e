#include "http/routes.hpp"

namespace receiptd::http {

namespace {

using model::record_kind;

// In the order of the enum (info() indexes by it).
constexpr route_info table[] = {
  {route::store_a_upload, "store_a_upload", true, "/client/store_a/receipts", false, {}},
  {route::store_b_upload, "store_b_upload", true, "/client/store_b/purchase_orders", false, {}},
  {route::store_b_legacy_upload,
   "store_b_legacy_upload",
   true,
   "/client/store_b/purchase_orders/legacy",
   false,
   {}},
  {route::store_a_transaction_upload,
   "store_a_transaction_upload",
   true,
   "/client/store_a/transactions",
   false,
   {}},
  {route::store_a_get, "store_a_get", false, "/client/store_a/receipts", true,
   record_kind::store_a_receipt},
  {route::store_b_get, "store_b_get", false, "/client/store_b/purchase_orders", true,
   record_kind::store_b_purchase_order},
  {route::store_a_transaction_get, "store_a_transaction_get", false, "/client/store_a/transactions",
   true, record_kind::store_a_transaction},
  {route::store_a_notification,
   "store_a_notification",
   true,
   "/notifications/store_a",
   true,
   {},
   false},
  {route::store_b_notification,
   "store_b_notification",
   true,
   "/notifications/store_b",
   true,
   {},
   false,
   true},
  {route::health, "health", false, "/healthz", false, {}, false},
};

} // namespace

std::span<const route_info> routes() {
  return table;
}

const route_info& info(route r) {
  return table[static_cast<std::size_t>(r)];
}

} // namespace receiptd::http
