#pragma once
// Exponential backoff with full jitter ("Exponential Backoff And Jitter", AWS
// Architecture Blog, 2015): the n-th delay is uniform in [0, min(max, initial·mᵏ)].

#include <cstdint>
#include <optional>

#include "model/timestamp.hpp"

namespace receiptd::model {

struct retry_policy {
  std::int64_t initial_ms = 5000;
  std::int64_t max_ms = 15 * 60 * 1000;
  double multiplier = 2.0;
  int max_attempts = 20;
};

// The delay before the next attempt after `attempts` failed ones.
// unit_random: a uniform draw in [0, 1).
std::int64_t backoff_delay_ms(const retry_policy& p, int attempts, double unit_random);

// The cap that delay is drawn under (for tests and logs).
std::int64_t backoff_cap_ms(const retry_policy& p, int attempts);

// When the next attempt is due after `attempts` failed ones, from `now`: the
// backoff, but never before `not_before` (what the store asked for: a 429's
// Retry-After, model/retry_after.hpp).
unix_ms next_attempt_at(const retry_policy& p, int attempts, double unit_random, unix_ms now,
                        std::optional<unix_ms> not_before = std::nullopt);

inline bool attempts_exhausted(const retry_policy& p, int attempts) {
  return attempts >= p.max_attempts;
}

} // namespace receiptd::model
