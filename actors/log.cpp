#include "actors/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <unistd.h>

namespace receiptd::actors {

void log(log_level level, std::string_view message) {
  using namespace std::chrono;
  auto now = system_clock::now();
  auto secs = system_clock::to_time_t(now);
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
  const char* tag = level == log_level::info ? "INFO" : level == log_level::warn ? "WARN" : "ERROR";
  char head[64];
  std::snprintf(head, sizeof(head), "%s.%03dZ %s ", stamp, static_cast<int>(ms), tag);
  std::string line = head;
  line += message;
  line += '\n';
  // One write(2) per line keeps lines from different threads whole.
  auto rc = ::write(STDERR_FILENO, line.data(), line.size());
  (void)rc;
}

bool warning_limiter::warn(const std::string& subject, std::string_view text) {
  auto now = clock_->steady_now();
  auto it = last_.find(subject);
  if (it != last_.end() && now - it->second < interval_)
    return false;
  last_[subject] = now;
  log_warn(text);
  return true;
}

} // namespace receiptd::actors
