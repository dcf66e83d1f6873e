// Relative paths in the config file resolve against its folder, wherever receiptd
// and receiptctl are started from; on the command line, against the working
// directory. A copy of config/ (receiptd.ini, trust/) in a folder of
// its own, receiptd started from a sibling folder: its database lands where the
// config file's "../var/receiptd.db" says, the trust files are found, and
// receiptctl started from a third folder sees the same database. The folders'
// names have a space: the database's path is then quoted in db.url.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <filesystem>
#include <signal.h>
#include <sstream>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace receiptd::test;

namespace {

// The JSON log line whose message starts with `prefix`, or null.
boost::json::value json_log_line(const std::string& log, const std::string& prefix) {
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() != '{')
      continue;
    boost::system::error_code ec;
    auto v = boost::json::parse(line, ec);
    if (!ec && v.is_object() && v.as_object().contains("msg")
        && std::string(v.at("msg").as_string()).rfind(prefix, 0) == 0)
      return v;
  }
  return nullptr;
}

} // namespace

TEST_CASE("receiptd and receiptctl started elsewhere find the files their config file names",
          "[config-paths]") {
  // A space in every path: the SQLite file's path is then quoted in db.url.
  auto top = fs::path(make_temp_dir("receiptd-config-paths"));
  auto root = top / "with space";
  fs::create_directories(root / "etc");
  fs::copy_file(fs::path(RECEIPTD_SOURCE_DIR) / "config/receiptd.ini", root / "etc/receiptd.ini");
  fs::copy(fs::path(RECEIPTD_SOURCE_DIR) / "config/trust", root / "etc/trust",
           fs::copy_options::recursive);
  fs::create_directories(root / "elsewhere");
  fs::create_directories(root / "other");

  auto port = free_port();
  // The config file named relative to the working directory; trace.file given on
  // the command line, so relative to the working directory too.
  child_process service({RECEIPTD_BINARY, "--config-file=../etc/receiptd.ini",
                         "--http.port=" + std::to_string(port), "--trace.file=spans-here.jsonl",
                         "--log.format=json"},
                        (root / "receiptd.log").string(), (root / "elsewhere").string());
  auto health = "http://127.0.0.1:" + std::to_string(port) + "/healthz";
  bool up
    = eventually([&] { return !service.running() || http_call("GET", health).status == 200; });
  INFO(service.log());
  REQUIRE(up);
  REQUIRE(service.running()); // it found trust/*.pem beside the config file

  // From the config file: "../var/receiptd.db" beside etc/, nothing in the working directory.
  CHECK(fs::exists(root / "var/receiptd.db"));
  CHECK(!fs::exists(root / "elsewhere/var"));
  // From the command line: the span file in the working directory, not beside the config.
  CHECK(fs::exists(root / "elsewhere/spans-here.jsonl"));
  CHECK(!fs::exists(root / "var/trace.jsonl"));

  // log.format=json: the start line is an object with its fields.
  REQUIRE(
    eventually([&] { return !json_log_line(service.log(), "receiptd listening").is_null(); }));
  auto listening = json_log_line(service.log(), "receiptd listening").as_object();
  CHECK(listening.at("level").as_string() == "info");
  CHECK(listening.at("port").as_int64() == port);
  CHECK(listening.at("database").as_string() == "SQLite");
  CHECK(std::string(listening.at("ts").as_string()).size() == 24); // 2026-11-23T09:34:56.789Z

  // receiptctl from a third folder, the same config file: the same database,
  // with the first app receiptd made on it.
  auto ctl
    = run_program({RECEIPTCTL_BINARY, "--config-file=../etc/receiptd.ini", "--json", "app", "list"},
                  std::chrono::seconds(60), (root / "other").string());
  INFO(ctl.err);
  REQUIRE(ctl.exit_code == 0);
  auto apps = boost::json::parse(ctl.out);
  REQUIRE(apps.is_array());
  REQUIRE(apps.as_array().size() == 1);
  CHECK(apps.as_array()[0].at("name").as_string() == "first-app");
  CHECK(!fs::exists(root / "other/var"));

  service.signal(SIGTERM);
  CHECK(service.wait(std::chrono::seconds(30)) == 0);
  fs::remove_all(top);
}
