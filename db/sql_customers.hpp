#pragma once
// customers and entitlement_grants (db/migrations/012_purchases.sql).

#include <array>
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

// Customer answers kept by receiptd (actors/customer_answers.hpp) are dropped
// when another instance writes what they show. PostgreSQL: every change to a row
// of purchases, entitlement_grants or store_a_app_transactions notifies
// `receiptd_customers` (notices alike in one transaction are delivered once, at
// its commit), which each instance listens on (db/change_listener.hpp). Installed
// when missing (db::install_customer_change_triggers), like the auth revision's
// triggers; SQLite has no such channel (and no answers are kept there).
namespace receiptd::db::sql::customer_changes {

inline constexpr const char* listen = "LISTEN receiptd_customers";
inline constexpr const char* ping = "SELECT 1";

// Per row (a statement that changes no row, as most upkeep sweeps, notifies
// nobody), and TRUNCATE per statement.
inline constexpr std::array<std::string_view, 7> install_postgresql{
  "CREATE OR REPLACE FUNCTION receiptd_customers_changed() RETURNS trigger LANGUAGE plpgsql"
  " AS $$ BEGIN PERFORM pg_notify('receiptd_customers', ''); RETURN NULL; END $$",
  "CREATE OR REPLACE TRIGGER receiptd_customers_changed"
  " AFTER INSERT OR UPDATE OR DELETE ON purchases"
  " FOR EACH ROW EXECUTE FUNCTION receiptd_customers_changed()",
  "CREATE OR REPLACE TRIGGER receiptd_customers_truncated AFTER TRUNCATE ON purchases"
  " FOR EACH STATEMENT EXECUTE FUNCTION receiptd_customers_changed()",
  "CREATE OR REPLACE TRIGGER receiptd_customers_changed"
  " AFTER INSERT OR UPDATE OR DELETE ON entitlement_grants"
  " FOR EACH ROW EXECUTE FUNCTION receiptd_customers_changed()",
  "CREATE OR REPLACE TRIGGER receiptd_customers_truncated AFTER TRUNCATE ON entitlement_grants"
  " FOR EACH STATEMENT EXECUTE FUNCTION receiptd_customers_changed()",
  "CREATE OR REPLACE TRIGGER receiptd_customers_changed"
  " AFTER INSERT OR UPDATE OR DELETE ON store_a_app_transactions"
  " FOR EACH ROW EXECUTE FUNCTION receiptd_customers_changed()",
  "CREATE OR REPLACE TRIGGER receiptd_customers_truncated"
  " AFTER TRUNCATE ON store_a_app_transactions"
  " FOR EACH STATEMENT EXECUTE FUNCTION receiptd_customers_changed()",
};
inline constexpr std::string_view count_postgresql
  = "SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
    " WHERE t.tgname IN ('receiptd_customers_changed', 'receiptd_customers_truncated')"
    " AND c.relname IN ('purchases', 'entitlement_grants', 'store_a_app_transactions')"
    " AND pg_table_is_visible(c.oid)";
inline constexpr long long triggers_postgresql = 6;

} // namespace receiptd::db::sql::customer_changes
