// The persistence pool's group commit, against a real SQLite file. Its workers
// are detached actors with real sessions, which the test coordinator does not
// run: this test uses a threaded actor system and waits on replies with a
// deadline (request timeouts), never a sleep. The single worker is kept busy by
// the test holding SQLite's write lock, so the saves behind it must queue.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "actors/customer_answers.hpp"
#include "actors/persistence.hpp"
#include "fixture.hpp"
#include "model/access_token.hpp"
#include "sqlite_pool.hpp"
#include "tests/support/db/test_db.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;

namespace {

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

TEST_CASE("a receipt of 2,000 purchases commits in a batch of its own: the small saves queued "
          "around it leave together first",
          "[actors][persistence]") {
  auto url = fresh_database_url(db::dialect::sqlite);
  auto app = create_app(url);
  auto trace_file = sqlite_file(url).parent_path() / "trace.jsonl";
  config::trace_settings ts;
  ts.file = trace_file.string();
  tracer trace(ts);
  model::receipt_record heavy;
  heavy.app_id = app.id;
  heavy.receipt_hash = std::string(64, 'a');
  heavy.receipt_data = std::string(1000000, 'M'); // about what 2,000 purchases take
  heavy.state = model::validation_state::pending;
  heavy.created_at = heavy.updated_at = manual_time::start_ms;
  for (int i = 0; i < 2000; ++i) {
    model::apple_in_app_purchase p;
    p.product_id = "product";
    p.transaction_id = p.original_transaction_id = std::to_string(1000000 + i);
    heavy.in_app_purchases.push_back(p);
  }
  constexpr int small = 5;
  {
    write_lock lock(sqlite_file(url)); // the worker's first save waits on it
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    auto pool = spawn_persistence_pool(sys, {url, 1, 16}, trace, model::system_time());
    caf::scoped_actor self{sys};
    auto save = [&](int i) {
      return self->request(pool, std::chrono::seconds(30), save_atom_v,
                           trace_context{"small-" + std::to_string(i), 0}, pending_order(app.id, i),
                           manual_time::start_ms);
    };
    auto first = save(0); // alone: it holds the worker until the lock goes
    auto before = save(1);
    auto receipt = self->request(pool, std::chrono::seconds(30), save_atom_v,
                                 trace_context{"heavy", 0}, heavy, manual_time::start_ms);
    std::vector<decltype(save(0))> after;
    for (int i = 2; i <= small; ++i)
      after.push_back(save(i));
    lock.release();
    auto failed = [](caf::error& e) { FAIL(caf::to_string(e)); };
    receipt.receive([](model::receipt_record&) {}, failed);
    after.push_back(std::move(first));
    after.push_back(std::move(before));
    for (auto& h : after)
      h.receive([](model::purchase_order_record&) {}, failed);
    caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
  }
  trace.flush();
  auto outcomes = save_outcomes(trace_file);
  REQUIRE(outcomes.size() == small + 2);
  // By count alone (256 a batch) the receipt and the five small saves were one
  // transaction of 2,006 rows, and each small upload waited for all of it.
  CHECK(outcomes["heavy"] == "ok (batch of 1)");
  auto together = "ok (batch of " + std::to_string(small) + ")";
  for (int i = 1; i <= small; ++i)
    CHECK(outcomes["small-" + std::to_string(i)] == together);
}

TEST_CASE("a claimed job whose record is gone is dropped, not leased again",
          "[actors][persistence]") {
  auto url = fresh_database_url(db::dialect::sqlite);
  auto app = create_app(url);
  std::string gone_id;
  {
    auto d = db::database::open(url);
    REQUIRE(d);
    for (int i = 0; i < 2; ++i) {
      auto saved = (*d)->save_purchase_order(pending_order(app.id, i), manual_time::start_ms);
      REQUIRE(saved);
      if (i == 0)
        gone_id = saved->record.id;
    }
    REQUIRE((*d)->list_jobs()->size() == 2);
  }
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(sqlite_file(url).c_str(), &raw) == SQLITE_OK);
  auto del = "DELETE FROM store_b_purchase_orders WHERE id = '" + gone_id + "'";
  CHECK(sqlite3_exec(raw, del.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);

  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto pool = spawn_persistence_pool(sys, {url, 1, 16}, tracer::off(), model::system_time());
  caf::scoped_actor self{sys};
  self
    ->request(pool, std::chrono::seconds(30), claim_atom_v, std::string("w1"), std::int64_t{60'000},
              std::int32_t{10})
    .receive(
      [&](claimed_jobs& jobs) {
        REQUIRE(jobs.size() == 1);
        CHECK(jobs[0].record);
        CHECK(jobs[0].job.record_id != gone_id);
      },
      [](caf::error& e) { FAIL(caf::to_string(e)); });
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
  auto d = db::database::open(url);
  REQUIRE(d);
  auto left = (*d)->list_jobs();
  REQUIRE(left);
  REQUIRE(left->size() == 1);
  CHECK(left->at(0).record_id != gone_id);
}

namespace {

// A receipt as large as an upload may make one (a 2 MiB receipt, 2,000 in-app
// purchases): reading it back for a GET takes a worker milliseconds.
std::string large_receipt(const std::string& url, const std::string& app_id) {
  auto d = db::database::open(url);
  REQUIRE(d);
  model::receipt_record r;
  r.app_id = app_id;
  r.receipt_hash = std::string(64, 'a');
  r.receipt_data = std::string(2 << 20, 'A');
  for (int i = 0; i < 2000; ++i) {
    model::apple_in_app_purchase p;
    p.product_id = "product";
    p.transaction_id = p.original_transaction_id = std::to_string(1'000'000 + i);
    r.in_app_purchases.push_back(p);
  }
  r.state = model::validation_state::validated;
  r.created_at = r.updated_at = manual_time::start_ms;
  auto saved = (*d)->save_receipt(r, manual_time::start_ms);
  REQUIRE(saved);
  return saved->record.id;
}

// Keeps `width` GETs of record `id` out at the pool at all times, each asked again
// as soon as it is answered, until stopped: a flood of requests that are neither
// token lookups nor saves, each holding a worker for milliseconds.
caf::behavior flood(caf::event_based_actor* self, persistence_actor pool, std::string id, int width,
                    std::shared_ptr<std::atomic<long>> answered) {
  for (int i = 0; i < width; ++i)
    self->send(self, get_atom_v);
  return {
    [=](get_atom a) {
      self
        ->request(pool, caf::infinite, a, trace_context{}, model::record_kind::store_a_receipt, id)
        .then(
          [=](found_record&) {
            ++*answered;
            self->send(self, a);
          },
          [](caf::error&) {});
    },
  };
}

} // namespace

TEST_CASE("token lookups are never held behind other work queued at the pool",
          "[actors][persistence]") {
  auto workers = GENERATE(std::size_t{1}, std::size_t{3}); // SQLite: 3 = one writer, two readers
  INFO(workers << " workers");
  auto url = fresh_database_url(db::dialect::sqlite);
  auto app = create_app(url);
  auto id = large_receipt(url, app.id);
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto pool
    = spawn_persistence_pool(sys, {url, workers, 100000}, tracer::off(), model::system_time());
  auto answered = std::make_shared<std::atomic<long>>(0);
  auto flooder = sys.spawn(flood, pool, id, 16, answered);
  // Stopped however the case ends (a failed check included), before the system is.
  struct stop_both {
    caf::actor flooder, pool;
    ~stop_both() {
      caf::anon_send_exit(flooder, caf::exit_reason::user_shutdown);
      caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
    }
  } stop{flooder, caf::actor_cast<caf::actor>(pool)};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (answered->load() < 20 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(answered->load() >= 20); // under way

  // While the flood goes on, token lookups are answered, each at once. (Before, a
  // lookup waited for a worker with nothing to do, which the flood never left.)
  caf::scoped_actor self{sys};
  auto before = answered->load();
  for (int i = 0; i < 5; ++i) {
    auto asked = std::chrono::steady_clock::now();
    self
      ->request(pool, std::chrono::seconds(10), authenticate_atom_v, trace_context{},
                model::access_token_hash("rcpt_nobody"))
      .receive([&](authenticated& a) { CHECK_FALSE(a.app); },
               [](caf::error& e) { FAIL("token lookup: " << caf::to_string(e)); });
    CHECK(std::chrono::steady_clock::now() - asked < std::chrono::seconds(2));
  }
  // A save too, though it waits for the writer's call in hand.
  self
    ->request(pool, std::chrono::seconds(10), save_atom_v, trace_context{},
              pending_order(app.id, 1), manual_time::start_ms)
    .receive([&](model::purchase_order_record& r) { CHECK_FALSE(r.id.empty()); },
             [](caf::error& e) { FAIL("save: " << caf::to_string(e)); });
  // The flood was held back, never stopped: it goes on (one of its large reads may
  // still be in hand when the lookups are done, so it is waited for).
  auto more_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (answered->load() <= before && std::chrono::steady_clock::now() < more_by)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(answered->load() > before);
}

TEST_CASE("a write that may change customer answers is counted before its answer; reads are not",
          "[actors][persistence][customers]") {
  auto url = fresh_database_url(db::dialect::sqlite);
  auto app = create_app(url);
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  customer_changes changes;
  persistence_settings settings{url, 1, 16};
  settings.changes = &changes;
  auto pool = spawn_persistence_pool(sys, settings, tracer::off(), model::system_time());
  caf::scoped_actor self{sys};
  auto ask = [&](resource_request r) -> int {
    r.app_id = app.id;
    int status = 0;
    // The count as the answer arrives: a write's is already counted then.
    std::uint64_t counted_at_answer = 0;
    auto before = changes.count();
    if (r.target == http::route::customer_get) {
      self->request(pool, std::chrono::seconds(30), customer_atom_v, trace_context{}, r)
        .receive(
          [&](customer_answer& a) {
            status = a.reply.status;
            counted_at_answer = changes.count();
          },
          [](caf::error& e) { FAIL(caf::to_string(e)); });
    } else {
      self->request(pool, std::chrono::seconds(30), resource_atom_v, trace_context{}, r)
        .receive(
          [&](http::reply& a) {
            status = a.status;
            counted_at_answer = changes.count();
          },
          [](caf::error& e) { FAIL(caf::to_string(e)); });
    }
    INFO("status " << status);
    return static_cast<int>(counted_at_answer - before);
  };
  resource_request lookup;
  lookup.target = http::route::customer_get;
  lookup.id = "alice";
  resource_request grant;
  grant.target = http::route::server_grant_add;
  grant.params = {"alice", "premium"};
  grant.entitlement_names = {"premium"};
  grant.body = R"({"duration":"7d"})";

  CHECK(ask(lookup) == 0);
  CHECK(ask(grant) == 1);
  CHECK(ask(lookup) == 0);
  // Background claims write leases only.
  auto before = changes.count();
  self
    ->request(pool, std::chrono::seconds(30), claim_atom_v, std::string("w1"), std::int64_t{60'000},
              std::int32_t{10})
    .receive([](claimed_jobs&) {}, [](caf::error& e) { FAIL(caf::to_string(e)); });
  CHECK(changes.count() == before);
  // A save of an upload is a write.
  self
    ->request(pool, std::chrono::seconds(30), save_atom_v, trace_context{},
              pending_order(app.id, 7), manual_time::start_ms)
    .receive([](model::purchase_order_record&) {},
             [](caf::error& e) { FAIL(caf::to_string(e)); });
  CHECK(changes.count() == before + 1);
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
}
