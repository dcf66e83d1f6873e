#include "cmd/startup.hpp"

#include "model/clock.hpp"

#include "db/redact.hpp"

#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <iostream>

namespace receiptd::cmd {

namespace {

// "sqlite3://db=var/receiptd.db timeout=10" → "var/receiptd.db"
std::string sqlite_path(const std::string& url) {
  auto pos = url.find("db=");
  if (url.rfind("sqlite3://", 0) != 0 || pos == std::string::npos)
    return {};
  auto end = url.find(' ', pos);
  return url.substr(pos + 3, end == std::string::npos ? std::string::npos : end - pos - 3);
}

} // namespace

std::unique_ptr<db::database> open_database(const std::string& url, const char* program) {
  if (auto path = sqlite_path(url); !path.empty()) {
    auto dir = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!dir.empty())
      std::filesystem::create_directories(dir, ec);
  }
  auto opened = db::database::open(url);
  if (!opened) {
    std::cerr << program << ": cannot open the database (db.url = " << db::redacted_url(url)
              << "): " << opened.err().message() << "\n";
    return nullptr;
  }
  auto db = std::move(opened).value();
  auto migrated = db->migrate();
  if (!migrated) {
    std::cerr << program << ": cannot migrate the database: " << migrated.err().message() << "\n";
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
