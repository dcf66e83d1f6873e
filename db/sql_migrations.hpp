#pragma once
// The migrator's own bookkeeping (the migrations themselves are db/migrations/*.sql).

#include <string_view>

namespace receiptd::db::sql::migrations {

// Created before anything else, by the migrator, so that it can read what is applied.
inline constexpr std::string_view create_table = "CREATE TABLE IF NOT EXISTS schema_migrations ("
                                                 " version INTEGER PRIMARY KEY,"
                                                 " name TEXT NOT NULL,"
                                                 " applied_at BIGINT NOT NULL)";

inline constexpr std::string_view list = "SELECT version, name FROM schema_migrations";

inline constexpr std::string_view record
  = "INSERT INTO schema_migrations (version, name, applied_at)"
    " VALUES (:version, :name, :applied_at)";

// PostgreSQL: processes starting at once queue on this transaction-scoped lock (taken
// before CREATE TABLE IF NOT EXISTS, which itself races on the catalog). The key is
// "receiptd" in ASCII. SQLite: BEGIN IMMEDIATE serializes them.
inline constexpr std::string_view lock_postgresql = "SELECT pg_advisory_xact_lock(:lock_key)";
inline constexpr long long lock_key = 0x7265636569707464;

} // namespace receiptd::db::sql::migrations
