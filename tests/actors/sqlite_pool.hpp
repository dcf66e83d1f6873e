#pragma once
// What the tests of the persistence pool on a real SQLite file share: the file of
// a URL, a write lock held by another connection, an app, a pending order.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "db/database.hpp"
#include "model/records.hpp"
#include "tests/support/time/manual_time.hpp"

namespace receiptd::test {

namespace fs = std::filesystem;

// "sqlite3://db=/tmp/…/receiptd.db timeout=10" → the file.
inline fs::path sqlite_file(const std::string& url) {
  auto from = url.find("db=") + 3;
  return url.substr(from, url.find(' ', from) - from);
}

// SQLite's write lock, held by another connection until release().
class write_lock {
public:
  explicit write_lock(const fs::path& file) {
    REQUIRE(sqlite3_open(file.c_str(), &db_) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  ~write_lock() { release(); }
  void release() {
    if (db_)
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
    db_ = nullptr;
  }

private:
  sqlite3* db_ = nullptr;
};

inline model::app create_app(const std::string& url) {
  auto d = db::database::open(url);
  REQUIRE(d);
  REQUIRE((*d)->migrate());
  model::app a;
  a.name = "game";
  a.package_name = "com.example.game";
  auto created = (*d)->create_app(a);
  REQUIRE(created);
  return *created;
}

inline model::purchase_order_record pending_order(const std::string& app_id, int i) {
  model::purchase_order_record r;
  r.app_id = app_id;
  r.is_legacy = true;
  r.package_name = "com.example.game";
  r.purchase_token = "purchase-" + std::to_string(i);
  r.purchase.product_id = "gems_100";
  r.state = model::validation_state::pending;
  r.created_at = manual_time::start_ms;
  r.updated_at = manual_time::start_ms;
  return r;
}

} // namespace receiptd::test
