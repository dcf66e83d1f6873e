#pragma once
// A token bucket: at most `per_second` events per second on average, in bursts of
// at most `burst`. Pure: the caller passes the (steady) time, so tests drive it
// exactly. Used to pace revalidations against each store (store-*.retry-rate), so
// that a queue that piled up during an outage does not stampede the store when it
// recovers.

#include <chrono>

namespace receiptd::model {

class token_bucket {
public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;

  // per_second 0: unlimited (every take succeeds). burst: at least 1. The bucket
  // starts full.
  token_bucket(double per_second, double burst);

  bool unlimited() const { return per_second_ <= 0; }
  double rate() const { return per_second_; }
  // Takes one token if there is one at `now` (true), else leaves the bucket as it
  // is (false).
  bool take(time_point now);
  // How long from `now` until the next token is there (zero when one is).
  duration wait(time_point now) const;

private:
  double tokens_at(time_point now) const;

  double per_second_;
  double burst_;
  double tokens_;
  time_point at_{}; // when tokens_ was last brought up to date
  bool started_ = false;
};

} // namespace receiptd::model
