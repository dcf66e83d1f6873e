#pragma once
// store_b_purchase_orders and store_a_transactions: the generic record table
// (db/record_table.hpp) as it is; they keep nothing beside the row.

#include "db/record_table.hpp"

namespace receiptd::db {

using purchase_order_repository = record_table<purchase_order_table>;
using transaction_repository = record_table<transaction_table>;

} // namespace receiptd::db
