// Log lines: one event per line; json lines are valid JSON whatever
// the message holds; [log] level drops the less severe.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <utility>
#include <vector>

#include "actors/log.hpp"
#include "tests/support/time/manual_time.hpp"

using namespace receiptd;
using actors::log_format;
using actors::log_level;

namespace {

constexpr model::unix_ms t0 = 1700000000123; // 2023-11-14T22:13:20.123Z

boost::json::object json_line(const std::string& line) {
  REQUIRE(!line.empty());
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1); // one line
  boost::system::error_code ec;
  auto v = boost::json::parse(line, ec);
  INFO(line);
  REQUIRE(!ec);
  REQUIRE(v.is_object());
  return v.as_object();
}

// What `write` sends to stderr while it runs.
template <class F>
std::string stderr_of(F write) {
  char path[] = "/tmp/receiptd-log-test-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  int saved = dup(STDERR_FILENO);
  dup2(fd, STDERR_FILENO);
  write();
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(fd);
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  std::remove(path);
  return out.str();
}

// Puts [log] back to its defaults when a test ends, passed or not.
struct restore_log_defaults {
  ~restore_log_defaults() { actors::configure_log({}); }
};

} // namespace

TEST_CASE("a json log line: ts, level, msg, trace_id and fields", "[log]") {
  auto ctx = actors::log_context{"trace-7f3a", {}}.with("app_id", "app-1").with("attempts", 3);
  auto o = json_line(
    actors::format_log_line(log_format::json, log_level::warn, t0, "store refused", ctx));
  CHECK(o.at("ts").as_string() == "2023-11-14T22:13:20.123Z");
  CHECK(o.at("level").as_string() == "warning");
  CHECK(o.at("msg").as_string() == "store refused");
  CHECK(o.at("trace_id").as_string() == "trace-7f3a");
  CHECK(o.at("app_id").as_string() == "app-1");
  CHECK(o.at("attempts").as_int64() == 3);
  CHECK(o.size() == 6);

  // No trace: no trace_id member. Each level by its [log] name.
  auto plain = json_line(actors::format_log_line(log_format::json, log_level::info, 0, "up"));
  CHECK(plain.at("ts").as_string() == "1970-01-01T00:00:00.000Z");
  CHECK(!plain.contains("trace_id"));
  CHECK(plain.size() == 3);
  const std::pair<log_level, const char*> levels[] = {{log_level::debug, "debug"},
                                                      {log_level::info, "info"},
                                                      {log_level::warn, "warning"},
                                                      {log_level::error, "error"}};
  for (auto [level, name] : levels)
    CHECK(
      json_line(actors::format_log_line(log_format::json, level, t0, "m")).at("level").as_string()
      == name);
}

TEST_CASE("json lines escape quotes and control characters and keep UTF-8", "[log]") {
  std::string message = "he said \"no\" \\ then\nnew line\ttab\x01\x1f\x7f é € 😀";
  auto line = actors::format_log_line(log_format::json, log_level::error, t0, message,
                                      actors::log_context{}.with("path", "a\"b\\c\n"));
  auto o = json_line(line);
  CHECK(o.at("msg").as_string() == message);
  CHECK(o.at("path").as_string() == "a\"b\\c\n");
  // As written: escapes for the ASCII, the UTF-8 bytes themselves for the rest.
  CHECK(line.find(R"(he said \"no\" \\ then\nnew line\ttab\u0001\u001f\u007f é € 😀)")
        != std::string::npos);
}

TEST_CASE("bytes that are not UTF-8 become U+FFFD, so the line stays JSON", "[log]") {
  const std::string replacement = "\xEF\xBF\xBD";
  for (std::string bad : {std::string("\xFF"), std::string("\xC0\xAF"), // overlong '/'
                          std::string("\xED\xA0\x80"),                  // a surrogate
                          std::string("\xE2\x82"),                      // truncated €
                          std::string("\xF4\x90\x80\x80")}) {           // above U+10FFFF
    INFO("bytes: " << bad.size());
    auto o
      = json_line(actors::format_log_line(log_format::json, log_level::info, t0, "x" + bad + "y"));
    auto msg = std::string(o.at("msg").as_string());
    CHECK(msg.front() == 'x');
    CHECK(msg.back() == 'y');
    CHECK(msg.find(replacement) != std::string::npos);
    CHECK(msg.find(bad) == std::string::npos);
  }
}

