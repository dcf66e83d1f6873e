// Spans become JSON lines; the trace file stays bounded.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "actors/tracing.hpp"
#include "tests/support/time/manual_time.hpp"

using namespace receiptd;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

} // namespace

TEST_CASE("a span is one JSON line with actor, message, start, duration and outcome", "[tracing]") {
  auto dir
    = std::filesystem::temp_directory_path() / ("receiptd-trace-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto file = (dir / "trace.jsonl").string();
  {
    config::trace_settings s;
    s.file = file;
    test::manual_time clock;
    actors::tracer t(s, clock);
    {
      actors::span outer(t, {"trace-1", 0}, "validator", "store_b_upload");
      clock.advance(std::chrono::milliseconds(3));
      actors::span inner(t, outer.child(), "persistence", "save \"quoted\"");
      clock.advance(std::chrono::milliseconds(4));
      inner.outcome("ok");
      outer.outcome("200");
    }
    t.flush();
  }
  std::istringstream lines(read(file));
  std::string line;
  std::vector<boost::json::value> spans;
  while (std::getline(lines, line))
    spans.push_back(boost::json::parse(line));
  REQUIRE(spans.size() == 2);
  CHECK(spans[0].at("actor") == "persistence");
  CHECK(spans[0].at("message") == "save \"quoted\"");
  CHECK(spans[0].at("parent_id") == spans[1].at("span_id"));
  CHECK(spans[1].at("trace_id") == "trace-1");
  CHECK(spans[1].at("outcome") == "200");
  // Times come from the tracer's clock: wall clock for the start, steady for the
  // duration.
  const std::int64_t start_us = test::manual_time::start_ms * 1000;
  CHECK(spans[1].at("start_us").to_number<std::int64_t>() == start_us);
  CHECK(spans[0].at("start_us").to_number<std::int64_t>() == start_us + 3000);
  CHECK(spans[1].at("duration_us").to_number<std::int64_t>() == 7000);
  CHECK(spans[0].at("duration_us").to_number<std::int64_t>() == 4000);
  std::filesystem::remove_all(dir);
}

TEST_CASE("past max-file-bytes the trace file rotates to FILE.1", "[tracing]") {
  auto dir
    = std::filesystem::temp_directory_path() / ("receiptd-rotate-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto file = (dir / "trace.jsonl").string();
  config::trace_settings s;
  s.file = file;
  s.max_file_bytes = 4096;
  {
    actors::tracer t(s);
    for (int i = 0; i < 200; ++i) {
      actors::span sp(t, {"trace-" + std::to_string(i), 0}, "validator", "upload");
      sp.outcome("200");
      if (i % 20 == 19)
        t.flush();
    }
    t.flush();
  }
  CHECK(std::filesystem::exists(file + ".1"));
  CHECK(std::filesystem::file_size(file + ".1") <= 2 * 4096);
  CHECK(std::filesystem::file_size(file) <= 2 * 4096);
  std::filesystem::remove_all(dir);
}

TEST_CASE("tracing off records nothing and keeps the trace context", "[tracing]") {
  auto dir = std::filesystem::temp_directory_path() / ("receiptd-off-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto file = (dir / "trace.jsonl").string();
  config::trace_settings s;
  s.enabled = false;
  s.file = file;
  {
    actors::tracer t(s);
    CHECK_FALSE(t.enabled());
    actors::span sp(t, {"trace-9", 4}, "validator", "upload");
    sp.outcome("200");
    CHECK(sp.child().trace_id == "trace-9"); // messages still carry the trace id
    sp.end();
    t.flush(); // returns at once: nothing to write
  }
  CHECK_FALSE(std::filesystem::exists(file)); // no file opened, no thread started
  actors::span none(actors::tracer::off(), {"trace-10", 0}, "persistence", "claim");
  CHECK(none.child().trace_id == "trace-10");
  std::filesystem::remove_all(dir);
}

TEST_CASE("span texts a client chose are escaped; plain ones copied as they are", "[tracing]") {
  actors::span_record s;
  s.actor = "validator";
  s.trace_id = "client-\"trace\"\\\n\x01-id";
  s.span_id = 0xabc;
  s.message = "upload é";
  s.outcome = "200";
  auto line = actors::to_json_line(s);
  CHECK(line.find('\n') == std::string::npos);
  auto v = boost::json::parse(line).as_object();
  CHECK(v.at("trace_id").as_string() == s.trace_id);
  CHECK(v.at("message").as_string() == "upload é");
  CHECK(v.at("actor").as_string() == "validator");
  CHECK(v.at("outcome").as_string() == "200");
  CHECK(v.at("parent_id").as_string() == "");
  CHECK(v.at("span_id").as_string() == "0000000000000abc");
  CHECK(line.find(R"("message":"upload é")") != std::string::npos);
}
