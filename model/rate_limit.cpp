#include "model/rate_limit.hpp"

#include <algorithm>
#include <cmath>

namespace receiptd::model {

token_bucket::token_bucket(double per_second, double burst)
  : per_second_(per_second), burst_(std::max(burst, 1.0)), tokens_(burst_) {}

double token_bucket::tokens_at(time_point now) const {
  if (!started_ || now <= at_)
    return tokens_;
  const double elapsed = std::chrono::duration<double>(now - at_).count();
  return std::min(burst_, tokens_ + elapsed * per_second_);
}

bool token_bucket::take(time_point now) {
  if (unlimited())
    return true;
  tokens_ = tokens_at(now);
  if (!started_ || now > at_)
    at_ = now;
  started_ = true;
  if (tokens_ < 1)
    return false;
  tokens_ -= 1;
  return true;
}

token_bucket::duration token_bucket::wait(time_point now) const {
  if (unlimited())
    return duration::zero();
  const double missing = 1 - tokens_at(now);
  if (missing <= 0)
    return duration::zero();
  // To the microsecond: a float a hair above a whole number must not add one.
  return std::chrono::round<std::chrono::microseconds>(
    std::chrono::duration<double>(missing / per_second_));
}

} // namespace receiptd::model
