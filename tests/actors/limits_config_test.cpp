// The per-request limits are options with sane defaults; values that cannot
// work stop the start and name the option.
#include <catch2/catch.hpp>

#include <sstream>

#include "config/options.hpp"
#include "config_load.hpp"

using receiptd::config::receiptd_config;

namespace {

auto load(std::vector<std::string> args) {
  return receiptd::test::load_config(std::move(args));
}

} // namespace

TEST_CASE("request limits: defaults", "[config][limits]") {
  auto l = load({});
  REQUIRE(l.problem.empty());
  const auto& s = l.values;
  CHECK(s.http.header_timeout == std::chrono::seconds(15));
  CHECK(s.http.body_timeout == std::chrono::seconds(30));
  CHECK(s.http.keepalive_timeout == std::chrono::seconds(15));
  CHECK(s.http.max_connections == 10000);
  CHECK(s.validator.max_in_flight_bytes == 256u * 1024 * 1024);
  CHECK(s.validator.max_unverified_bytes == 32u * 1024 * 1024);
  CHECK(s.limits.client_rate == 50);
  CHECK(s.limits.client_burst == 200);
  CHECK(s.limits.app_rate == 1000);
  CHECK(s.limits.app_burst == 2000);
  CHECK(s.store_a.max_queued == 4096);
  CHECK(s.store_b.max_queued == 4096);
  auto set
    = load({"--http.header-timeout=8s", "--http.body-timeout=20s", "--http.keepalive-timeout=3s",
            "--http.max-connections=50", "--validator.max-in-flight-bytes=2097152",
            "--store-a.max-queued=7", "--store-b.max-queued=0"});
  REQUIRE(set.problem.empty());
  CHECK(set.values.http.header_timeout == std::chrono::seconds(8));
  CHECK(set.values.http.keepalive_timeout == std::chrono::seconds(3));
  CHECK(set.values.http.max_connections == 50);
  CHECK(set.values.validator.max_in_flight_bytes == 2097152);
  CHECK(set.values.store_a.max_queued == 7);
  CHECK(set.values.store_b.max_queued == 0); // no waiting at all: beyond max-concurrent, 206
}

TEST_CASE("request limits that cannot work stop the start", "[config][limits]") {
  // Pistache 0.0.5 runs the header timeout while the answer is computed.
  CHECK(load({"--http.header-timeout=5s"}).problem.find("http.header-timeout")
        != std::string::npos);
  CHECK(load({"--http.header-timeout=3s", "--validator.store-deadline=2s"}).problem.empty());
  CHECK(load({"--http.header-timeout=40s"}).problem.find("http.body-timeout") != std::string::npos);
  CHECK(load({"--http.keepalive-timeout=0s"}).problem.find("http.keepalive-timeout")
        != std::string::npos);
  CHECK(load({"--http.max-connections=0"}).problem.find("http.max-connections")
        != std::string::npos);
  // A body the byte budget could never hold would never be admitted.
  CHECK(load({"--validator.max-in-flight-bytes=1000"}).problem.find("validator.max-in-flight-bytes")
        != std::string::npos);
  CHECK(
    load({"--validator.max-unverified-bytes=1000"}).problem.find("validator.max-unverified-bytes")
    != std::string::npos);
  // Rates: 0 is no limit; a burst below one upload is not one.
  CHECK(load({"--limits.client-rate=0", "--limits.app-rate=0"}).problem.empty());
  CHECK(load({"--limits.client-rate=-1"}).problem.find("limits.client-rate") != std::string::npos);
  CHECK(load({"--limits.app-burst=0.5"}).problem.find("limits.app-burst") != std::string::npos);
}
