// db.url through the real binaries: the URIs PostgreSQL users write
// (postgresql://user:password@host:port/dbname) are accepted as well as libpq's
// keywords, and a database that cannot be reached or refuses the login is said
// so without the password, in either form: not in receiptd's log lines (text
// or JSON), not in receiptctl's output, not in the trace file.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <optional>

#include "db/admin.hpp"
#include "db/url.hpp"
#include "harness.hpp"
#include "model/encoding.hpp"
#include "tests/support/db/raw_sql.hpp"
#include "tests/support/db/test_db.hpp"

using namespace receiptd;
using namespace receiptd::test;

namespace {

// The test cluster (scripts/test-postgres), when there is one: its port and a
// fresh database on it.
std::optional<std::string> server_port() {
  const char* url = std::getenv("RECEIPTD_TEST_PG_URL");
  if (!url)
    return std::nullopt;
  return db::url_parameter(url, "port");
}

// A password with characters a URI must percent-encode. Its core, unique to the
// run, is in every spelling of it: raw, quoted for libpq, percent-encoded.
struct password {
  std::string core = "S3cret" + unique("pw").substr(3);
  std::string raw() const { return core + " @:/%'"; }
  std::string keyword() const { return "'" + core + " @:/%\\''"; }
  std::string encoded() const { return core + "%20%40%3A%2F%25%27"; }
};

struct outcome {
  int receiptd = -1, receiptctl = -1;
  std::string text; // every line either wrote, and the trace file
};

// Starts receiptd (JSON log lines), then receiptctl, with `url` as db.url, and
// collects what they wrote.
outcome run_both(const std::string& url, const std::vector<std::string>& extra = {}) {
  auto dir = make_temp_dir("receiptd-dburl");
  auto trace = dir + "/trace.jsonl";
  std::vector<std::string> service{RECEIPTD_BINARY,         "--db.url=" + url,
                                   "--http.port=0",         "--log.format=json",
                                   "--trace.file=" + trace, "--bootstrap.create-first-app=false"};
  service.insert(service.end(), extra.begin(), extra.end());
  auto d = run_program(service, std::chrono::seconds(60), RECEIPTD_SOURCE_DIR);
  auto c = run_program({RECEIPTCTL_BINARY, "--db.url=" + url, "app", "list"},
                       std::chrono::seconds(60), RECEIPTD_SOURCE_DIR);
  outcome o;
  o.receiptd = d.exit_code;
  o.receiptctl = c.exit_code;
  o.text = d.out + d.err + c.out + c.err + read_text(trace);
  return o;
}

void check_secret_absent(const outcome& o, const password& p) {
  INFO(o.text);
  CHECK(o.text.find(p.core) == std::string::npos);
}

} // namespace

TEST_CASE("a database that cannot be reached is said so without its password, in either URL "
          "form",
          "[hostile][redaction][db-url]") {
  password p;
  auto closed = std::to_string(free_port());
  struct form {
    const char* name;
    std::string url;
  };
  for (const auto& f : {
         form{"keywords",
              "postgresql://host=127.0.0.1 port=" + closed
                + " dbname=receiptd user=receiptd password=" + p.keyword()},
         form{"URI",
              "postgresql://receiptd:" + p.encoded() + "@127.0.0.1:" + closed
                + "/receiptd?connect_timeout=3"},
         form{"postgres:// URI",
              "postgres://receiptd:" + p.encoded() + "@127.0.0.1:" + closed + "/receiptd"},
       }) {
    INFO(f.name);
    auto o = run_both(f.url);
    CHECK(o.receiptd == 1);
    CHECK(o.receiptctl == 1);
    check_secret_absent(o, p);
    // What failed, and where it pointed: the reason and the URL, its password masked.
    CHECK(o.text.find("cannot open the database") != std::string::npos);
    CHECK(o.text.find("Connection refused") != std::string::npos);
    CHECK(o.text.find("password=***") != std::string::npos);
    CHECK(o.text.find("port=" + closed) != std::string::npos);
  }
}

TEST_CASE("a server that refuses the login is said so without the password",
          "[hostile][redaction][db-url]") {
  auto port = server_port();
  if (!port)
    return; // only under scripts/test, which starts the test cluster
  password p;
  auto role = "nobody_" + model::hex_encode(model::random_bytes(4)); // no such role
  for (const auto& url :
       {"postgresql://host=127.0.0.1 port=" + *port + " dbname=postgres user=" + role
          + " password=" + p.keyword(),
        "postgresql://" + role + ":" + p.encoded() + "@127.0.0.1:" + *port + "/postgres"}) {
    auto o = run_both(url);
    CHECK(o.receiptd == 1);
    CHECK(o.receiptctl == 1);
    check_secret_absent(o, p);
    CHECK(o.text.find("role \"" + role + "\" does not exist") != std::string::npos);
  }
}

