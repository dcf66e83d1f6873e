#pragma once
// The purchases' statements (db/migrations/012_purchases.sql). {columns},
// {parameters} and {assignments} are rendered from purchase_row's columns.

#include <string_view>

namespace receiptd::db::sql::purchases {

inline constexpr std::string_view find_by_id = "SELECT {columns} FROM purchases WHERE id = :key_id";

// The purchase a key names (an original transaction id, a Play purchase token),
// locked for the rest of the transaction on PostgreSQL (SQLite's BEGIN IMMEDIATE
// serializes writers): one writer folds a purchase at a time.
inline constexpr std::string_view find_by_key_postgresql
  = "SELECT {columns} FROM purchases WHERE id = (SELECT purchase_id FROM purchase_keys"
    " WHERE app_id = :key_app_id AND marketplace = :key_marketplace"
    " AND environment = :key_environment AND purchase_key = :key_purchase_key) FOR UPDATE";
inline constexpr std::string_view find_by_key_sqlite
  = "SELECT {columns} FROM purchases WHERE id = (SELECT purchase_id FROM purchase_keys"
    " WHERE app_id = :key_app_id AND marketplace = :key_marketplace"
    " AND environment = :key_environment AND purchase_key = :key_purchase_key)";

inline constexpr std::string_view insert
  = "INSERT INTO purchases ({columns}) VALUES ({parameters})";
inline constexpr std::string_view update = "UPDATE purchases SET {assignments} WHERE id = :key_id";
// A purchase made by a transaction that then found its key taken (and its keys).
inline constexpr std::string_view remove_keys
  = "DELETE FROM purchase_keys WHERE purchase_id = :key_id";
inline constexpr std::string_view remove = "DELETE FROM purchases WHERE id = :key_id";

// A key names one purchase: a concurrent fold that claimed it first wins (0 rows;
// the caller folds into that purchase instead).
inline constexpr std::string_view insert_key
  = "INSERT INTO purchase_keys (app_id, marketplace, environment, purchase_key, purchase_id)"
    " VALUES (:app_id, :marketplace, :environment, :purchase_key, :purchase_id)"
    " ON CONFLICT (app_id, marketplace, environment, purchase_key) DO NOTHING";

// A customer's purchases in one environment, newest first, after a cursor
// (created_at, id) — the paged listing. One index range (purchases_by_customer).
inline constexpr std::string_view by_customer
  = "SELECT {columns} FROM purchases WHERE app_id = :key_app_id"
    " AND user_identifier = :key_user AND environment = :key_environment"
    " AND (created_at < :key_before OR (created_at = :key_before AND id < :key_before_id))"
    " ORDER BY created_at DESC, id DESC LIMIT :key_limit";

// The purchases a customer's answer reads at :key_now, newest first
// (model::purchases::answer_purchases; 013_customer_lookup.sql): those active
// then (one range of purchases_active_by_customer), and the most recent of each
// product (by product_key). The products are walked one at a time on
// purchases_by_customer_product (a loose index scan: the next product id after
// the last, then that product's most recent purchase), so a customer's
// thousand consumables of three products cost a few index probes, not a
// thousand rows. The last column says whether the customer has any grant, so
// the grants are read only then (most customers have none): a lookup is one
// statement, one round trip.
inline constexpr std::string_view for_answer
  = "WITH RECURSIVE products (product_key) AS ("
    "SELECT MIN(product_key) FROM purchases WHERE app_id = :key_app_id"
    " AND user_identifier = :key_user AND environment = :key_environment"
    " UNION ALL SELECT (SELECT MIN(n.product_key) FROM purchases n WHERE n.app_id = :key_app_id"
    " AND n.user_identifier = :key_user AND n.environment = :key_environment"
    " AND n.product_key > products.product_key)"
    " FROM products WHERE products.product_key IS NOT NULL)"
    " SELECT {columns}, CASE WHEN EXISTS (SELECT 1 FROM entitlement_grants g"
    " WHERE g.app_id = :key_app_id AND g.user_identifier = :key_user"
    " AND g.environment = :key_environment) THEN 1 ELSE 0 END"
    " FROM purchases WHERE id IN ("
    "SELECT a.id FROM purchases a WHERE a.app_id = :key_app_id"
    " AND a.user_identifier = :key_user AND a.environment = :key_environment"
    " AND a.active_until > :key_now"
    " UNION ALL SELECT (SELECT l.id FROM purchases l WHERE l.app_id = :key_app_id"
    " AND l.user_identifier = :key_user AND l.environment = :key_environment"
    " AND l.product_key = products.product_key"
    " ORDER BY l.recency DESC, l.created_at DESC, l.id DESC LIMIT 1)"
    " FROM products WHERE products.product_key IS NOT NULL)"
    " ORDER BY created_at DESC, id DESC";

// The columns 013_customer_lookup.sql added, for purchases stored before it.
inline constexpr std::string_view set_lookup_columns
  = "UPDATE purchases SET active_until = :active_until, recency = :recency,"
    " product_key = :product_key WHERE id = :key_id";

// Period-end timers due at :key_now (purchases_by_next_change), oldest first;
// PostgreSQL skips rows another instance holds.
inline constexpr std::string_view due_postgresql
  = "SELECT {columns} FROM purchases WHERE next_change_at <= :key_now"
    " ORDER BY next_change_at LIMIT :key_limit FOR UPDATE SKIP LOCKED";
inline constexpr std::string_view due_sqlite
  = "SELECT {columns} FROM purchases WHERE next_change_at <= :key_now"
    " ORDER BY next_change_at LIMIT :key_limit";

} // namespace receiptd::db::sql::purchases
