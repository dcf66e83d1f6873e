// GET /metrics and GET /readyz through the real binary: exact counts
// after known traffic, every line in the Prometheus text format, metrics.token, the
// revalidation queue as jobs come and go, and readiness following the database
// away and back. Each case runs a receiptd of its own on a database of its own, so
// that what it counts is only its own traffic.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <thread>

#include "db/admin.hpp"
#include "db/url.hpp"
#include "harness.hpp"
#include "raw_socket.hpp"
#include "tests/support/db/raw_sql.hpp"
#include "tests/support/db/test_db.hpp"

using namespace receiptd;
using namespace receiptd::test;
namespace json = boost::json;

namespace {

constexpr const char* orders = "/client/store_b/purchase_orders";
constexpr const char* scrape_token = "scrape-secret-7f3a";

// ---- the Prometheus text format (version 0.0.4) ---------------------------------

struct sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct exposition {
  std::vector<sample> samples;
  std::map<std::string, std::string> types; // family name → type

  // The value of the series with exactly these labels; none when absent.
  std::optional<double> value(const std::string& name,
                              const std::map<std::string, std::string>& labels = {}) const {
    for (const auto& s : samples)
      if (s.name == name && s.labels == labels)
        return s.value;
    return std::nullopt;
  }
  // The sum over every series of `name` whose labels include `labels`.
  double sum(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    double total = 0;
    for (const auto& s : samples) {
      bool match = s.name == name;
      for (const auto& [k, v] : labels)
        match = match && s.labels.count(k) && s.labels.at(k) == v;
      if (match)
        total += s.value;
    }
    return total;
  }
};

// Parses a scrape, checking every line against the format: comments (# HELP,
// # TYPE with a known type), samples `name{label="value",…} value [timestamp]`
// whose family was typed before, every name receiptd_… or process_….
exposition parse_exposition(const std::string& text) {
  static const std::regex help(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*)");
  static const std::regex type(
    R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex line(
    R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*)\})? )"
    R"(([-+]?(?:[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|Inf|NaN))( -?[0-9]+)?)");
  static const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)\")");
  exposition out;
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find('\n', at);
    REQUIRE(end != std::string::npos); // every line ends with a line feed
    auto l = text.substr(at, end - at);
    at = end + 1;
    INFO("line: " << l);
    if (l.empty())
      continue;
    std::smatch m;
    if (l.rfind("# HELP ", 0) == 0) {
      REQUIRE(std::regex_match(l, m, help));
      continue;
    }
    if (l.rfind("# TYPE ", 0) == 0) {
      REQUIRE(std::regex_match(l, m, type));
      out.types[m[1]] = m[2];
      continue;
    }
    REQUIRE(l.front() != '#');
    REQUIRE(std::regex_match(l, m, line));
    sample s;
    s.name = m[1];
    CHECK((s.name.rfind("receiptd_", 0) == 0 || s.name.rfind("process_", 0) == 0));
    auto labels = m[3].str();
    for (std::sregex_iterator it(labels.begin(), labels.end(), label), none; it != none; ++it)
      s.labels[(*it)[1]] = (*it)[2];
    auto v = m[4].str();
    s.value = v == "+Inf" || v == "Inf" ? HUGE_VAL : v == "-Inf" ? -HUGE_VAL : std::stod(v);
    // Its family was typed before it: the name itself, or a histogram's series.
    auto family = s.name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      std::string_view sv(s.name), sx(suffix);
      if (!out.types.count(family) && sv.ends_with(sx)
          && out.types.count(s.name.substr(0, s.name.size() - sx.size())))
        family = s.name.substr(0, s.name.size() - sx.size());
    }
    CHECK(out.types.count(family) == 1);
    out.samples.push_back(std::move(s));
  }
  return out;
}

http_response scrape(service_process& svc, const std::string& token = scrape_token) {
  std::vector<std::string> headers;
  if (!token.empty())
    headers.push_back("Authorization: Bearer " + token);
  return http_call("GET", svc.url("/metrics"), {}, headers);
}

exposition scraped(service_process& svc) {
  auto r = scrape(svc);
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.header("content-type") == "text/plain; version=0.0.4; charset=utf-8");
  return parse_exposition(r.body);
}

std::string error_code(const http_response& r) {
  return std::string(r.json().at("errors").at(0).at("code").as_string());
}

// ---- a receiptd and a database of the case's own -----------------------------------

