#include "model/clock.hpp"

#include <random>

namespace receiptd::model {

namespace {

class system_time_source final : public time_source {
public:
  unix_ms now_ms() const override {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  }
  std::int64_t now_us() const override {
    using namespace std::chrono;
    return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
  }
  steady_time steady_now() const override { return std::chrono::steady_clock::now(); }
};

class system_random_source final : public random_source {
public:
  double unit() override {
    thread_local std::mt19937_64 engine{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
  }
};

} // namespace

const time_source& system_time() {
  static const system_time_source source;
  return source;
}

random_source& system_random() {
  static system_random_source source;
  return source;
}

} // namespace receiptd::model
