#include "actors/log.hpp"

#include <atomic>
#include <cstdio>
#include <ctime>
#include <string>
#include <unistd.h>

namespace receiptd::actors {

namespace {

// Set once by configure_log before the threads that log start; atomics all the
// same, since tests configure while others may log.
std::atomic<log_level> least_level{log_level::info};
std::atomic<log_format> line_format{log_format::text};
thread_local std::string current_trace;

// Each level's name in text lines and in JSON lines (the names [log] level takes).
struct level_names {
  const char* text;
  const char* json;
};
constexpr level_names names_of[]
  = {{"DEBUG", "debug"}, {"INFO", "info"}, {"WARN", "warning"}, {"ERROR", "error"}};

const level_names& names(log_level level) {
  auto i = static_cast<std::size_t>(level);
  return i < std::size(names_of) ? names_of[i] : names_of[std::size(names_of) - 1];
}

// "2026-11-21T23:59:59.123Z"
std::string rfc3339_ms(model::unix_ms time) {
  auto secs = time >= 0 ? time / 1000 : (time - 999) / 1000;
  auto ms = static_cast<int>(time - secs * 1000);
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[40];
  auto n = std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(stamp + n, sizeof(stamp) - n, ".%03dZ", ms);
  return stamp;
}

// The length of the well-formed UTF-8 sequence (RFC 3629) at the start of `s`,
// 0 when it is not one.
std::size_t utf8_sequence(std::string_view s) {
  auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  auto cont = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF)
    return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2))
      return 0;
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F)) // overlong, surrogates
      return 0;
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3))
      return 0;
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F)) // overlong, > U+10FFFF
      return 0;
    return 4;
  }
  return 0;
}

// `s` inside a JSON string: quotes, backslashes and control characters escaped,
// UTF-8 kept, other bytes U+FFFD.
void append_json(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      if (auto n = utf8_sequence(s.substr(i))) {
        out.append(s.substr(i, n));
        i += n;
      } else {
        out += "\\ufffd";
        ++i;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char u[8];
          std::snprintf(u, sizeof(u), "\\u%04x", c);
          out += u;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
}

// `s` on a text line: control characters and bytes that are not UTF-8 written
// as escapes, so one event stays one line.
void append_text(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      if (auto n = utf8_sequence(s.substr(i))) {
        out.append(s.substr(i, n));
        i += n;
        continue;
      }
    } else if (c >= 0x20 && c != 0x7F) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else {
      char x[8];
      std::snprintf(x, sizeof(x), "\\x%02x", c);
      out += x;
    }
    ++i;
  }
}

// key=value on a text line; the value in quotes when it has spaces, quotes or
// an '=', or is empty.
void append_text_field(std::string& out, std::string_view key, std::string_view value) {
  out += ' ';
  append_text(out, key);
  out += '=';
  if (!value.empty() && value.find_first_of(" \"=") == std::string_view::npos) {
    append_text(out, value);
    return;
  }
  std::string quoted;
  for (char c : value) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  out += '"';
  append_text(out, quoted);
  out += '"';
}

bool reserved_key(std::string_view key) {
  return key == "ts" || key == "level" || key == "msg" || key == "trace_id";
}

} // namespace

void configure_log(const config::log_settings& settings) {
  line_format = settings.format == "json" ? log_format::json : log_format::text;
  const auto& l = settings.level;
  least_level = l == "debug" ? log_level::debug
    : l == "warning"         ? log_level::warn
    : l == "error"           ? log_level::error
                             : log_level::info;
}

bool log_enabled(log_level level) {
  return level >= least_level.load(std::memory_order_relaxed);
}

namespace {

// The line of format_log_line, under `trace_id` rather than the context's.
std::string format_line(log_format format, log_level level, model::unix_ms time,
                        std::string_view message, std::string_view trace_id,
                        const log_context& context) {
  std::string line;
  line.reserve(64 + message.size());
  if (format == log_format::text) {
    line = rfc3339_ms(time);
    line += ' ';
    line += names(level).text;
    line += ' ';
    append_text(line, message);
    if (!trace_id.empty())
      append_text_field(line, "trace_id", trace_id);
    for (const auto& f : context.fields)
      append_text_field(line, f.key, f.value);
  } else {
    line
      = "{\"ts\":\"" + rfc3339_ms(time) + "\",\"level\":\"" + names(level).json + "\",\"msg\":\"";
    append_json(line, message);
    line += '"';
    if (!trace_id.empty()) {
      line += ",\"trace_id\":\"";
      append_json(line, trace_id);
      line += '"';
    }
    for (const auto& f : context.fields) {
      line += ",\"";
      if (reserved_key(f.key)) // a field never hides the line's own members
        line += "field_";
      append_json(line, f.key);
      line += "\":";
      if (f.number) {
        line += f.value;
      } else {
        line += '"';
        append_json(line, f.value);
        line += '"';
      }
    }
    line += '}';
  }
  line += '\n';
  return line;
}

} // namespace

log_trace_scope::log_trace_scope(std::string_view trace_id) : previous_(std::move(current_trace)) {
  current_trace = trace_id;
}

log_trace_scope::~log_trace_scope() {
  current_trace = std::move(previous_);
}

std::string format_log_line(log_format format, log_level level, model::unix_ms time,
                            std::string_view message, const log_context& context) {
  return format_line(format, level, time, message, context.trace_id, context);
}

void log(log_level level, std::string_view message, const log_context& context) {
  if (!log_enabled(level))
    return;
  std::string_view trace_id = context.trace_id.empty() ? current_trace : context.trace_id;
  auto line = format_line(line_format.load(std::memory_order_relaxed), level,
                          model::system_time().now_ms(), message, trace_id, context);
  // One write(2) per line keeps lines from different threads whole.
  auto rc = ::write(STDERR_FILENO, line.data(), line.size());
  (void)rc;
}

bool log_limiter::log(log_level level, const std::string& subject, std::string_view text,
                      const log_context& context) {
  auto now = clock_->steady_now();
  auto [it, first] = last_.try_emplace(subject, seen{now, 0});
  if (!first && now - it->second.at < interval_) {
    ++it->second.left_out;
    return false;
  }
  std::string line(text);
  if (it->second.left_out > 0)
    line += "; " + std::to_string(it->second.left_out) + " more like it since";
  it->second = seen{now, 0};
  actors::log(level, line, context);
  return true;
}

} // namespace receiptd::actors
