#pragma once
// Server-level operations that act on whole databases rather than on receiptd's
// schema: throwaway PostgreSQL databases for tests and demos.

#include <string>

#include "db/failure.hpp"

namespace receiptd::db {

// Creates database `name` (lower-case letters, digits and '_' only: an identifier
// cannot be a bound parameter) on the server `server_url` points at, connecting as
// its user (who needs CREATEDB). Returns server_url with dbname=name.
model::result<std::string> create_postgresql_database(const std::string& server_url,
                                                      const std::string& name);

// Drops database `name`, disconnecting any session still using it (FORCE, PG 13+).
model::result<bool> drop_postgresql_database(const std::string& server_url,
                                             const std::string& name);

// Ends every session connected to database `name` (as a server restart would) and
// waits up to 5 s for them to be gone; returns how many it ended. Needs superuser
// or the sessions' own role.
model::result<int> terminate_postgresql_sessions(const std::string& server_url,
                                                 const std::string& name);

} // namespace receiptd::db
