// The instruments where their logic lives: the supervisor's dispatch of
// GET /metrics and /readyz outside admission, the answers it counts, the store
// call outcomes, and the persistence pool's batch histogram, job counters, queue
// figures and readiness check against a real SQLite file.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <sqlite3.h>

#include <filesystem>
#include <sstream>
#include <thread>

#include "actors/operational.hpp"
#include "actors/persistence.hpp"
#include "actors/supervisor.hpp"
#include "config_load.hpp"
#include "fixture.hpp"
#include "sqlite_pool.hpp"
#include "model/access_token.hpp"
#include "model/store_a/receipt.hpp"
#include "tests/support/crypto/test_ca.hpp"
#include "tests/support/db/test_db.hpp"

using namespace receiptd;
using namespace receiptd::actors;
using namespace receiptd::test;

namespace {

// The value of one series in an exposition, by its whole name and labels as
// written ("name{a=\"b\"}"); none when absent.
std::optional<double> series(const std::string& text, const std::string& name_and_labels) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name_and_labels + " ", 0) == 0)
      return std::stod(line.substr(name_and_labels.size() + 1));
  return std::nullopt;
}

// ---- the supervisor ---------------------------------------------------------------

constexpr const char* good_token = "rcpt_good";
const std::string legacy_body
  = R"({"package_name":"com.example","purchase_token":"tok","product_id":"gold"})";

// Made before the actor system and gone after it: the actors use it to the end.
struct with_metrics {
  metrics instruments{"s3cret-scrape"};
};

struct operational_bench : with_metrics, actor_fixture {
  std::shared_ptr<persistence_log> log = std::make_shared<persistence_log>();
  callers_ptr store_callers = std::make_shared<std::vector<caf::strong_actor_ptr>>();
  std::shared_ptr<validator_deps> deps = std::make_shared<validator_deps>();
  config::validator_settings admission;
  supervisor_actor supervisor;

  operational_bench() {
    model::app a;
    a.id = "app-1";
    a.package_name = "com.example";
    log->apps_by_token_hash[model::access_token_hash(good_token)] = a;
    deps->persistence = keep(sys->spawn(fake_persistence, log));
    deps->operational = keep(spawn_operational(
      *sys, operational_settings{},
      {.db = sys->spawn(fake_operational_db, log), .instruments = &instruments, .clock = &clock},
      false));
    deps->store_b = keep(sys->spawn(holding_store, store_callers, &clock)); // validators wait on it
    deps->settings.store_deadline = std::chrono::seconds(5);
    deps->clock = &clock;
    deps->random = &random;
    deps->instruments = &instruments;
    model::store_a::trust_config trust;
    trust.root_pems.push_back(test_support::make_test_pki().root.pem());
    deps->trust = *model::store_a::load_trust_anchors(trust);
    admission.max_in_flight = 1;
  }

  ~operational_bench() {
    for (auto& v : *store_callers)
      caf::anon_send_exit(caf::actor_cast<caf::actor>(v), caf::exit_reason::kill);
  }

  void start() {
    config::auth_settings no_cache;
    no_cache.token_cache_ttl = std::chrono::milliseconds(0);
    supervisor = keep(spawn_supervisor(*sys, admission, no_cache, deps));
  }

  std::shared_ptr<recording_sink> send(http::route route, const std::string& token,
                                       const std::string& body = {}) {
    http::inbound_request req(route);
    req.token = token;
    req.body = body;
    req.trace_id = "t";
    auto sink = std::make_shared<recording_sink>();
    caf::anon_send(supervisor, upload_atom_v, inbound{std::move(req), sink});
    run();
    return sink;
  }

  // The actors' clock and the scheduler's timers move together.
  void pass(std::chrono::milliseconds d) {
    clock.advance(d);
    sched->advance_time(d);
    run();
  }

  const http::reply& only(const std::shared_ptr<recording_sink>& sink) {
    REQUIRE(sink->replies.size() == 1);
    return sink->replies[0];
  }
};

std::string error_message(const http::reply& r) {
  auto j = boost::json::parse(r.body);
  return std::string(j.at("errors").at(0).at("code").as_string()) + ": "
    + std::string(j.at("errors").at(0).at("message").as_string());
}

} // namespace

