#pragma once
// Operator-facing log lines on stderr: "2026-11-21T23:59:59.123Z WARN message".
// Used for what an operator must see (store credentials refused, database
// errors, start and stop), not for per-request chatter (that is what spans are for).

#include <chrono>
#include <string>
#include <string_view>
#include <unordered_map>

#include "model/clock.hpp"

namespace receiptd::actors {

enum class log_level { info, warn, error };

void log(log_level level, std::string_view message);

inline void log_info(std::string_view m) {
  log(log_level::info, m);
}
inline void log_warn(std::string_view m) {
  log(log_level::warn, m);
}
inline void log_error(std::string_view m) {
  log(log_level::error, m);
}

// Warnings about one subject (an app's refused credentials) at most once per
// interval: loud enough to be seen, never one line per request. Not thread-safe:
// one per actor, in its state.
class warning_limiter {
public:
  explicit warning_limiter(const model::time_source& clock = model::system_time(),
                           std::chrono::milliseconds interval = std::chrono::minutes(1))
    : clock_(&clock), interval_(interval) {}

  // Logs `text` unless `subject` was warned about less than an interval ago;
  // true when it logged.
  bool warn(const std::string& subject, std::string_view text);

private:
  const model::time_source* clock_;
  std::chrono::milliseconds interval_;
  std::unordered_map<std::string, model::time_source::steady_time> last_;
};

} // namespace receiptd::actors
