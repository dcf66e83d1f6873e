#pragma once
// The orders sweep's work as the database gives it (db::database::orders_due)
// and takes it back (db::database::apply_orders).

#include <optional>
#include <string>
#include <vector>

#include "model/app.hpp"
#include "model/store_b/orders.hpp"

namespace receiptd::model::store_b {

// A purchase order whose order is to be read.
struct order_ref {
  std::string purchase_token;
  std::string order_id;
};

// One app's due orders, with the app (its package name and service account).
struct orders_due {
  model::app app;
  std::vector<order_ref> orders;
};

// What reading one order said: the order, or none when Play does not know it
// (404: nothing to read, the purchase order is only marked read).
struct order_read {
  std::string purchase_token;
  std::optional<play_order> order;
};

} // namespace receiptd::model::store_b
