#pragma once
// Statements the product never runs, for tests that must break the database on
// purpose (a failing constraint, a trigger): SOCI directly, outside db::database.

#include <memory>
#include <string>

namespace soci {
class session;
}

namespace receiptd::test {

// Runs `sql` on the database at the SOCI `url`; throws std::runtime_error on failure.
void execute_sql(const std::string& url, const std::string& sql);

// The one integer `sql` selects (a count) on the database at `url`; throws
// std::runtime_error on failure.
long long query_number(const std::string& url, const std::string& sql);

// A transaction that ran `sql` (e.g. a LOCK TABLE) on a session of its own, held
// open until release() or destruction, which roll it back.
class held_transaction {
public:
  held_transaction(const std::string& url, const std::string& sql);
  ~held_transaction();
  void release();

private:
  std::unique_ptr<soci::session> session_;
};

} // namespace receiptd::test