// An app made by receiptctl on `db_url` (which it migrates first), for the test
// key pair, with a service account the emulator knows.
test_app create_app_on(suite& s, const std::string& db_url, const std::string& package) {
  auto r = run_program({RECEIPTCTL_BINARY, "--db.url=" + db_url, "--json", "app", "create",
                        "--name=" + unique("app"), "--package-name=" + package,
                        "--license-key=" + test_licence_key(),
                        "--service-account-file=" + make_service_account(s).path});
  INFO(r.err << r.out);
  REQUIRE(r.exit_code == 0);
  auto j = json::parse(r.out);
  test_app app;
  app.id = std::string(j.at("id").as_string());
  app.token = std::string(j.at("token").as_string());
  app.package_name = package;
  return app;
}

// Puts the emulator's Store B back up however the case ends.
struct store_b_back_up {
  suite& s;
  ~store_b_back_up() { s.emulator.set_mode("store_b", "up"); }
};

http_response upload(service_process& svc, suite& s, const test_app& app, bool signed_right) {
  auto token = unique("tok");
  register_purchase(s, app.package_name, "gold", token, "product");
  auto data = purchase_data_json(app.package_name, "gold", token);
  auto signature = sign_purchase(signed_right ? data : data + " ");
  return svc.post(orders, store_b_body(data, signature), app.token);
}

} // namespace

