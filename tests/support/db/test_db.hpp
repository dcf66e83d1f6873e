#pragma once
// Fresh throwaway databases for the integration and functional tests.

#include <string>

#include "db/database.hpp"

namespace receiptd::test {

// The URL of a new, empty database (no schema: call migrate()).
//  - sqlite: a new file in a new temporary directory.
//  - postgresql: CREATE DATABASE receiptd_test_… on the server that the SOCI URL in
//    env RECEIPTD_TEST_PG_URL points at (its user needs CREATEDB), e.g. the one
//    scripts/test-postgres start prints.
// Throws std::runtime_error with the reason when that is impossible (RECEIPTD_TEST_PG_URL
// unset included: a PostgreSQL run must fail, not pass without a database).
// What it creates is removed at process exit unless env RECEIPTD_TEST_KEEP_DB is set.
std::string fresh_database_url(db::dialect kind);

// The dialect selected by env RECEIPTD_TEST_DB ("sqlite", the default, or
// "postgresql"); throws on any other value.
db::dialect dialect_under_test();

} // namespace receiptd::test
