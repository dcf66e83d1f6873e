#pragma once
// Operator-facing log lines on stderr, one line per event:
//   text: "2026-11-21T23:59:59.123Z WARN message trace_id=… key=value"
//   json: {"ts":"2026-11-21T23:59:59.123Z","level":"warning","msg":"message",
//          "trace_id":"…","key":"value"}
// Used for what an operator must see (store credentials refused, database
// errors, start and stop), not for per-request chatter (that is what spans are
// for). Format and least severe level come from [log] (configure_log, once, in
// main). Nothing secret goes in a line: no tokens, keys or secrets, in the
// message or in a field.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/settings.hpp"
#include "model/clock.hpp"

namespace receiptd::actors {

enum class log_level { debug, info, warn, error };
enum class log_format { text, json };

// A structured detail of a line: a JSON member (a number when `number`, else a
// string), key=value in text.
struct log_field {
  std::string key;
  std::string value;
  bool number = false;
};

// What a line is about, beyond its message: the trace of the request or job
// (empty: none) and structured fields.
struct log_context {
  std::string trace_id;
  std::vector<log_field> fields;

  log_context& with(std::string key, std::string value) {
    fields.push_back({std::move(key), std::move(value), false});
    return *this;
  }
  log_context& with(std::string key, std::int64_t value) {
    fields.push_back({std::move(key), std::to_string(value), true});
    return *this;
  }
};

// [log] format and level (validated by config/options.cpp): call once before
// the threads that log start. Until then: text, info.
void configure_log(const config::log_settings& settings);
bool log_enabled(log_level level);

void log(log_level level, std::string_view message, const log_context& context = {});

inline void log_debug(std::string_view m, const log_context& c = {}) {
  log(log_level::debug, m, c);
}
inline void log_info(std::string_view m, const log_context& c = {}) {
  log(log_level::info, m, c);
}
inline void log_warn(std::string_view m, const log_context& c = {}) {
  log(log_level::warn, m, c);
}
inline void log_error(std::string_view m, const log_context& c = {}) {
  log(log_level::error, m, c);
}

// The trace of the request or job being handled on this thread, for the lines
// logged meanwhile that name none: a handler (or its span, actors/tracing.hpp)
// opens one for its duration, so call sites need not pass the trace id. Nests;
// the previous one is back when it ends.
class log_trace_scope {
public:
  explicit log_trace_scope(std::string_view trace_id);
  ~log_trace_scope();
  log_trace_scope(const log_trace_scope&) = delete;
  log_trace_scope& operator=(const log_trace_scope&) = delete;

private:
  std::string previous_;
};

// One line as written, '\n' included: the time (unix ms) rendered RFC 3339 UTC
// with milliseconds. Control characters never break the line: JSON escapes them
// (\n, \u0001), text writes them as \n, \t, \xNN. Non-ASCII UTF-8 is kept as is;
// bytes that are not UTF-8 become U+FFFD, so a JSON line is always valid JSON.
std::string format_log_line(log_format format, log_level level, model::unix_ms time,
                            std::string_view message, const log_context& context = {});

// Lines about one subject (an app's refused credentials, a database that does not
// answer) at most once per interval: loud enough to be seen, never one line per
// request. The lines left out are counted, and the next line about the subject
// says how many ("; 41 more like it since"). Not thread-safe: one per actor, in
// its state.
class log_limiter {
public:
  explicit log_limiter(const model::time_source& clock = model::system_time(),
                       std::chrono::milliseconds interval = std::chrono::minutes(1))
    : clock_(&clock), interval_(interval) {}

  // Logs `text` at `level` unless `subject` was logged less than an interval ago;
  // true when it logged.
  bool log(log_level level, const std::string& subject, std::string_view text,
           const log_context& context = {});
  bool warn(const std::string& subject, std::string_view text, const log_context& context = {}) {
    return log(log_level::warn, subject, text, context);
  }

private:
  struct seen {
    model::time_source::steady_time at;
    std::uint64_t left_out = 0;
  };
  const model::time_source* clock_;
  std::chrono::milliseconds interval_;
  std::unordered_map<std::string, seen> last_;
};

// A log_limiter for actors that live for one request each (the store
// notification handlers) and so cannot keep one in their state: shared by them
// all, under a mutex. What unauthenticated requests cause (a refused forged
// notification) goes through one, so that a flood of them cannot flood the log.
class shared_log_limiter {
public:
  explicit shared_log_limiter(const model::time_source& clock = model::system_time(),
                              std::chrono::milliseconds interval = std::chrono::minutes(1))
    : limiter_(clock, interval) {}

  bool log(log_level level, const std::string& subject, std::string_view text,
           const log_context& context = {}) {
    std::lock_guard<std::mutex> guard(mutex_);
    return limiter_.log(level, subject, text, context);
  }

private:
  std::mutex mutex_;
  log_limiter limiter_;
};

} // namespace receiptd::actors