TEST_CASE("a scrape is answered while uploads are refused for want of room, and is no upload",
          "[actors][metrics]") {
  operational_bench b;
  b.log->queue = {.due = 3,
                  .leased = 1,
                  .scheduled = 2,
                  .oldest_due_at = manual_time::start_ms - 90'000,
                  .webhook_pending = 4,
                  .webhook_oldest_pending_at = manual_time::start_ms - 45'000};
  b.start();
  auto held = b.send(http::route::store_b_legacy_upload, good_token, legacy_body);
  CHECK(held->replies.empty()); // its validator holds the one place, waiting on the store
  auto refused = b.send(http::route::store_b_legacy_upload, good_token, legacy_body);
  CHECK(b.only(refused).status == 503);

  auto scrape = b.send(http::route::metrics, "s3cret-scrape");
  const auto& r = b.only(scrape);
  REQUIRE(r.status == 200);
  CHECK(r.content_type == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(b.log->queue_reads == 1);
  const auto& text = r.body;
  CHECK(series(text, R"(receiptd_revalidation_queue_jobs{state="due"})") == 3);
  CHECK(series(text, R"(receiptd_revalidation_queue_jobs{state="leased"})") == 1);
  CHECK(series(text, R"(receiptd_revalidation_queue_jobs{state="scheduled"})") == 2);
  CHECK(series(text, "receiptd_revalidation_queue_oldest_due_age_seconds") == 90);
  CHECK(series(text, "receiptd_webhook_deliveries_pending") == 4);
  CHECK(series(text, "receiptd_webhook_oldest_pending_age_seconds") == 45);
  CHECK(series(text, R"(receiptd_uploads_total{endpoint="store_b_legacy_upload",status="503"})")
        == 1);
  CHECK(series(text, R"(receiptd_admission_requests{stage="admitted"})") == 1);
  CHECK(series(text, R"(receiptd_admission_requests{stage="operational"})") == 1);
  CHECK(series(text, R"(receiptd_admission_bytes{stage="admitted"})") == legacy_body.size());
  CHECK(text.find(R"(endpoint="metrics")") == std::string::npos);
  CHECK(series(text, "receiptd_trace_spans_dropped_total") == 0);
  CHECK(series(text, "process_open_fds").value_or(0) > 0);

  // The scrape's handler is gone once it answered; the held upload still counts.
  b.sched->advance_time(std::chrono::seconds(5)); // the held upload's store deadline: 206
  b.run();
  CHECK(b.only(held).status == 206);
  CHECK(b.instruments.admitted_requests.value() == 0);
  CHECK(b.instruments.operational_requests.value() == 0);
  CHECK(b.instruments.uploads(http::route::store_b_legacy_upload, 206).value() == 1);
}

TEST_CASE("metrics.token: a scrape without the token, or with another, is 401",
          "[actors][metrics]") {
  operational_bench b;
  b.start();
  CHECK(b.only(b.send(http::route::metrics, "")).status == 401);
  CHECK(b.only(b.send(http::route::metrics, "s3cret-scrapE")).status == 401);
  CHECK(b.only(b.send(http::route::metrics, "s3cret-scrape")).status == 200);
  CHECK(b.log->queue_reads == 1); // a refused scrape asks the database nothing
  metrics unguarded;
  CHECK(unguarded.may_scrape(""));
  CHECK(unguarded.may_scrape("anything"));
}

TEST_CASE("a scrape whose queue figures fail still answers, with the last ones read",
          "[actors][metrics]") {
  operational_bench b;
  b.log->queue.due = 4;
  b.start();
  CHECK(series(b.only(b.send(http::route::metrics, "s3cret-scrape")).body,
               R"(receiptd_revalidation_queue_jobs{state="due"})")
        == 4);
  b.log->database_down = true;
  b.pass(operational_settings{}.queue_interval); // the next read is due
  auto r = b.only(b.send(http::route::metrics, "s3cret-scrape"));
  REQUIRE(r.status == 200);
  CHECK(series(r.body, R"(receiptd_revalidation_queue_jobs{state="due"})") == 4);
  CHECK(series(r.body, "receiptd_revalidation_queue_read_errors_total") == 1);
}

TEST_CASE("the queue figures are read at most once per metrics.queue-interval, whatever the "
          "number of scrapes",
          "[actors][metrics]") {
  operational_bench b;
  b.log->queue.due = 7;
  b.start();
  auto due = [&] {
    return series(b.only(b.send(http::route::metrics, "s3cret-scrape")).body,
                  R"(receiptd_revalidation_queue_jobs{state="due"})");
  };
  CHECK(due() == 7);
  b.log->queue.due = 8;
  for (int i = 0; i < 10; ++i)
    CHECK(due() == 7); // the figures last read
  CHECK(b.log->queue_reads == 1);
  b.pass(operational_settings{}.queue_interval - std::chrono::milliseconds(1));
  CHECK(due() == 7);
  b.pass(std::chrono::milliseconds(1));
  CHECK(due() == 8);
  CHECK(b.log->queue_reads == 2);

  SECTION("scrapes during a read share it, and its deadline") {
    b.log->operational_hangs = true;
    b.pass(operational_settings{}.queue_interval);
    std::vector<std::shared_ptr<recording_sink>> waiting;
    for (int i = 0; i < 5; ++i)
      waiting.push_back(b.send(http::route::metrics, "s3cret-scrape"));
    CHECK(b.log->queue_reads == 3);
    for (auto& w : waiting)
      CHECK(w->replies.empty());
    b.pass(operational_deadline);
    for (auto& w : waiting) {
      REQUIRE(b.only(w).status == 200);
      CHECK(series(w->replies[0].body, R"(receiptd_revalidation_queue_jobs{state="due"})") == 8);
      CHECK(series(w->replies[0].body, "receiptd_revalidation_queue_read_errors_total") == 1);
    }
  }
}

TEST_CASE("a flood of scrapes renders the text at most ten times a second", "[actors][metrics]") {
  operational_bench b;
  b.start();
  auto claimed = [&] {
    return series(b.only(b.send(http::route::metrics, "s3cret-scrape")).body,
                  "receiptd_revalidation_jobs_claimed_total");
  };
  CHECK(claimed() == 0);
  b.instruments.jobs_claimed.add();
  CHECK(claimed() == 0); // the text of a moment ago
  b.pass(operational_settings{}.render_interval - std::chrono::milliseconds(1));
  CHECK(claimed() == 0);
  b.pass(std::chrono::milliseconds(1));
  CHECK(claimed() == 1);
}

TEST_CASE("readiness is checked at most once a second; probes during a check share it",
          "[actors][metrics][readiness]") {
  operational_bench b;
  b.start();
  for (int i = 0; i < 10; ++i)
    CHECK(b.only(b.send(http::route::ready, "")).status == 200);
  CHECK(b.log->ready_checks == 1);
  b.log->database_down = true;
  b.pass(operational_settings{}.ready_interval);
  CHECK(b.only(b.send(http::route::ready, "")).status == 503);
  CHECK(b.log->ready_checks == 2);

  b.log->operational_hangs = true;
  b.pass(operational_settings{}.ready_interval);
  std::vector<std::shared_ptr<recording_sink>> waiting;
  for (int i = 0; i < 5; ++i)
    waiting.push_back(b.send(http::route::ready, ""));
  CHECK(b.log->ready_checks == 3);
  b.pass(operational_deadline);
  for (auto& w : waiting) {
    REQUIRE(b.only(w).status == 503);
    CHECK(error_message(w->replies[0]) == "not_ready: database unreachable: no answer within 2 s");
  }
}

TEST_CASE("readiness: the database answers with every migration, and trust is loaded",
          "[actors][metrics][readiness]") {
  operational_bench b;
  SECTION("ready") {
    b.start();
    auto r = b.only(b.send(http::route::ready, ""));
    CHECK(r.status == 200);
    CHECK(r.body == R"({"status":"ready"})");
  }
  SECTION("migrations missing") {
    b.log->missing_migrations = 2;
    b.start();
    auto r = b.only(b.send(http::route::ready, ""));
    CHECK(r.status == 503);
    CHECK(r.retry_after_seconds == 5);
    CHECK_THAT(error_message(r), Catch::StartsWith("not_ready: the database schema lacks 2"));
  }
  SECTION("the database down") {
    b.log->database_down = true;
    b.start();
    auto r = b.only(b.send(http::route::ready, ""));
    CHECK(r.status == 503);
    CHECK(error_message(r) == "not_ready: database unreachable: connection refused");
  }
  SECTION("no trust material") {
    b.deps->trust.reset();
    b.start();
    auto r = b.only(b.send(http::route::ready, ""));
    CHECK(r.status == 503);
    CHECK_THAT(error_message(r), Catch::Contains("trust material"));
  }
  // Readiness is not an upload either.
  CHECK(b.instruments.uploads(http::route::ready, 200).value() == 0);
  CHECK(b.instruments.uploads(http::route::ready, 503).value() == 0);
}

TEST_CASE("an answer is counted once, and a request dropped unanswered as 500",
          "[actors][metrics]") {
  manual_time clock;
  metrics m({}, clock);
  auto inner = std::make_shared<recording_sink>();
  auto sink = m.observe(http::route::store_a_upload, inner);
  clock.advance(std::chrono::milliseconds(30));
  CHECK(sink->send(http::reply{402, "{}"}));
  CHECK_FALSE(sink->send(http::reply{200, "{}"}));
  CHECK(inner->replies.size() == 1);
  CHECK(m.uploads(http::route::store_a_upload, 402).value() == 1);
  CHECK(m.uploads(http::route::store_a_upload, 200).value() == 0);
  m.observe(http::route::store_a_upload, std::make_shared<recording_sink>()).reset();
  CHECK(m.uploads(http::route::store_a_upload, 500).value() == 1);
  auto text = m.exposition({});
  CHECK(series(text, R"(receiptd_request_duration_seconds_count{endpoint="store_a_upload"})") == 2);
  CHECK(series(text,
               R"(receiptd_request_duration_seconds_bucket{endpoint="store_a_upload",le="0.025"})")
        == 1); // the dropped one took no time on this clock; the answered one 30 ms
  CHECK(
    series(text, R"(receiptd_request_duration_seconds_bucket{endpoint="store_a_upload",le="0.05"})")
    == 2);
}

TEST_CASE("store call outcomes as far as HTTP tells", "[actors][metrics]") {
  auto outcome = [](int status, std::string content_type = "application/json") {
    http::outbound_response r;
    r.status = status;
    r.content_type = std::move(content_type);
    return std::string(to_string(outcome_of(r)));
  };
  CHECK(outcome(200) == "ok");
  CHECK(outcome(204, "") == "ok");
  CHECK(outcome(200, "text/html; charset=utf-8") == "bad_answer");
  CHECK(outcome(404) == "refused");
  CHECK(outcome(401) == "refused");
  CHECK(outcome(429) == "unavailable");
  CHECK(outcome(503, "text/html") == "unavailable");
  CHECK(outcome(0, "") == "error");
}

TEST_CASE("metrics.token must be something a bearer token can be", "[actors][metrics][config]") {
  CHECK(load_config({"--metrics.token=has space"}).problem.find("metrics.token")
        != std::string::npos);
  CHECK(load_config({"--metrics.token=" + std::string(513, 'x')}).problem.find("metrics.token")
        != std::string::npos);
  auto ok = load_config({"--metrics.token=tok-123_abc.XYZ"});
  CHECK(ok.problem == "");
  CHECK(ok.values.metrics.token == "tok-123_abc.XYZ");
  CHECK(load_config({}).values.metrics.token.empty());
}

TEST_CASE("beyond loopback, GET /metrics needs metrics.token: receiptd will not start without",
          "[actors][metrics][config]") {
  auto open_to_all = load_config({"--http.address=0.0.0.0"}).problem;
  CHECK(open_to_all.find("metrics.token") != std::string::npos);
  CHECK(open_to_all.find("loopback") != std::string::npos);
  CHECK(load_config({"--http.address=10.1.2.3"}).problem != "");
  CHECK(load_config({"--http.address=0.0.0.0", "--metrics.token=tok"}).problem == "");
  for (auto loopback : {"127.0.0.1", "127.0.0.2", "::1", "localhost"})
    CHECK(load_config({std::string("--http.address=") + loopback}).problem == "");
  CHECK(load_config({"--metrics.queue-interval=0s"}).problem.find("metrics.queue-interval")
        != std::string::npos);
  CHECK(load_config({}).values.metrics.queue_interval == std::chrono::seconds(10));
}

// ---- the persistence pool on a real SQLite file ------------------------------------

TEST_CASE("the pool's batch histogram, job counters, queue figures and readiness",
          "[actors][persistence][metrics]") {
  auto url = fresh_database_url(db::dialect::sqlite);
  auto app = create_app(url);
  metrics m;
  constexpr int queued = 5;
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  // One worker, held busy by the test's write lock while the saves queue.
  auto pool = spawn_persistence_pool(sys, {url, 1, 100}, tracer::off(), model::system_time(), m);
  // The operational endpoints' session of its own, beside the pool.
  auto session = spawn_operational_session(sys, {url}, tracer::off(), model::system_time(), m);
  caf::scoped_actor self{sys};
  {
    write_lock lock(sqlite_file(url));
    auto save = [&](int i) {
      return self->request(pool, std::chrono::seconds(30), save_atom_v,
                           trace_context{"trace-" + std::to_string(i), 0}, pending_order(app.id, i),
                           manual_time::start_ms + i);
    };
    std::vector<decltype(save(0))> saves;
    for (int i = 0; i <= queued; ++i)
      saves.push_back(save(i));
    // The first is being committed (it waits on the lock); the rest wait in the
    // pool. Polled with a deadline: the pool takes them on its own thread.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (m.persistence_queued.value() < queued && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(m.persistence_queued.value() == queued);
    CHECK(m.persistence_saving.value() == 1);
    CHECK(m.persistence_at_workers.value() == 1);
    lock.release();
    for (auto& h : saves)
      h.receive([](model::purchase_order_record&) {}, [](caf::error& e) { FAIL(to_string(e)); });
  }
  auto text = m.exposition({});
  CHECK(series(text, "receiptd_db_save_batch_size_count") == 2); // one alone, then five at once
  CHECK(series(text, "receiptd_db_save_batch_size_sum") == 1 + queued);
  CHECK(series(text, R"(receiptd_db_save_batch_size_bucket{le="1"})") == 1);
  CHECK(series(text, R"(receiptd_db_save_batch_size_bucket{le="4"})") == 1);
  CHECK(series(text, R"(receiptd_db_save_batch_size_bucket{le="8"})") == 2);
  CHECK(series(text, "receiptd_db_commit_duration_seconds_count") == 2);

  auto figures = [&] {
    db::job_queue_figures q;
    self->request(session, std::chrono::seconds(30), queue_figures_atom_v)
      .receive([&](db::job_queue_figures& f) { q = f; }, [](caf::error& e) { FAIL(to_string(e)); });
    return q;
  };
  // Six pending records, six jobs, all due (manual_time's start is in the past).
  auto q = figures();
  CHECK(q.due == 6);
  CHECK(q.leased == 0);
  CHECK(q.scheduled == 0);
  CHECK(q.oldest_due_at == manual_time::start_ms);

  claimed_jobs claimed;
  self
    ->request(pool, std::chrono::seconds(30), claim_atom_v, std::string("here"),
              std::int64_t{60'000}, std::int32_t{2})
    .receive([&](claimed_jobs& c) { claimed = std::move(c); },
             [](caf::error& e) { FAIL(to_string(e)); });
  REQUIRE(claimed.size() == 2);
  // The pool published its gauges in the handler that answered the saves, so
  // before it took the claim.
  CHECK(m.persistence_queued.value() == 0);
  CHECK(m.persistence_saving.value() == 0);
  q = figures();
  CHECK(q.due == 4);
  CHECK(q.leased == 2);
  CHECK(q.oldest_due_at == manual_time::start_ms + 2); // the oldest two are leased

  auto complete = [&](const model::validation_job& job, model::validation_state state) {
    auto record = std::get<model::purchase_order_record>(*claimed[0].record);
    record.state = state;
    bool applied = false;
    self->request(pool, std::chrono::seconds(30), complete_atom_v, trace_context{}, job, record)
      .receive([&](bool a) { applied = a; }, [](caf::error& e) { FAIL(to_string(e)); });
    return applied;
  };
  CHECK(complete(claimed[0].job, model::validation_state::validated));
  CHECK_FALSE(complete(claimed[0].job, model::validation_state::validated)); // done already
  auto later = claimed[1].job;
  later.attempts = 1;
  later.next_attempt_at = model::system_time().now_ms() + 3'600'000;
  self->request(pool, std::chrono::seconds(30), reschedule_atom_v, trace_context{}, later)
    .receive([](bool applied) { CHECK(applied); }, [](caf::error& e) { FAIL(to_string(e)); });
  CHECK(m.jobs_completed.value() == 1);
  CHECK(m.jobs_overtaken.value() == 1);
  CHECK(m.jobs_rescheduled.value() == 1);
  CHECK(m.jobs_given_up.value() == 0);
  q = figures();
  CHECK(q.due == 4);
  CHECK(q.leased == 0);
  CHECK(q.scheduled == 1);

  std::int32_t missing = -1;
  self->request(session, std::chrono::seconds(30), ready_atom_v)
    .receive([&](std::int32_t n) { missing = n; }, [](caf::error& e) { FAIL(to_string(e)); });
  CHECK(missing == 0);
  CHECK(m.db_errors.value() == 0);

  // The file moved away under the open sessions: not ready, and said why.
  auto dir = sqlite_file(url).parent_path();
  fs::rename(dir, dir.string() + ".away");
  std::string why;
  self->request(session, std::chrono::seconds(30), ready_atom_v)
    .receive([](std::int32_t) { FAIL("ready without its file"); },
             [&](caf::error& e) { why = to_string(e); });
  CHECK(why.find("is no longer there") != std::string::npos);
  CHECK(m.db_errors.value() == 1);
  fs::rename(dir.string() + ".away", dir);
  self->request(session, std::chrono::seconds(30), ready_atom_v)
    .receive([&](std::int32_t n) { missing = n; }, [](caf::error& e) { FAIL(to_string(e)); });
  CHECK(missing == 0);
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(session, caf::exit_reason::user_shutdown);
}
