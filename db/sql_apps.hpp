#pragma once
// Apps and access tokens. {columns} etc. are rendered from app_row / token_row
// (db/app_repository.hpp); :key_* parameters are the lookup keys.

#include <array>
#include <string_view>

namespace receiptd::db::sql::apps {

inline constexpr std::string_view insert = "INSERT INTO apps ({columns}) VALUES ({parameters})";
// The SELECTs below list app_row::read_columns: the stored columns, then this
// computed one (model::app::has_webhooks), an integer 0/1 on both
// databases. webhook_endpoints is indexed by app_id.
inline constexpr const char* has_webhooks_column
  = "CASE WHEN EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.app_id = apps.id)"
    " THEN 1 ELSE 0 END";
inline constexpr std::string_view update = "UPDATE apps SET {assignments} WHERE id = :key_id";
inline constexpr std::string_view list = "SELECT {columns} FROM apps ORDER BY name, id";
inline constexpr std::string_view find_by_id = "SELECT {columns} FROM apps WHERE id = :key_id";
inline constexpr std::string_view find_by_name
  = "SELECT {columns} FROM apps WHERE name = :key_name";

// The supervisor's per-request lookup (cached above the database): the app's
// columns, then the token's kind. token_hash is unique and indexed: the lookup
// compares hashes of random tokens, so its timing tells an attacker nothing about
// a valid token. The token is a derived table whose columns clash with none of
// apps' (the app's columns are listed unqualified).
inline constexpr std::string_view find_by_token_hash
  = "SELECT {columns}, t.token_kind FROM apps JOIN"
    " (SELECT app_id AS token_app_id, kind AS token_kind FROM access_tokens"
    "  WHERE token_hash = :key_token_hash AND revoked_at IS NULL) t"
    " ON apps.id = t.token_app_id";

} // namespace receiptd::db::sql::apps

namespace receiptd::db::sql::tokens {

inline constexpr std::string_view insert
  = "INSERT INTO access_tokens ({columns}) VALUES ({parameters})";
inline constexpr std::string_view list
  = "SELECT {columns} FROM access_tokens WHERE app_id = :key_app_id ORDER BY created_at, id";

// revoke_token takes a token id or a token hash; the two never collide (a UUID has
// dashes, a hash is 64 hex digits). An already revoked token keeps its revoked_at.
inline constexpr std::string_view revoke
  = "UPDATE access_tokens SET revoked_at = :revoked_at"
    " WHERE (id = :key_id OR token_hash = :key_token_hash) AND revoked_at IS NULL";

} // namespace receiptd::db::sql::tokens

namespace receiptd::db::sql::auth_revision {

// The auth revision (db/migrations/003_auth_revision.sql): read with token lookups,
// in their snapshot, and on its own by the supervisor's revocation check.
inline constexpr std::string_view read = "SELECT revision FROM auth_revision WHERE id = 1";

// The triggers that bump it on every change to apps, access_tokens or
// webhook_endpoints (an app's has_webhooks), so that a change made by
// anyone (receiptctl, SQL by hand, another instance) is seen.
// Per dialect, installed when missing (db::install_auth_revision_triggers); each
// count query answers how many of them exist.

// SQLite: row-level triggers only, one event each.
inline constexpr std::array<std::string_view, 9> install_sqlite{
  "CREATE TRIGGER IF NOT EXISTS auth_revision_apps_insert AFTER INSERT ON apps"
  " BEGIN UPDATE auth_revision SET revision = revision + 1 WHERE id = 1; END",
  "CREATE TRIGGER IF NOT EXISTS auth_revision_apps_update AFTER UPDATE ON apps"
  " BEGIN UPDATE auth_revision SET revision = revision + 1 WHERE id = 1; END",
  "CREATE TRIGGER IF NOT EXISTS auth_revision_apps_delete AFTER DELETE ON apps"
  " BEGIN UPDATE auth_revision SET revision = revision + 1 WHERE id = 1; END",
  "CREATE TRIGGER IF NOT EXISTS auth_revision_tokens_insert AFTER INSERT ON access_tokens"
  " BEGIN UPDATE auth_revision SET revision = revision + 1 WHERE id = 1; END",
  "CREATE TRIGGER IF NOT EXISTS auth_revision_tokens_update AFTER UPDATE ON access_tokens"
  " BEGIN UPDATE auth_revision SET revision = revision + 1 WHERE id = 1; END",
  "CREATE TRIGGER IF NOT EXISTS auth_revision_tokens_delete AFTER DELETE ON access_tokens"
  " BEGIN UPDATE auth_revision SET revision = revision + 1 WHERE id = 1; END",
  "CREATE TRIGGER IF NOT EXISTS auth_revision_webhooks_insert AFTER INSERT ON webhook_endpoints"
  " BEGIN UPDATE auth_revision SET revision = revision + 1 WHERE id = 1; END",
  "CREATE TRIGGER IF NOT EXISTS auth_revision_webhooks_update AFTER UPDATE ON webhook_endpoints"
  " BEGIN UPDATE auth_revision SET revision = revision + 1 WHERE id = 1; END",
  "CREATE TRIGGER IF NOT EXISTS auth_revision_webhooks_delete AFTER DELETE ON webhook_endpoints"
  " BEGIN UPDATE auth_revision SET revision = revision + 1 WHERE id = 1; END",
};
inline constexpr std::string_view count_sqlite
  = "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"
    " AND tbl_name IN ('apps', 'access_tokens', 'webhook_endpoints')"
    " AND name GLOB 'auth_revision_*'";

// PostgreSQL: one statement-level trigger per table (a bulk change bumps it once),
// TRUNCATE included; each bump also notifies `receiptd_auth` (notices alike in one
// transaction are delivered once, at its commit), which the supervisor's token
// cache listens on while tokens are cached (actors/auth_notices.hpp).
inline constexpr const char* listen = "LISTEN receiptd_auth";
inline constexpr std::array<std::string_view, 4> install_postgresql{
  "CREATE OR REPLACE FUNCTION auth_revision_bump() RETURNS trigger LANGUAGE plpgsql AS $$"
  " BEGIN UPDATE auth_revision SET revision = revision + 1 WHERE id = 1;"
  " PERFORM pg_notify('receiptd_auth', ''); RETURN NULL; END $$",
  "CREATE OR REPLACE TRIGGER auth_revision_bump"
  " AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON apps"
  " FOR EACH STATEMENT EXECUTE FUNCTION auth_revision_bump()",
  "CREATE OR REPLACE TRIGGER auth_revision_bump"
  " AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON access_tokens"
  " FOR EACH STATEMENT EXECUTE FUNCTION auth_revision_bump()",
  "CREATE OR REPLACE TRIGGER auth_revision_bump"
  " AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON webhook_endpoints"
  " FOR EACH STATEMENT EXECUTE FUNCTION auth_revision_bump()",
};
// None while the function is one that does not notify (installed by an earlier
// version): then all are installed again.
inline constexpr std::string_view count_postgresql
  = "SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
    " WHERE t.tgname = 'auth_revision_bump'"
    " AND c.relname IN ('apps', 'access_tokens', 'webhook_endpoints')"
    " AND pg_table_is_visible(c.oid)"
    " AND EXISTS (SELECT 1 FROM pg_proc p WHERE p.proname = 'auth_revision_bump'"
    " AND pg_function_is_visible(p.oid) AND p.prosrc LIKE '%receiptd_auth%')";

// How many triggers each count query finds once they are all installed.
inline constexpr long long triggers_sqlite = 9;
inline constexpr long long triggers_postgresql = 3;

} // namespace receiptd::db::sql::auth_revision
