#pragma once
// Apps and access tokens. {columns} etc. are rendered from app_row / token_row
// (db/app_repository.hpp); :key_* parameters are the lookup keys.

#include <string_view>

namespace receiptd::db::sql::apps {

inline constexpr std::string_view insert = "INSERT INTO apps ({columns}) VALUES ({parameters})";
inline constexpr std::string_view update = "UPDATE apps SET {assignments} WHERE id = :key_id";
inline constexpr std::string_view list = "SELECT {columns} FROM apps ORDER BY name, id";
inline constexpr std::string_view find_by_id = "SELECT {columns} FROM apps WHERE id = :key_id";
inline constexpr std::string_view find_by_name
  = "SELECT {columns} FROM apps WHERE name = :key_name";

// The supervisor's per-request lookup (cached above the database). token_hash is
// unique and indexed: the lookup compares hashes of random tokens, so its timing
// tells an attacker nothing about a valid token.
inline constexpr std::string_view find_by_token_hash
  = "SELECT {columns} FROM apps WHERE id ="
    " (SELECT app_id FROM access_tokens"
    "  WHERE token_hash = :key_token_hash AND revoked_at IS NULL)";

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
