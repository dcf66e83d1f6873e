#pragma once
// Server-level statements (db/admin.hpp). Database names are identifiers, which
// cannot be bound: admin.cpp admits only [a-z0-9_] names before splicing them in.

#include <string_view>

namespace receiptd::db::sql::admin {

inline constexpr std::string_view create_database = "CREATE DATABASE ";
inline constexpr std::string_view drop_database_prefix = "DROP DATABASE IF EXISTS ";
inline constexpr std::string_view drop_database_suffix = " WITH (FORCE)";

inline constexpr std::string_view terminate_sessions
  = "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity"
    " WHERE datname = :name AND pid <> pg_backend_pid()";

} // namespace receiptd::db::sql::admin
