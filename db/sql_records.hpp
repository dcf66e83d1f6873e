#pragma once
// The records' statements. {columns}, {parameters} and {assignments} are rendered
// from a column group of db/record_rows.hpp (see db::render); :key_* parameters are
// bound to the repository's lookup keys.

#include <string_view>

namespace receiptd::db::sql {

namespace purchase_orders {

inline constexpr std::string_view find_by_id
  = "SELECT {columns} FROM store_b_purchase_orders WHERE id = :key_id";

// The re-upload lookup inside save_purchase_order's transaction. PostgreSQL locks the
// row: concurrent re-uploads of one proof then merge one after the other (no lost
// echo update), and the lock order record → job matches complete_job's. SQLite's
// BEGIN IMMEDIATE already serializes every writer.
inline constexpr std::string_view find_by_key_postgresql
  = "SELECT {columns} FROM store_b_purchase_orders"
    " WHERE app_id = :key_app_id AND purchase_token = :key_purchase_token FOR UPDATE";
inline constexpr std::string_view find_by_key_sqlite
  = "SELECT {columns} FROM store_b_purchase_orders"
    " WHERE app_id = :key_app_id AND purchase_token = :key_purchase_token";

// A concurrent first upload of the same proof may have inserted it since our lookup:
// then nothing is inserted (0 rows; PostgreSQL waits for the other transaction to end
// to know) and the caller merges with that record instead.
inline constexpr std::string_view insert
  = "INSERT INTO store_b_purchase_orders ({columns}) VALUES ({parameters})"
    " ON CONFLICT (app_id, purchase_token) DO NOTHING";

inline constexpr std::string_view update
  = "UPDATE store_b_purchase_orders SET {assignments} WHERE id = :key_id";

// complete_job locks the record before it touches the job, as save_* does.
inline constexpr std::string_view lock_postgresql
  = "SELECT id FROM store_b_purchase_orders WHERE id = :key_id FOR UPDATE";
inline constexpr std::string_view lock_sqlite
  = "SELECT id FROM store_b_purchase_orders WHERE id = :key_id";

} // namespace purchase_orders

namespace receipts {

inline constexpr std::string_view find_by_id
  = "SELECT {columns} FROM store_a_receipts WHERE id = :key_id";

// See purchase_orders::find_by_key_postgresql.
inline constexpr std::string_view find_by_key_postgresql
  = "SELECT {columns} FROM store_a_receipts"
    " WHERE app_id = :key_app_id AND receipt_hash = :key_receipt_hash FOR UPDATE";
inline constexpr std::string_view find_by_key_sqlite
  = "SELECT {columns} FROM store_a_receipts"
    " WHERE app_id = :key_app_id AND receipt_hash = :key_receipt_hash";

// See purchase_orders::insert.
inline constexpr std::string_view insert
  = "INSERT INTO store_a_receipts ({columns}) VALUES ({parameters})"
    " ON CONFLICT (app_id, receipt_hash) DO NOTHING";

inline constexpr std::string_view update
  = "UPDATE store_a_receipts SET {assignments} WHERE id = :key_id";

inline constexpr std::string_view lock_postgresql
  = "SELECT id FROM store_a_receipts WHERE id = :key_id FOR UPDATE";
inline constexpr std::string_view lock_sqlite
  = "SELECT id FROM store_a_receipts WHERE id = :key_id";

} // namespace receipts

namespace in_app_purchases {

inline constexpr std::string_view find_by_receipt
  = "SELECT {columns} FROM store_a_in_app_purchases"
    " WHERE receipt_id = :key_receipt_id ORDER BY ordinal";

inline constexpr std::string_view insert
  = "INSERT INTO store_a_in_app_purchases ({columns}) VALUES ({parameters})";

// A receipt's purchases are replaced as a whole.
inline constexpr std::string_view delete_by_receipt
  = "DELETE FROM store_a_in_app_purchases WHERE receipt_id = :key_receipt_id";

} // namespace in_app_purchases

} // namespace receiptd::db::sql
