#include "cmd/startup.hpp"

#include "model/clock.hpp"
#include "model/config_paths.hpp"

#include "db/redact.hpp"

#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <iostream>

namespace receiptd::cmd {

std::unique_ptr<db::database> open_database(const std::string& url, const char* program,
                                            bool may_create) {
  auto fail
    = [program](const std::string& problem) { std::cerr << program << ": " << problem << "\n"; };
  if (auto path = model::sqlite_database_file(url); path && !may_create) {
    std::error_code ec;
    if (!std::filesystem::exists(*path, ec)) {
      fail("no database at " + *path + " (db.url = " + db::redacted_url(url)
           + "): receiptd makes it when it first starts; is this receiptd's configuration?");
      return nullptr;
    }
  }
  return open_database(url, fail);
}

std::unique_ptr<db::database> open_database(const std::string& url,
                                            const std::function<void(const std::string&)>& fail) {
  if (auto path = model::sqlite_database_file(url)) {
    auto dir = std::filesystem::path(*path).parent_path();
    std::error_code ec;
    if (!dir.empty())
      std::filesystem::create_directories(dir, ec);
  }
  auto opened = db::database::open(url);
  if (!opened) {
    fail("cannot open the database (db.url = " + db::redacted_url(url)
         + "): " + opened.err().message());
    return nullptr;
  }
  auto db = std::move(opened).value();
  auto migrated = db->migrate();
  if (!migrated) {
    fail("cannot migrate the database: " + migrated.err().message());
    return nullptr;
  }
  return db;
}

void raise_file_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

model::unix_ms now_ms() {
  return model::system_time().now_ms();
}

} // namespace receiptd::cmd
