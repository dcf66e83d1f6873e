// The persistence pool's group commit, against a real SQLite file. Its workers
// are detached actors with real sessions, which the test coordinator does not
// run: this test uses a threaded actor system and waits on replies with a
// deadline (request timeouts), never a sleep. The single worker is kept busy by
// the test holding SQLite's write lock, so the saves behind it must queue.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "actors/persistence.hpp"
#include "fixture.hpp"
#include "tests/support/db/test_db.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;

namespace {

namespace fs = std::filesystem;

// "sqlite3://db=/tmp/…/receiptd.db timeout=10" → the file.
fs::path sqlite_file(const std::string& url) {
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

model::app create_app(const std::string& url) {
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

model::purchase_order_record pending_order(const std::string& app_id, int i) {
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

// The outcome of every "save" span of the persistence workers, by trace id.
std::map<std::string, std::string> save_outcomes(const fs::path& trace_file) {
  std::map<std::string, std::string> out;
  std::ifstream in(trace_file);
  for (std::string line; std::getline(in, line);) {
    auto span = boost::json::parse(line);
    if (span.at("actor") == "persistence" && span.at("message") == "save")
      out[std::string(span.at("trace_id").as_string())]
        = std::string(span.at("outcome").as_string());
  }
  return out;
}

} // namespace

TEST_CASE("saves sent while the single worker is busy leave as one batch",
          "[actors][persistence]") {
  auto url = fresh_database_url(db::dialect::sqlite);
  auto app = create_app(url);
  auto trace_file = sqlite_file(url).parent_path() / "trace.jsonl";
  config::trace_settings ts;
  ts.file = trace_file.string();
  tracer trace(ts);
  constexpr int queued = 5;
  {
    write_lock lock(sqlite_file(url)); // the worker's first save waits on it (busy timeout 10 s)
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    // One worker; it and the saves waiting for it make at most 1 + queued.
    auto pool = spawn_persistence_pool(sys, {url, 1, 1 + queued}, trace, model::system_time());
    caf::scoped_actor self{sys};
    auto save = [&](int i) {
      return self->request(pool, std::chrono::seconds(30), save_atom_v,
                           trace_context{"trace-" + std::to_string(i), 0}, pending_order(app.id, i),
                           manual_time::start_ms);
    };
    std::vector<decltype(save(0))> saves;
    for (int i = 0; i <= queued; ++i)
      saves.push_back(save(i));
    // One more is refused at once: its answer also says the pool has taken every
    // save sent before it (one sender's messages arrive in order).
    save(queued + 1)
      .receive(
        [](model::purchase_order_record&) { FAIL("a save beyond max-queued was accepted"); },
        [](caf::error& e) { CHECK(caf::to_string(e).find("overloaded") != std::string::npos); });
    lock.release();
    std::vector<std::string> ids;
    for (auto& h : saves)
      h.receive([&](model::purchase_order_record& r) { ids.push_back(r.id); },
                [](caf::error& e) { FAIL(caf::to_string(e)); });
    CHECK(ids.size() == queued + 1);
    caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
  }
  trace.flush();
  auto outcomes = save_outcomes(trace_file);
  REQUIRE(outcomes.size() == queued + 1);
  CHECK(outcomes["trace-0"] == "ok (batch of 1)");                // alone: sent at once
  auto together = "ok (batch of " + std::to_string(queued) + ")"; // waited, then left at once
  for (int i = 1; i <= queued; ++i)
    CHECK(outcomes["trace-" + std::to_string(i)] == together);
}
