// Upload rate limits (model/rate_limit.hpp): the token buckets kept per client
// network and per app, with any rate and burst the options allow
// (limits.client-rate / app-rate 0–1e9 a second, bursts 1–1e9), the cost of an
// upload by its body's size, and time as it passes between uploads.
//
// Input: 8 bytes of rate and 8 of burst (IEEE doubles, folded into the options'
// bounds), then uploads of 6 bytes each: a key (byte 0, among 8), the time since
// the previous upload (bytes 1-2: microseconds, times 16 to the power byte 3's
// low two bits) and the body's size in KiB (bytes 4-5).
//
// Properties: the wait asked of a refused upload is a duration a client can be
// told (Retry-After, at most token_bucket::max_wait) and is enough: the same
// upload after it passes (unless it is max_wait); the map of buckets stays
// within its bound.

#include <climits>
#include <cmath>
#include <cstring>

#include "model/rate_limit.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace receiptd;
using clock_type = std::chrono::steady_clock;

double read_double(const std::uint8_t* p) {
  double d;
  std::memcpy(&d, p, sizeof d);
  return d;
}

// Into [low, high] as the options' bounds hold it.
double within(double d, double low, double high) {
  if (!std::isfinite(d))
    return low;
  d = std::fabs(d);
  if (d > high)
    d = std::fmod(d, high);
  return d < low ? low : d;
}

constexpr std::size_t max_keys = 4;
constexpr std::size_t upload_bytes = 6;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 16)
    return 0;
  const double rate = within(read_double(data), 0.0, 1e9);
  const double burst = within(read_double(data + 8), 1.0, 1e9);
  model::keyed_buckets buckets(rate, burst, max_keys);
  auto now = clock_type::time_point{} + std::chrono::hours(1);
  for (std::size_t at = 16; at + upload_bytes <= size; at += upload_bytes) {
    const auto* u = data + at;
    const std::string key = "198.51.100." + std::to_string(u[0] & 7);
    const auto step = std::chrono::microseconds((u[1] << 8 | u[2]) << (4 * (u[3] & 3)));
    now += step;
    const std::size_t body_bytes = static_cast<std::size_t>(u[4] << 8 | u[5]) * 1024;
    const double cost = model::upload_cost(body_bytes);
    FUZZ_CHECK(cost >= 1 && cost == model::upload_cost(body_bytes / 65536 * 65536));

    auto before = buckets; // the same buckets, to try the same upload later
    auto wait = buckets.take(key, cost, now);
    FUZZ_CHECK(wait.count() >= 0);
    if (buckets.unlimited()) {
      FUZZ_CHECK(wait.count() == 0);
      continue;
    }
    FUZZ_CHECK(buckets.size() <= max_keys);
    if (wait.count() == 0)
      continue;
    // What a client is told: whole seconds it can be sent (Retry-After), and
    // enough: after that long the same upload passes.
    FUZZ_CHECK(wait <= model::token_bucket::max_wait);
    FUZZ_CHECK(std::chrono::duration<double>(wait).count() <= INT_MAX);
    if (wait < model::token_bucket::max_wait) {
      auto later = before;
      FUZZ_CHECK(later.take(key, cost, now + wait + std::chrono::microseconds(1)).count() == 0);
    }
  }
  return 0;
}
