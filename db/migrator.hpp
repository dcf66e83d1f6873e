#pragma once
// Applies the embedded migrations (db/migrations.hpp) that the database lacks.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/connection.hpp"

namespace receiptd::db {

// In one write transaction (DDL is transactional on both SQLite and PostgreSQL):
// takes the migration lock, applies every missing migration in version order and
// records each in schema_migrations. Returns how many it applied; throws on failure,
// leaving the schema as it was. A stored migration whose name differs from the
// embedded one of the same version is an error (a renamed or reordered file).
int apply_migrations(connection& c);

// Schema written per dialect beside the migrations (triggers): when
// `count_query` finds fewer than `expected`, runs `statements` in one write
// transaction, under the migration lock on PostgreSQL (several processes may
// start at once). The common case, all present, takes no write lock.
void install_when_missing(connection& c, std::string_view count_query, long long expected,
                          std::span<const std::string_view> statements);

// The statements of a migration text: split at ';' outside quotes and comments;
// comment-only and empty statements are dropped.
std::vector<std::string> split_sql_statements(std::string_view text);

} // namespace receiptd::db
