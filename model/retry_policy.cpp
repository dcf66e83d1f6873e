#include "model/retry_policy.hpp"

#include <algorithm>
#include <cmath>

namespace receiptd::model {

std::int64_t backoff_cap_ms(const retry_policy& p, int attempts) {
  double cap = static_cast<double>(p.initial_ms) * std::pow(p.multiplier, std::max(0, attempts));
  return static_cast<std::int64_t>(std::min(cap, static_cast<double>(p.max_ms)));
}

std::int64_t backoff_delay_ms(const retry_policy& p, int attempts, double unit_random) {
  unit_random = std::clamp(unit_random, 0.0, 1.0);
  return static_cast<std::int64_t>(static_cast<double>(backoff_cap_ms(p, attempts)) * unit_random);
}

unix_ms next_attempt_at(const retry_policy& p, int attempts, double unit_random, unix_ms now,
                        std::optional<unix_ms> not_before) {
  auto at = now + backoff_delay_ms(p, attempts, unit_random);
  return not_before ? std::max(at, *not_before) : at;
}

} // namespace receiptd::model
