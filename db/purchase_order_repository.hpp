#pragma once
// store_b_purchase_orders: the generic record table (db/record_table.hpp) as it is;
// Store B keeps nothing beside the row.

#include "db/record_table.hpp"

namespace receiptd::db {

using purchase_order_repository = record_table<purchase_order_table>;

} // namespace receiptd::db
