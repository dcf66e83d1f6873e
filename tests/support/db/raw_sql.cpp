#include "tests/support/db/raw_sql.hpp"

#include <stdexcept>

#include <soci/soci.h>

#include "db/backends.hpp"

namespace receiptd::test {

void execute_sql(const std::string& url, const std::string& sql) {
  db::register_backends();
  try {
    soci::session s(url);
    s << sql;
  } catch (const std::exception& e) {
    throw std::runtime_error("execute_sql: " + std::string(e.what()));
  }
}

} // namespace receiptd::test
