#include "tests/support/db/test_db.hpp"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <random>
#include <stdexcept>
#include <vector>

#include <unistd.h>

#include "db/admin.hpp"

namespace receiptd::test {

namespace {

namespace fs = std::filesystem;

// What this process made, removed at exit (a function-local static: constructed after
// SOCI's own statics, so destroyed before them).
class cleanup {
public:
  static cleanup& instance() {
    static cleanup c;
    return c;
  }
  void add_directory(fs::path p) {
    std::lock_guard lock(mutex_);
    directories_.push_back(std::move(p));
  }
  void add_database(std::string server_url, std::string name) {
    std::lock_guard lock(mutex_);
    databases_.emplace_back(std::move(server_url), std::move(name));
  }
  ~cleanup() {
    if (std::getenv("RECEIPTD_TEST_KEEP_DB"))
      return;
    std::error_code ignored;
    for (auto& d : directories_)
      fs::remove_all(d, ignored);
    for (auto& [url, name] : databases_)
      (void)db::drop_postgresql_database(url, name);
  }

private:
  std::mutex mutex_;
  std::vector<fs::path> directories_;
  std::vector<std::pair<std::string, std::string>> databases_;
};

std::string unique_suffix() {
  static std::atomic<int> counter{0};
  static const unsigned salt = std::random_device{}();
  return std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_"
    + std::to_string(salt % 100000);
}

std::string fresh_sqlite_url() {
  auto base = fs::temp_directory_path() / ("receiptd-test-" + unique_suffix());
  fs::create_directories(base);
  cleanup::instance().add_directory(base);
  return "sqlite3://db=" + (base / "receiptd.db").string() + " timeout=10";
}

std::string fresh_postgresql_url() {
  const char* server = std::getenv("RECEIPTD_TEST_PG_URL");
  if (!server || !*server)
    throw std::runtime_error(
      "RECEIPTD_TEST_PG_URL is not set: the PostgreSQL tests need a server. Start one with "
      "`scripts/test-postgres start DIR` and export the URL it prints, e.g. "
      "RECEIPTD_TEST_PG_URL='postgresql://host=127.0.0.1 port=P dbname=postgres user=receiptd'");
  auto name = "receiptd_test_" + unique_suffix();
  auto url = db::create_postgresql_database(server, name);
  if (!url)
    throw std::runtime_error("cannot create a test database on RECEIPTD_TEST_PG_URL: "
                             + url.err().message());
  cleanup::instance().add_database(server, name);
  return url.value();
}

} // namespace

std::string fresh_database_url(db::dialect kind) {
  return kind == db::dialect::sqlite ? fresh_sqlite_url() : fresh_postgresql_url();
}

db::dialect dialect_under_test() {
  const char* name = std::getenv("RECEIPTD_TEST_DB");
  std::string value = name ? name : "sqlite";
  if (value == "sqlite")
    return db::dialect::sqlite;
  if (value == "postgresql")
    return db::dialect::postgresql;
  throw std::runtime_error("RECEIPTD_TEST_DB must be sqlite or postgresql, not '" + value + "'");
}

} // namespace receiptd::test
