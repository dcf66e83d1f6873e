#include "model/timestamp.hpp"

#include <charconv>
#include <cstdio>
#include <cstring>

namespace receiptd::model {

namespace {

// Howard Hinnant's days_from_civil / civil_from_days (public domain algorithms).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

bool read_int(std::string_view& s, size_t n, int& out) {
  if (s.size() < n)
    return false;
  for (size_t i = 0; i < n; ++i)
    if (s[i] < '0' || s[i] > '9')
      return false;
  std::from_chars(s.data(), s.data() + n, out);
  s.remove_prefix(n);
  return true;
}

bool expect(std::string_view& s, char c) {
  if (s.empty() || s.front() != c)
    return false;
  s.remove_prefix(1);
  return true;
}

// Parses "YYYY-MM-DD<sep>hh:mm:ss" and leaves the rest in s.
std::optional<unix_ms> parse_date_time(std::string_view& s, char sep) {
  int y, mo, d, h, mi, se;
  if (!read_int(s, 4, y) || !expect(s, '-') || !read_int(s, 2, mo) || !expect(s, '-')
      || !read_int(s, 2, d))
    return std::nullopt;
  if (s.empty() || (s.front() != sep && !(sep == 'T' && s.front() == 't')))
    return std::nullopt;
  s.remove_prefix(1);
  if (!read_int(s, 2, h) || !expect(s, ':') || !read_int(s, 2, mi) || !expect(s, ':')
      || !read_int(s, 2, se))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
    return std::nullopt;
  auto days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return ((days * 24 + h) * 60 + mi) * 60000LL + se * 1000LL;
}

} // namespace

std::string_view format_utc(unix_ms ms, utc_buffer& buf) {
  auto secs = floor_div(ms, 1000);
  auto days = floor_div(secs, 86400);
  auto rem = secs - days * 86400;
  std::int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  const auto h = static_cast<unsigned>(rem / 3600), mi = static_cast<unsigned>(rem / 60 % 60),
             se = static_cast<unsigned>(rem % 60);
  if (y < 0 || y > 9999) { // years a store never writes: printf's %04lld spelling
    const int n = std::snprintf(buf, sizeof(buf), "%04lld-%02u-%02u %02u:%02u:%02u UTC",
                                static_cast<long long>(y), m, d, h, mi, se);
    return {buf, static_cast<std::size_t>(n)};
  }
  // Every answer carries a dozen timestamps: written digit by digit, not through
  // printf's format interpreter.
  constexpr std::string_view pattern = "0000-00-00 00:00:00 UTC";
  std::memcpy(buf, pattern.data(), pattern.size());
  auto two = [&](std::size_t at, unsigned v) {
    buf[at] = static_cast<char>('0' + v / 10);
    buf[at + 1] = static_cast<char>('0' + v % 10);
  };
  const auto year = static_cast<unsigned>(y);
  two(0, year / 100);
  two(2, year % 100);
  two(5, m);
  two(8, d);
  two(11, h);
  two(14, mi);
  two(17, se);
  return {buf, pattern.size()};
}

std::string format_utc(unix_ms ms) {
  utc_buffer buf;
  return std::string(format_utc(ms, buf));
}

boost::json::value timestamp_json(unix_ms ms) {
  utc_buffer buf;
  return boost::json::object{{"ms", ms}, {"utc", format_utc(ms, buf)}};
}

boost::json::value timestamp_json(const std::optional<unix_ms>& ms) {
  if (!ms)
    return nullptr;
  return timestamp_json(*ms);
}

std::optional<unix_ms> parse_rfc3339(std::string_view s) {
  if (s.empty())
    return std::nullopt;
  auto base = parse_date_time(s, 'T');
  if (!base)
    return std::nullopt;
  unix_ms ms = *base;
  if (!s.empty() && (s.front() == '.' || s.front() == ',')) {
    s.remove_prefix(1);
    int digits = 0;
    int frac = 0;
    while (!s.empty() && s.front() >= '0' && s.front() <= '9') {
      if (digits < 3)
        frac = frac * 10 + (s.front() - '0');
      ++digits;
      s.remove_prefix(1);
    }
    if (digits == 0)
      return std::nullopt;
    for (int i = digits; i < 3; ++i)
      frac *= 10;
    ms += frac;
  }
  if (s == "Z" || s == "z")
    return ms;
  if (s.size() == 6 && (s[0] == '+' || s[0] == '-') && s[3] == ':') {
    int sign = s[0] == '-' ? -1 : 1;
    std::string_view rest = s.substr(1);
    int oh, om;
    if (!read_int(rest, 2, oh) || !expect(rest, ':') || !read_int(rest, 2, om))
      return std::nullopt;
    return ms - sign * (oh * 60 + om) * 60000LL;
  }
  return std::nullopt;
}

std::optional<unix_ms> parse_apple_gmt(std::string_view s) {
  auto base = parse_date_time(s, ' ');
  if (!base)
    return std::nullopt;
  if (s == " Etc/GMT" || s == " GMT" || s == " UTC" || s.empty())
    return base;
  return std::nullopt;
}

} // namespace receiptd::model
