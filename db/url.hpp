#pragma once
// SOCI connection strings: "sqlite3://db=/path.db timeout=10",
// "postgresql://host=… port=… dbname=… user=…" (key=value pairs, read the way the
// database reads them: model/database_url.hpp). A PostgreSQL URI becomes this form
// before it gets here (model::keyword_database_url).

#include <optional>
#include <string>
#include <string_view>

#include "db/database.hpp"

namespace receiptd::db {

// The dialect a URL's backend prefix names; nullopt for any other backend.
std::optional<dialect> dialect_of(std::string_view url);

// The value of `key` in the URL's parameters (unquoted; the last one when it is
// named twice), if present; nullopt too when the parameters do not parse.
std::optional<std::string> url_parameter(std::string_view url, std::string_view key);

// The URL with `key=value` set (quoted for libpq when it needs to be): replaces
// an existing value or appends the pair.
std::string with_url_parameter(std::string_view url, std::string_view key, std::string_view value);

// The URL receiptd really connects with: SQLite always gets a busy timeout
// (timeout=10 when none is given; without one concurrent sessions fail at once
// with "database is locked"); PostgreSQL gets connect_timeout=10 when none is given,
// so a server that does not answer cannot block a persistence worker for minutes.
std::string with_connection_defaults(std::string_view url);

} // namespace receiptd::db
