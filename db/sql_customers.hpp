#pragma once
// customers and entitlement_grants (db/migrations/012_purchases.sql).

#include <string_view>

namespace receiptd::db::sql::customers {

// A customer's row, made when it is first touched; then locked (PostgreSQL; SQLite's
// BEGIN IMMEDIATE serializes writers) so that its events are written one
// transaction at a time.
inline constexpr std::string_view ensure
  = "INSERT INTO customers (app_id, environment, user_identifier, active_entitlements,"
    " updated_at) VALUES (:app_id, :environment, :user_identifier, '', :now)"
    " ON CONFLICT (app_id, environment, user_identifier) DO NOTHING";
inline constexpr std::string_view lock_postgresql
  = "SELECT active_entitlements FROM customers WHERE app_id = :app_id"
    " AND environment = :environment AND user_identifier = :user_identifier FOR UPDATE";
inline constexpr std::string_view lock_sqlite
  = "SELECT active_entitlements FROM customers WHERE app_id = :app_id"
    " AND environment = :environment AND user_identifier = :user_identifier";
inline constexpr std::string_view store
  = "UPDATE customers SET active_entitlements = :active, updated_at = :now"
    " WHERE app_id = :app_id AND environment = :environment AND user_identifier = :user_identifier";

} // namespace receiptd::db::sql::customers

namespace receiptd::db::sql::grants {

inline constexpr std::string_view insert
  = "INSERT INTO entitlement_grants ({columns}) VALUES ({parameters})";
inline constexpr std::string_view of_customer
  = "SELECT {columns} FROM entitlement_grants WHERE app_id = :key_app_id"
    " AND user_identifier = :key_user AND environment = :key_environment ORDER BY created_at, id";
inline constexpr std::string_view remove
  = "DELETE FROM entitlement_grants WHERE id = :key_id AND app_id = :key_app_id"
    " AND user_identifier = :key_user AND entitlement = :key_entitlement";
// Grants whose end has come and was not announced yet, oldest first.
inline constexpr std::string_view ended
  = "SELECT {columns} FROM entitlement_grants WHERE expiry_announced = 0"
    " AND expires_at <= :key_now ORDER BY expires_at LIMIT :key_limit";
inline constexpr std::string_view announced
  = "UPDATE entitlement_grants SET expiry_announced = 1 WHERE id = :key_id";

} // namespace receiptd::db::sql::grants
