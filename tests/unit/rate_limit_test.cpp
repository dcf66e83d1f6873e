// The token bucket that paces revalidations per store (store-*.retry-rate).
#include <catch2/catch.hpp>

#include "model/rate_limit.hpp"

using receiptd::model::token_bucket;
using namespace std::chrono_literals;

TEST_CASE("a token bucket allows its burst at once, then its rate", "[rate_limit]") {
  token_bucket b(10, 3); // 10 per second, bursts of 3
  const token_bucket::time_point t0{1h};
  CHECK(b.take(t0));
  CHECK(b.take(t0));
  CHECK(b.take(t0));
  CHECK_FALSE(b.take(t0));
  CHECK(b.wait(t0) == 100ms);
  CHECK(b.wait(t0 + 60ms) == 40ms);
  CHECK_FALSE(b.take(t0 + 99ms));
  CHECK(b.wait(t0 + 99ms) == 1ms);
  CHECK(b.take(t0 + 100ms));
  CHECK_FALSE(b.take(t0 + 100ms));
  // A long pause refills to the burst, not beyond it.
  const auto later = t0 + 10s;
  CHECK(b.wait(later) == 0ms);
  int taken = 0;
  while (b.take(later))
    ++taken;
  CHECK(taken == 3);
}

TEST_CASE("over a second a token bucket lets through its rate, plus its burst", "[rate_limit]") {
  token_bucket b(50, 5);
  const token_bucket::time_point t0{1h};
  int taken = 0;
  for (auto t = t0; t <= t0 + 1s; t += 1ms)
    while (b.take(t))
      ++taken;
  CHECK(taken == 55); // 5 at once, then one every 20 ms for a second
}

TEST_CASE("a token bucket with rate 0 is unlimited", "[rate_limit]") {
  token_bucket b(0, 1);
  const token_bucket::time_point t0{1h};
  CHECK(b.unlimited());
  for (int i = 0; i < 1000; ++i)
    REQUIRE(b.take(t0));
  CHECK(b.wait(t0) == 0ms);
}

TEST_CASE("a token bucket's wait is at most max_wait, however low its rate", "[rate_limit]") {
  const token_bucket::time_point t0{1h};
  // limits.client-rate takes any positive rate: 1e-14 a second is a wait of
  // 1e14 s (beyond a duration in microseconds), a denormal one an infinite one.
  for (double rate : {1e-6, 1e-12, 1e-14, 5e-324}) {
    INFO(rate);
    token_bucket b(rate, 1);
    REQUIRE(b.take(t0));
    REQUIRE_FALSE(b.take(t0));
    auto wait = b.wait(t0);
    CHECK(wait > 0s);
    CHECK(wait <= token_bucket::max_wait);
  }
  token_bucket slow(1e-6, 1); // a token in 1e6 s: said exactly
  REQUIRE(slow.take(t0));
  CHECK(slow.wait(t0) == 1'000'000s);
  token_bucket slower(1e-12, 1);
  REQUIRE(slower.take(t0));
  CHECK(slower.wait(t0) == token_bucket::max_wait);
}

TEST_CASE("a token bucket takes a cost at once, and a cost above its burst as the burst",
          "[rate_limit]") {
  token_bucket b(10, 20);
  const token_bucket::time_point t0{1h};
  CHECK(b.take(t0, 16));
  CHECK_FALSE(b.take(t0, 5)); // 4 left
  CHECK(b.wait(t0, 5) == 100ms);
  CHECK(b.take(t0 + 100ms, 5));
  // 1,000 tokens are never there at once: the burst is waited for instead.
  CHECK(b.wait(t0 + 100ms, 1000) == 2s);
  CHECK(b.take(t0 + 2100ms, 1000));
  CHECK_FALSE(b.take(t0 + 2100ms, 1));
}

TEST_CASE("keyed buckets keep each key to its rate", "[rate_limit]") {
  using receiptd::model::keyed_buckets;
  keyed_buckets k(1, 2);
  const token_bucket::time_point t0{1h};
  CHECK(k.take("a", 1, t0) == 0ms);
  CHECK(k.take("a", 1, t0) == 0ms);
  CHECK(k.take("a", 1, t0) == 1s);
  CHECK(k.take("b", 2, t0) == 0ms); // another key: its own bucket
  CHECK(k.take("a", 1, t0 + 1s) == 0ms);
  keyed_buckets off(0, 1);
  for (int i = 0; i < 100; ++i)
    REQUIRE(off.take("a", 16, t0) == 0ms);
  CHECK(off.size() == 0);
}

TEST_CASE("keyed buckets stay within their bound: idle keys go, busy ones share an overflow",
          "[rate_limit]") {
  using receiptd::model::keyed_buckets;
  keyed_buckets k(1, 1, 3);
  const token_bucket::time_point t0{1h};
  for (auto key : {"a", "b", "c"})
    CHECK(k.take(key, 1, t0) == 0ms);
  CHECK(k.size() == 3);
  // All three are in use: "d" and "e" share one bucket rather than grow the map.
  CHECK(k.take("d", 1, t0) == 0ms);
  CHECK(k.take("e", 1, t0) == 1s);
  CHECK(k.size() == 3);
  // A second later all are full again (idle): they make room, and "e" has its own.
  CHECK(k.take("e", 1, t0 + 1s) == 0ms);
  CHECK(k.size() == 1);
}

TEST_CASE("a client network: an IPv4 address, an IPv6 /64", "[rate_limit]") {
  using receiptd::model::client_network;
  CHECK(client_network("203.0.113.7") == "203.0.113.7");
  CHECK(client_network("2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64");
  CHECK(client_network("2001:db8:1:2::1") == client_network("2001:db8:1:2:ffff::9"));
  CHECK(client_network("2001:db8:1:3::1") != client_network("2001:db8:1:2::1"));
  CHECK(client_network("::ffff:198.51.100.4") == "198.51.100.4");
  CHECK(client_network("not an address") == "not an address");
}

TEST_CASE("an upload costs one, plus one per full 64 KiB of body", "[rate_limit]") {
  using receiptd::model::upload_cost;
  CHECK(upload_cost(0) == 1);
  CHECK(upload_cost(65535) == 1);
  CHECK(upload_cost(65536) == 2);
  CHECK(upload_cost(1024 * 1024) == 17);
}
