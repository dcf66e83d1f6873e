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