TEST_CASE("/metrics counts known traffic exactly, in the Prometheus text format", "[metrics]") {
  auto& s = the_suite();
  auto db_url = fresh_database_url(s.dialect);
  auto app = create_app_on(s, db_url, unique_package("metrics"));
  auto args = standard_service_args(s);
  args.push_back(std::string("--metrics.token=") + scrape_token);
  args.push_back("--metrics.queue-interval=100ms"); // the queue as jobs come and go
  service_process svc(make_temp_dir("receiptd-metrics"), db_url, args);
  svc.start();

  for (int i = 0; i < 3; ++i) {
    auto r = upload(svc, s, app, true);
    INFO(r.body);
    REQUIRE(r.status == 200);
  }
  auto fraud = upload(svc, s, app, false);
  REQUIRE(fraud.status == 402);
  REQUIRE(error_code(fraud) == "invalid_signature");
  auto invalid = svc.post(orders, "{}", app.token);
  REQUIRE(invalid.status == 422);
  auto unknown = svc.post(orders, "{}", "rcpt_nobody_has_this_token");
  REQUIRE(unknown.status == 401);

  SECTION("metrics.token: a scrape without it, or with another, is refused") {
    auto none = scrape(svc, "");
    CHECK(none.status == 401);
    CHECK(error_code(none) == "unauthorized");
    CHECK(scrape(svc, "scrape-secret-wrong").status == 401);
    CHECK(scrape(svc).status == 200);
  }

  SECTION("the counts") {
    auto m = scraped(svc);
    using labels = std::map<std::string, std::string>;
    auto uploads = [&](const char* status) {
      return m.value("receiptd_uploads_total",
                     {{"endpoint", "store_b_upload"}, {"status", status}});
    };
    CHECK(uploads("200") == 3);
    CHECK(uploads("402") == 1);
    CHECK(uploads("422") == 1);
    CHECK(uploads("401") == 1);
    CHECK(m.sum("receiptd_uploads_total") == 6); // scrapes are not uploads
    CHECK(m.types.at("receiptd_uploads_total") == "counter");
    CHECK(m.value("receiptd_request_duration_seconds_count", {{"endpoint", "store_b_upload"}})
          == 6);
    CHECK(m.types.at("receiptd_request_duration_seconds") == "histogram");
    CHECK(m.value("receiptd_fraud_total", {{"store", "store_b"}, {"reason", "invalid_signature"}})
          == 1);
    CHECK(m.sum("receiptd_fraud_total") == 1);
    // One access token for the app, then one productsv2 call per upload the
    // signature check let through.
    auto calls = [&](const char* call, const char* outcome) {
      return m.value("receiptd_store_requests_total",
                     {{"store", "store_b"}, {"call", call}, {"outcome", outcome}});
    };
    CHECK(calls("token", "ok") == 1);
    CHECK(calls("products_v2", "ok") == 3);
    CHECK(m.sum("receiptd_store_requests_total") == 4);
    CHECK(m.value("receiptd_store_request_duration_seconds_count",
                  {{"store", "store_b"}, {"call", "products_v2"}})
          == 3);
    // The four stored uploads went through group commits: however they were
    // batched, the batch sizes add up to four.
    CHECK(m.value("receiptd_db_save_batch_size_sum") == 4);
    auto batches = m.value("receiptd_db_save_batch_size_count").value_or(0);
    CHECK((batches >= 1 && batches <= 4));
    CHECK(m.value("receiptd_db_commit_duration_seconds_count") == batches);
    CHECK(m.value("receiptd_db_errors_total") == 0);
    // A scrape counts itself as the one operational request in flight (an earlier
    // one's place is given back as its handler ends, just after it answered: on a
    // busy machine that can come after the next scrape is admitted); the uploads'
    // places likewise, as their validators end.
    CHECK(m.value("receiptd_admission_requests", labels{{"stage", "operational"}}) >= 1);
    CHECK(eventually([&] {
      auto idle = scraped(svc);
      if (idle.value("receiptd_admission_requests", labels{{"stage", "operational"}}) != 1)
        return false;
      return idle.value("receiptd_admission_requests", labels{{"stage", "admitted"}}) == 0
        && idle.value("receiptd_admission_bytes", labels{{"stage", "admitted"}}) == 0
        && idle.value("receiptd_admission_requests", labels{{"stage", "authenticating"}}) == 0
        && idle.value("receiptd_store_calls_in_flight", labels{{"store", "store_b"}}) == 0
        && idle.value("receiptd_persistence_queued_requests") == 0
        && idle.value("receiptd_persistence_save_batches_in_flight") == 0;
    }));
    CHECK(m.value("receiptd_trace_spans_dropped_total") == 0);
    CHECK(m.value("receiptd_revalidation_queue_jobs", labels{{"state", "due"}}) == 0);
    CHECK(m.sum("receiptd_revalidation_queue_jobs") == 0);
    // The process figures, as every client library names them.
    auto now = static_cast<double>(std::time(nullptr));
    auto start = m.value("process_start_time_seconds").value_or(0);
    CHECK((start > now - 3600 && start <= now + 1));
    CHECK(m.value("process_cpu_seconds_total").value_or(0) > 0);
    CHECK(m.value("process_resident_memory_bytes").value_or(0) > 1e6);
    CHECK(m.value("process_open_fds").value_or(0) > 3);
    CHECK(m.types.at("process_cpu_seconds_total") == "counter");
    // Which build answers: the version /healthz and --version say.
    auto version
      = std::string(http_call("GET", svc.url("/healthz")).json().at("version").as_string());
    CHECK_FALSE(version.empty());
    CHECK(m.value("receiptd_build_info", {{"version", version}}) == 1);
    CHECK(m.types.at("receiptd_build_info") == "gauge");
    CHECK(m.value("receiptd_webhook_deliveries_pending") == 0);
    CHECK(m.value("receiptd_webhook_oldest_pending_age_seconds") == 0);
  }

  SECTION("the revalidation queue while Store B is down, and after") {
    store_b_back_up guard{s};
    s.emulator.set_mode("store_b", "down");
    auto pending = upload(svc, s, app, true);
    INFO(pending.body);
    REQUIRE(pending.status == 206);
    // How to follow it: when the store is asked again, and where the record reads.
    auto id = std::string(pending.json().at("id").as_string());
    CHECK(pending.header("location") == std::string(orders) + "/" + id);
    auto retry_after = std::stoi(pending.header("retry-after"));
    CHECK((retry_after >= 1 && retry_after <= 1)); // retry.initial 200ms, rounded up
    // The store's failure is in the log, once however many calls failed.
    CHECK(eventually([&] {
      return svc.log().find("store_b products_v2 call failed: no answer") != std::string::npos;
    }));
    // One job on this database, in whichever state the scheduler has it now.
    auto m = scraped(svc);
    CHECK(m.sum("receiptd_revalidation_queue_jobs") == 1);
    CHECK(m.value("receiptd_revalidation_queue_oldest_due_age_seconds").value_or(-1) >= 0);
    // Asked again (retry.initial 200ms) and rescheduled while the store is down.
    CHECK(eventually([&] {
      return scraped(svc).sum("receiptd_revalidation_jobs_total", {{"outcome", "rescheduled"}})
        >= 1;
    }));
    auto down = scraped(svc);
    CHECK(down.sum("receiptd_store_requests_total", {{"call", "products_v2"}, {"outcome", "error"}})
          >= 1);
    CHECK(down.value("receiptd_revalidation_jobs_claimed_total").value_or(0) >= 1);
    s.emulator.set_mode("store_b", "up");
    CHECK(eventually([&] {
      auto after = scraped(svc);
      return after.sum("receiptd_revalidation_queue_jobs") == 0
        && after.value("receiptd_revalidation_jobs_total", {{"outcome", "completed"}}) == 1
        && after.value("receiptd_revalidation_jobs_running") == 0;
    }));
    auto after = scraped(svc);
    CHECK(after.value("receiptd_revalidation_jobs_total", {{"outcome", "given_up"}}) == 0);
    CHECK(after.value("receiptd_revalidation_jobs_total", {{"outcome", "overtaken"}}) == 0);
    // Every failed call of that outage, one log line: more would say how many.
    auto log = svc.log();
    auto first = log.find("store_b products call failed");
    CHECK(log.find("store_b products call failed", first + 1) == std::string::npos);
  }

  SECTION("the webhook outbox while an endpoint fails, and after") {
    auto endpoint = unique("lagging");
    auto added = run_program({RECEIPTCTL_BINARY, "--db.url=" + db_url, "--json", "webhook", "add",
                              app.id, "--url=" + s.emulator.control_url("/webhooks/" + endpoint)});
    INFO(added.err);
    REQUIRE(added.exit_code == 0);
    s.emulator.control("POST", "/control/webhooks/" + endpoint + "/mode",
                       json::parse(R"({"status":500})"));
    // Seen by the running service within auth.revocation-check; then an upload
    // writes an event for the endpoint.
    CHECK(eventually([&] {
      auto r = upload(svc, s, app, true);
      REQUIRE(r.status == 200);
      auto m = scraped(svc);
      return m.value("receiptd_webhook_deliveries_pending").value_or(0) >= 1
        && m.value("receiptd_webhook_oldest_pending_age_seconds").value_or(0) > 0;
    }));
    s.emulator.control("POST", "/control/webhooks/" + endpoint + "/mode",
                       json::parse(R"({"status":200})"));
    CHECK(eventually(
      [&] {
        auto m = scraped(svc);
        return m.value("receiptd_webhook_deliveries_pending") == 0
          && m.value("receiptd_webhook_oldest_pending_age_seconds") == 0;
      },
      std::chrono::seconds(60)));
  }
  CHECK(svc.stop() == 0);
}

