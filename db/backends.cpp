#include "db/backends.hpp"

#include <mutex>

#include <soci/postgresql/soci-postgresql.h>
#include <soci/sqlite3/soci-sqlite3.h>

namespace receiptd::db {

void register_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    soci::register_factory_postgresql();
    soci::register_factory_sqlite3();
  });
}

} // namespace receiptd::db
