#pragma once
// A clock and a random source the test sets (model/clock.hpp), so that what
// depends on time and jitter (backoff, token expiry, deadlines, caches, leases)
// is asserted exactly. Header-only: no library to link.

#include <chrono>
#include <mutex>

#include "model/clock.hpp"

namespace receiptd::test {

class manual_time final : public model::time_source {
public:
  // 2026-11-22T00:00:00Z: a fixed, recognisable start.
  static constexpr model::unix_ms start_ms = 1795305600000;

  model::unix_ms now_ms() const override {
    std::lock_guard<std::mutex> guard(mtx_);
    return wall_;
  }
  steady_time steady_now() const override {
    std::lock_guard<std::mutex> guard(mtx_);
    return steady_;
  }
  // Both clocks move together.
  void advance(std::chrono::milliseconds d) {
    std::lock_guard<std::mutex> guard(mtx_);
    wall_ += d.count();
    steady_ += d;
  }

private:
  mutable std::mutex mtx_;
  model::unix_ms wall_ = start_ms;
  steady_time steady_{std::chrono::hours(1)};
};

// Every draw is `value` until the test changes it.
class fixed_random final : public model::random_source {
public:
  explicit fixed_random(double value = 0.5) : value_(value) {}
  double unit() override { return value_; }
  void set(double value) { value_ = value; }

private:
  double value_;
};

} // namespace receiptd::test