TEST_CASE("/readyz: ready only while the database answers with the current schema",
          "[metrics][readiness]") {
  auto& s = the_suite();
  auto db_url = fresh_database_url(s.dialect);
  service_process svc(make_temp_dir("receiptd-readyz"), db_url, standard_service_args(s));
  svc.start();
  auto ready = [&] { return http_call("GET", svc.url("/readyz")); };
  auto r = ready();
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.json() == json::parse(R"({"status":"ready"})"));

  auto expect_not_ready = [&](const std::string& reason) {
    http_response last;
    bool refused = eventually([&] {
      last = ready();
      return last.status == 503;
    });
    INFO(last.body);
    REQUIRE(refused);
    CHECK(error_code(last) == "not_ready");
    CHECK(std::string(last.json().at("errors").at(0).at("message").as_string()).find(reason)
          != std::string::npos);
    CHECK(last.header("retry-after") == "5");
    CHECK(http_call("GET", svc.url("/healthz")).status == 200); // liveness is another matter
  };
  auto expect_ready_again = [&] { CHECK(eventually([&] { return ready().status == 200; })); };

  SECTION("a migration missing from the schema") {
    execute_sql(db_url,
                "UPDATE schema_migrations SET version = -version"
                " WHERE version = (SELECT MAX(version) FROM schema_migrations)");
    expect_not_ready("lacks 1 of this build's migrations");
    execute_sql(db_url, "UPDATE schema_migrations SET version = -version WHERE version < 0");
    expect_ready_again();
  }

  SECTION("the database away, then back") {
    if (s.dialect == db::dialect::postgresql) {
      // The server refuses the database's sessions, as a failover or a network
      // cut would: every session ended, no new one let in.
      std::string server = std::getenv("RECEIPTD_TEST_PG_URL");
      auto name = db::url_parameter(db_url, "dbname").value();
      struct let_in_again {
        std::string server, name;
        ~let_in_again() {
          execute_sql(server, "ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS true");
        }
      } guard{server, name};
      execute_sql(server, "ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS false");
      REQUIRE(db::terminate_postgresql_sessions(server, name).ok());
      expect_not_ready("database unreachable");
      // A scrape still answers, without the queue figures it could not read.
      auto m = scraped(svc);
      CHECK(m.value("receiptd_revalidation_queue_read_errors_total").value_or(0) >= 1);
    } else {
      // The SQLite file moved away under the running service (its open sessions
      // would go on writing to it; a restart would start on an empty one).
      auto dir = std::filesystem::path(db::url_parameter(db_url, "db").value()).parent_path();
      auto away = dir.string() + ".away";
      struct move_back {
        std::string from, to;
        ~move_back() { std::rename(from.c_str(), to.c_str()); }
      } guard{away, dir.string()};
      REQUIRE(std::rename(dir.c_str(), away.c_str()) == 0);
      expect_not_ready("database unreachable");
      CHECK(scrape(svc, "").status == 200); // no metrics.token on this one
    }
  }
  expect_ready_again();
  CHECK(svc.stop() == 0);
}

