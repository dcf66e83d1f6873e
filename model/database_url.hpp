#pragma once
// db.url: the database receiptd and receiptctl connect to. SOCI takes
// "sqlite3://db=FILE timeout=10" and "postgresql://host=… port=… dbname=… user=…"
// (libpq's keyword/value form, PostgreSQL docs §34.1.1.1). PostgreSQL users also
// write URIs, postgresql://user:password@host:5432/dbname?sslmode=require (§34.1.1.2),
// which SOCI cannot open: it hands libpq what follows "postgresql://", and libpq
// reads a URI only whole. A URI is turned into the keyword form here. Pure.
//
// A URL may hold a password: nothing here puts a URL's text in an error message,
// and redacted_database_url is the only way a URL is printed.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.hpp"

namespace receiptd::model {

// One key=value parameter of a connection string: where its value's text is
// (quotes included; offsets into the text parsed) and the value itself (quotes
// and escapes removed).
struct connection_parameter {
  std::string_view key;
  std::size_t value_begin = 0, value_end = 0;
  char quote = 0; // '"', '\'' or 0
  std::string value;
};

// The parameters of a connection string (what follows "scheme://"), as libpq
// reads them (`libpq`: keys and values separated by whitespace, blanks allowed
// around '=', a value in '…' or bare, a backslash escaping the next character
// either way; fe-connect.c conninfo_parse) or as SOCI's SQLite backend does
// ("…" with no escapes, one space between pairs); nullopt when `text` is not
// that shape (libpq would refuse it with the offending text in its message).
std::optional<std::vector<connection_parameter>> parse_connection_parameters(std::string_view text,
                                                                             bool libpq);

// `value` as libpq reads it back: bare when it can be, else in '…' with a
// backslash before each ' and backslash.
std::string libpq_quoted(std::string_view value);

// Whether `url` is a PostgreSQL URI (postgres://…, or postgresql:// followed by
// something that is not keyword=value pairs) rather than SOCI's keyword form.
bool is_postgresql_uri(std::string_view url);

// The URL SOCI can open. A PostgreSQL URI becomes "postgresql://" followed by
// host and port (comma lists for a list of hosts, as libpq makes them), user,
// password and dbname, then the query's parameters in their order, each
// percent-decoded (ssl=true is sslmode=require, as libpq reads it) and quoted
// for libpq. A postgresql:// keyword form must parse as libpq reads it. Other
// URLs are returned as they are. Errors (errc::invalid_request) say what is wrong
// without repeating any of the URL.
result<std::string> keyword_database_url(std::string_view url);

// The URL safe to print: password= and sslpassword= values (a URI's password
// too) replaced by ***. Parameters that do not parse, and the rest of a URL of
// an unknown scheme, are not printed at all ("scheme://…").
std::string redacted_database_url(std::string_view url);

} // namespace receiptd::model
