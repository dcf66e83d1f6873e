#include "http/routes.hpp"

namespace receiptd::http {

namespace {

using model::record_kind;

// In the order of the enum (info() indexes by it).
constexpr route_info table[] = {
  {.id = route::store_a_upload,
   .name = "store_a_upload",
   .post = true,
   .path = "/client/store_a/receipts",
   .alias = "/client/itunes_connect/receipts"},
  {.id = route::store_b_upload,
   .name = "store_b_upload",
   .post = true,
   .path = "/client/store_b/purchase_orders",
   .alias = "/client/google_play/purchase_orders"},
  {.id = route::store_b_legacy_upload,
   .name = "store_b_legacy_upload",
   .post = true,
   .path = "/client/store_b/purchase_orders/legacy",
   .alias = "/client/google_play/purchase_orders/legacy"},
  {
    .id = route::store_a_transaction_upload,
    .name = "store_a_transaction_upload",
    .post = true,
    .path = "/client/store_a/transactions",
  },
  {.id = route::store_a_get,
   .name = "store_a_get",
   .path = "/client/store_a/receipts",
   .takes_id = true,
   .lookup = record_kind::store_a_receipt,
   .alias = "/client/itunes_connect/receipts"},
  {.id = route::store_b_get,
   .name = "store_b_get",
   .path = "/client/store_b/purchase_orders",
   .takes_id = true,
   .lookup = record_kind::store_b_purchase_order,
   .alias = "/client/google_play/purchase_orders"},
  {.id = route::store_a_transaction_get,
   .name = "store_a_transaction_get",
   .path = "/client/store_a/transactions",
   .takes_id = true,
   .lookup = record_kind::store_a_transaction},
  {.id = route::store_a_notification,
   .name = "store_a_notification",
   .post = true,
   .path = "/notifications/store_a",
   .takes_id = true,
   .bearer = false},
  {.id = route::store_b_notification,
   .name = "store_b_notification",
   .post = true,
   .path = "/notifications/store_b",
   .takes_id = true,
   .bearer = false,
   .token_in_query = true},
  {.id = route::health, .name = "health", .path = "/healthz", .bearer = false, .operational = true},
  {.id = route::ready, .name = "ready", .path = "/readyz", .bearer = false, .operational = true},
  {.id = route::metrics,
   .name = "metrics",
   .path = "/metrics",
   .bearer = false,
   .operational = true},
  {.id = route::openapi,
   .name = "openapi",
   .path = "/openapi.yaml",
   .bearer = false,
   .operational = true},
  {.id = route::purchase_get,
   .name = "purchase_get",
   .path = "/client/in_app_purchases",
   .takes_id = true,
   .resource = true},
  {.id = route::customer_get,
   .name = "customer_get",
   .path = "/client/customers",
   .takes_id = true,
   .resource = true},
  {.id = route::server_customer_get,
   .name = "server_customer_get",
   .path = "/server/customers",
   .takes_id = true,
   .token = model::token_kind::server,
   .resource = true},
  {.id = route::server_customer_purchases,
   .name = "server_customer_purchases",
   .path = "/server/customers/{}/in_app_purchases",
   .token = model::token_kind::server,
   .templated = true,
   .resource = true},
  {.id = route::server_grant_add,
   .name = "server_grant_add",
   .post = true,
   .path = "/server/customers/{}/entitlements/{}/grants",
   .token = model::token_kind::server,
   .templated = true,
   .resource = true},
  {.id = route::server_grant_remove,
   .name = "server_grant_remove",
   .path = "/server/customers/{}/entitlements/{}/grants/{}",
   .token = model::token_kind::server,
   .deletes = true,
   .templated = true,
   .resource = true},
  // Asks the App Store first (the customer's transaction history), then writes
  // through the persistence pool: the validator's kind of work, not a resource read.
  {.id = route::server_customer_restore,
   .name = "server_customer_restore",
   .post = true,
   .path = "/server/customers/{}/restore",
   .token = model::token_kind::server,
   .templated = true},
  {.id = route::server_purchase_consumption,
   .name = "server_purchase_consumption",
   .path = "/server/in_app_purchases/{}/consumption",
   .token = model::token_kind::server,
   .puts = true,
   .templated = true,
   .resource = true},
  // StoreKit 2 app transactions (model/store_a/app_transaction.hpp): new with
  // receiptd, no Mbaasy path, as StoreKit 2 transactions.
  {
    .id = route::store_a_app_transaction_upload,
    .name = "store_a_app_transaction_upload",
    .post = true,
    .path = "/client/store_a/app_transactions",
  },
  {.id = route::store_a_app_transaction_get,
   .name = "store_a_app_transaction_get",
   .path = "/client/store_a/app_transactions",
   .takes_id = true,
   .lookup = record_kind::store_a_app_transaction},
};

} // namespace

std::span<const route_info> routes() {
  return table;
}

const route_info& info(route r) {
  return table[static_cast<std::size_t>(r)];
}

std::string_view allowed_methods(const route_info& r) {
  return r.deletes ? "DELETE" : r.puts ? "PUT" : r.post ? "POST" : "GET, HEAD";
}

std::string record_path(model::record_kind kind, std::string_view id) {
  for (const auto& r : table)
    if (r.lookup == kind)
      return std::string(r.path) + "/" + std::string(id);
  return {};
}

std::string wrong_token_kind_message(const route_info& r, model::token_kind shown) {
  return "this path takes a " + std::string(model::to_string(r.token)) + " token, not a "
    + std::string(model::to_string(shown)) + " token";
}

} // namespace receiptd::http
