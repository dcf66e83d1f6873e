#pragma once
// Statements the product never runs, for tests that must break the database on
// purpose (a failing constraint, a trigger): SOCI directly, outside db::database.

#include <string>

namespace receiptd::test {

// Runs `sql` on the database at the SOCI `url`; throws std::runtime_error on failure.
void execute_sql(const std::string& url, const std::string& sql);

} // namespace receiptd::test
