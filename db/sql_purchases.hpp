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
// (created_at, id) — the customer answer and its paged listing. One index range
// (purchases_by_customer).
inline constexpr std::string_view by_customer
  = "SELECT {columns} FROM purchases WHERE app_id = :key_app_id"
    " AND user_identifier = :key_user AND environment = :key_environment"
    " AND (created_at < :key_before OR (created_at = :key_before AND id < :key_before_id))"
    " ORDER BY created_at DESC, id DESC LIMIT :key_limit";

// Period-end timers due at :key_now (purchases_by_next_change), oldest first;
// PostgreSQL skips rows another instance holds.
inline constexpr std::string_view due_postgresql
  = "SELECT {columns} FROM purchases WHERE next_change_at <= :key_now"
    " ORDER BY next_change_at LIMIT :key_limit FOR UPDATE SKIP LOCKED";
inline constexpr std::string_view due_sqlite
  = "SELECT {columns} FROM purchases WHERE next_change_at <= :key_now"
    " ORDER BY next_change_at LIMIT :key_limit";

} // namespace receiptd::db::sql::purchases