TEST_CASE("a database URL that cannot be read is refused without repeating it",
          "[hostile][redaction][db-url]") {
  password p;
  for (const auto& url : {
         "postgresql://receiptd:" + p.core + "%zz@127.0.0.1/receiptd", // a bad %-escape
         "postgresql://receiptd:" + p.core + "@[::1/receiptd",         // an IPv6 host not closed
         "postgresql://host=127.0.0.1 password='" + p.core,            // a quote not closed
       }) {
    auto o = run_both(url);
    CHECK(o.receiptd == 2); // a bad option stops the start
    CHECK(o.receiptctl == 2);
    check_secret_absent(o, p);
    CHECK(o.text.find("bad value for db.url") != std::string::npos);
  }
  // In a config file, a value that is not a string (a list here) is not repeated either.
  auto dir = make_temp_dir("receiptd-dburl-ini");
  write_text(dir + "/receiptd.ini",
             "[db]\nurl=[\"postgresql://receiptd:" + p.core + "@127.0.0.1/receiptd\"]\n");
  auto d = run_program({RECEIPTD_BINARY, "--config-file=" + dir + "/receiptd.ini"},
                       std::chrono::seconds(60), RECEIPTD_SOURCE_DIR);
  auto c = run_program({RECEIPTCTL_BINARY, "--config-file=" + dir + "/receiptd.ini", "app", "list"},
                       std::chrono::seconds(60), RECEIPTD_SOURCE_DIR);
  CHECK(d.exit_code == 2);
  CHECK(c.exit_code == 2);
  outcome o;
  o.text = d.out + d.err + c.out + c.err;
  check_secret_absent(o, p);
  CHECK(o.text.find("bad value for db.url") != std::string::npos);
}

TEST_CASE("a PostgreSQL URI opens the database, in the config file too", "[db-url]") {
  if (dialect_under_test() != db::dialect::postgresql)
    return;
  auto keywords = fresh_database_url(db::dialect::postgresql);
  auto port = db::url_parameter(keywords, "port").value();
  auto dbname = db::url_parameter(keywords, "dbname").value();
  password p; // the test cluster trusts every login: the password is sent, and ignored
  auto uri = "postgresql://receiptd:" + p.encoded() + "@127.0.0.1:" + port + "/" + dbname
    + "?application_name=receiptd-test&sslmode=disable";

  auto created = run_program({RECEIPTCTL_BINARY, "--db.url=" + uri, "--json", "app", "create",
                              "--name=uri-app", "--bundle-id=com.example.uri"});
  INFO(created.out << created.err);
  REQUIRE(created.exit_code == 0);
  CHECK((created.out + created.err).find(p.core) == std::string::npos);

  // receiptd from a config file naming the URI, as an operator writes it.
  auto dir = make_temp_dir("receiptd-dburl-ini");
  auto ini = dir + "/receiptd.ini";
  write_text(ini, "[db]\nurl=\"" + uri + "\"\n");
  auto port_number = free_port();
  child_process service({RECEIPTD_BINARY, "--config-file=" + ini,
                         "--http.port=" + std::to_string(port_number),
                         "--trace.file=" + dir + "/trace.jsonl",
                         "--bootstrap.create-first-app=false", "--log.format=json"},
                        dir + "/receiptd.log", RECEIPTD_SOURCE_DIR);
  auto base = "http://127.0.0.1:" + std::to_string(port_number);
  REQUIRE(eventually(
    [&] { return !service.running() || http_call("GET", base + "/readyz").status == 200; }));
  INFO(service.log());
  REQUIRE(service.running());
  auto listed = run_program({RECEIPTCTL_BINARY, "--config-file=" + ini, "--json", "app", "list"});
  CHECK(listed.exit_code == 0);
  CHECK(listed.out.find("uri-app") != std::string::npos);

  // The database goes away under the running service: its sessions reconnect,
  // fail, and say so in the log and in /readyz, without the password.
  std::string readyz;
  {
    std::string server = std::getenv("RECEIPTD_TEST_PG_URL");
    struct let_in_again {
      std::string server, name;
      ~let_in_again() {
        execute_sql(server, "ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS true");
      }
    } guard{server, dbname};
    execute_sql(server, "ALTER DATABASE " + dbname + " WITH ALLOW_CONNECTIONS false");
    REQUIRE(db::terminate_postgresql_sessions(server, dbname).ok());
    bool refused = eventually([&] {
      auto r = http_call("GET", base + "/readyz");
      readyz = r.body;
      return r.status == 503 && readyz.find("database unreachable") != std::string::npos;
    });
    INFO("last /readyz: " << readyz);
    REQUIRE(refused);
    REQUIRE(eventually([&] {
      return service.log().find("not currently accepting connections") != std::string::npos;
    }));
  }
  CHECK(readyz.find(p.core) == std::string::npos);
  service.signal(SIGTERM);
  CHECK(service.wait(std::chrono::seconds(30)) == 0);
  CHECK(service.log().find("PostgreSQL") != std::string::npos);
  CHECK((service.log() + read_text(dir + "/trace.jsonl") + listed.out + listed.err).find(p.core)
        == std::string::npos);
}
