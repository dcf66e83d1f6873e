#pragma once
// Time and randomness are injected, never read from a global (STYLE.md §9, as
// Envoy's TimeSource and RandomGenerator): whoever needs the time or a random
// draw is handed a source, main() hands the real ones, and tests hand sources
// they set, so token expiry, backoff, leases and deadlines are asserted exactly.
// (Secrets — ids, tokens — come from model/encoding.hpp's CSPRNG, not from here.)

#include <chrono>
#include <cstdint>

#include "model/timestamp.hpp"

namespace receiptd::model {

class time_source {
public:
  using steady_time = std::chrono::steady_clock::time_point;
  virtual ~time_source() = default;
  // Wall-clock time: what records, tokens and jobs store.
  virtual unix_ms now_ms() const = 0;
  // Wall-clock time in microseconds (span start times); by default now_ms()'s.
  virtual std::int64_t now_us() const { return now_ms() * 1000; }
  // Monotonic time: deadlines, caches and rate limits.
  virtual steady_time steady_now() const = 0;
};

class random_source {
public:
  virtual ~random_source() = default;
  // A uniform draw in [0, 1) (backoff jitter). Thread-safe.
  virtual double unit() = 0;
};

// The system's clocks, and a per-thread Mersenne Twister seeded from the OS.
const time_source& system_time();
random_source& system_random();

} // namespace receiptd::model