namespace {

// `n` revalidation jobs of `app_id`, not due for decades (so the scheduler leaves
// them), as a long store outage leaves them: every read of the queue figures
// scans them all.
void queue_backlog(const std::string& db_url, const std::string& app_id, int n) {
  execute_sql(db_url,
              "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < "
                + std::to_string(n)
                + ") INSERT INTO validation_jobs (id, record_kind, record_id, app_id, attempts,"
                  " next_attempt_at, lease_owner, lease_until, version, last_error)"
                  " SELECT 'backlog-' || i, 'store_b_purchase_order', 'backlog-' || i, '"
                + app_id + "', 0, 4102444800000, NULL, NULL, 0, '' FROM n");
}

// Clients scraping GET /metrics in a loop, each on a keep-alive connection of its
// own, as fast as they are answered, until the object goes.
class scrape_flood {
public:
  scrape_flood(unsigned short port, int clients) {
    for (int i = 0; i < clients; ++i)
      threads_.emplace_back([this, port] {
        raw_connection c(port);
        while (!stop_) {
          c.send_all("GET /metrics HTTP/1.1\r\nHost: receiptd\r\n\r\n");
          auto got = c.read_responses(1, std::chrono::seconds(10));
          if (got.size() != 1)
            return;
          if (got[0].status == 200)
            ++answered_;
        }
      });
  }
  ~scrape_flood() {
    stop_ = true;
    for (auto& t : threads_)
      t.join();
  }
  long answered() const { return answered_; }

private:
  std::atomic<bool> stop_{false};
  std::atomic<long> answered_{0};
  std::vector<std::thread> threads_;
};

} // namespace

TEST_CASE("a metrics flood with 50,000 jobs queued: small uploads are still answered at once",
          "[metrics][flood]") {
  auto& s = the_suite();
  auto db_url = fresh_database_url(s.dialect);
  auto app = create_app_on(s, db_url, unique_package("flood"));
  queue_backlog(db_url, app.id, 50000);
  // The suite's options: no token cache, so that every upload looks its token up.
  service_process svc(make_temp_dir("receiptd-flood"), db_url, standard_service_args(s));
  svc.start();
  {
    scrape_flood flood(svc.port(), 16);
    REQUIRE(eventually([&] { return flood.answered() >= 50; }));
    // Uploads from a few clients at once while the flood goes on: each answered,
    // and long before http.header-timeout (15 s). Before, the token lookups waited
    // behind the scrapes' scans for a persistence worker with nothing to do, which
    // the flood never left: no upload was answered, each ended in 408 after those
    // 15 s. (The bound leaves room for a busy machine: on a shared 2-core VM, with
    // the backlog's 50,000 rows just written, PostgreSQL's COMMIT alone was seen
    // taking 2.6 s, and an upload 6.6 s.)
    std::vector<std::thread> clients;
    std::atomic<int> ok{0}, slow{0};
    for (int c = 0; c < 4; ++c)
      clients.emplace_back([&] {
        for (int i = 0; i < 5; ++i) {
          auto token = unique("tok");
          register_purchase(s, app.package_name, "gold", token, "product");
          auto data = purchase_data_json(app.package_name, "gold", token);
          auto started = std::chrono::steady_clock::now();
          auto r = svc.post(orders, store_b_body(data, sign_purchase(data)), app.token);
          auto took = std::chrono::steady_clock::now() - started;
          ok += r.status == 200;
          slow += took >= std::chrono::seconds(10);
        }
      });
    auto before = flood.answered();
    for (auto& c : clients)
      c.join();
    CHECK(ok == 20);
    CHECK(slow == 0);
    CHECK(flood.answered() > before); // the scrapes went on being answered meanwhile
  }
  // The figures the scrapes showed are the backlog's (read once per
  // metrics.queue-interval, not once per scrape).
  auto m = scraped(svc);
  CHECK(m.value("receiptd_revalidation_queue_jobs", {{"state", "scheduled"}}) == 50000);
  CHECK(svc.stop() == 0);
}
