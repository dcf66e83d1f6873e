#pragma once
// Relative paths in the configuration: a path written in a config
// file means a place beside that file, wherever receiptd was started from, the
// way /etc/receiptd/receiptd.ini names "trust/apple-root-ca.pem". Pure: the
// caller chooses the base (config/options.cpp: the config file's folder for
// values from the file and for defaults, none for the command line).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace receiptd::model {

// `path` resolved against the folder `base`: absolute paths and the empty path
// (an optional file left unset) unchanged; a relative one joined to `base` and
// normalised lexically ("config/../var/x.db" → "var/x.db"), so ".." means the
// folder above the one the path was named in, as an operator reads it.
std::string resolve_config_path(const std::filesystem::path& base, std::string_view path);

// A SOCI database URL with the file paths among its parameters resolved the same
// way: SQLite's db= / dbname= (":memory:", "file:" URIs and the empty name
// unchanged) and libpq's sslrootcert=, sslcert=, sslkey=, sslcrl=, sslcrldir=,
// passfile= ("system" unchanged). Values may be quoted: "…" (SOCI's SQLite
// backend) or '…' with backslash escapes (libpq). A resolved value that needs
// quoting is quoted that way; one SOCI's SQLite form cannot hold (a blank and a
// '"': it has no escapes) stays as written. A URL whose parameters do not parse
// as key=value pairs is returned unchanged, for the database to refuse with its
// own words.
std::string resolve_database_url(const std::filesystem::path& base, std::string_view url);

// The file a sqlite3:// URL opens (its db= or dbname= value, unquoted); nullopt
// for other databases, in-memory and URI names, or no name.
std::optional<std::string> sqlite_database_file(std::string_view url);

} // namespace receiptd::model