TEST_CASE("a field never hides the line's own members", "[log]") {
  auto o = json_line(actors::format_log_line(log_format::json, log_level::info, t0, "real",
                                             actors::log_context{}.with("msg", "forged")));
  CHECK(o.at("msg").as_string() == "real");
  CHECK(o.at("field_msg").as_string() == "forged");
}

TEST_CASE("a text line: time, level, message, then trace_id and fields", "[log]") {
  auto line = actors::format_log_line(
    log_format::text, log_level::warn, t0, "store refused\nforged line",
    actors::log_context{"trace-7f3a", {}}.with("app", "my app").with("n", 2).with("e", ""));
  CHECK(line
        == "2023-11-14T22:13:20.123Z WARN store refused\\nforged line trace_id=trace-7f3a "
           "app=\"my app\" n=2 e=\"\"\n");
  CHECK(actors::format_log_line(log_format::text, log_level::info, t0, "caf\xC3\xA9 \x01\xFF")
        == "2023-11-14T22:13:20.123Z INFO caf\xC3\xA9 \\x01\\xff\n");
}

TEST_CASE("[log] format and level decide what reaches stderr", "[log]") {
  restore_log_defaults restore;
  actors::configure_log({.format = "json", .level = "warning"});
  CHECK(!actors::log_enabled(log_level::debug));
  CHECK(!actors::log_enabled(log_level::info));
  CHECK(actors::log_enabled(log_level::warn));
  CHECK(actors::log_enabled(log_level::error));
  auto out = stderr_of([] {
    actors::log_info("dropped");
    actors::log_warn("kept", actors::log_context{"t-1", {}});
    actors::log_debug("dropped too");
  });
  auto o = json_line(out);
  CHECK(o.at("msg").as_string() == "kept");
  CHECK(o.at("trace_id").as_string() == "t-1");

  actors::configure_log({.format = "text", .level = "debug"});
  out = stderr_of([] { actors::log_debug("detail"); });
  CHECK(out.find(" DEBUG detail\n") != std::string::npos);

  // The default: text, info.
  actors::configure_log({});
  CHECK(!actors::log_enabled(log_level::debug));
  CHECK(actors::log_enabled(log_level::info));
}

TEST_CASE("lines logged while a trace scope is open carry its trace id", "[log]") {
  restore_log_defaults restore;
  actors::configure_log({.format = "json", .level = "info"});
  auto out = stderr_of([] {
    actors::log_info("before");
    {
      actors::log_trace_scope upload("trace-upload");
      actors::log_info("inside");
      {
        actors::log_trace_scope job("trace-job");
        actors::log_info("nested");
        actors::log_info("named", actors::log_context{"trace-named", {}}); // the line's own wins
      }
      actors::log_info("inside again");
    }
    actors::log_info("after");
  });
  std::istringstream lines(out);
  std::vector<std::pair<std::string, std::string>> seen; // msg, trace_id
  for (std::string line; std::getline(lines, line);) {
    auto o = json_line(line + "\n");
    seen.emplace_back(std::string(o.at("msg").as_string()),
                      o.contains("trace_id") ? std::string(o.at("trace_id").as_string()) : "");
  }
  CHECK(seen
        == std::vector<std::pair<std::string, std::string>>{{"before", ""},
                                                            {"inside", "trace-upload"},
                                                            {"nested", "trace-job"},
                                                            {"named", "trace-named"},
                                                            {"inside again", "trace-upload"},
                                                            {"after", ""}});
}

TEST_CASE("a log limiter writes a subject once per interval and counts what it left out", "[log]") {
  restore_log_defaults restore;
  test::manual_time clock;
  actors::log_limiter limiter(clock, std::chrono::seconds(10));
  std::vector<bool> logged;
  auto out = stderr_of([&] {
    logged.push_back(limiter.log(log_level::error, "db", "database away"));
    logged.push_back(limiter.log(log_level::error, "db", "database away"));
    logged.push_back(limiter.warn("other", "another subject"));
    clock.advance(std::chrono::milliseconds(9999));
    logged.push_back(limiter.log(log_level::error, "db", "database away"));
    clock.advance(std::chrono::milliseconds(1));
    logged.push_back(limiter.log(log_level::error, "db", "database away"));
    clock.advance(std::chrono::seconds(10));
    logged.push_back(limiter.log(log_level::error, "db", "database back?"));
  });
  CHECK(logged == std::vector<bool>{true, false, true, false, true, true});
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line.substr(line.find(' ') + 1)); // without the time
  CHECK(lines
        == std::vector<std::string>{"ERROR database away", "WARN another subject",
                                    "ERROR database away; 2 more like it since",
                                    "ERROR database back?"});
}
