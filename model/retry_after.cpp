// Retry-After (retry_after.hpp): RFC 9110 §10.2.3 delta-seconds or HTTP-date.
#include "model/retry_after.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <vector>

namespace receiptd::model {

namespace {

std::optional<int> month_of(std::string_view name) {
  static constexpr std::array<std::string_view, 12> months{
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (std::size_t i = 0; i < months.size(); ++i)
    if (name == months[i])
      return static_cast<int>(i) + 1;
  return std::nullopt;
}

// Digits only, at most `max_digits` of them; nullopt otherwise.
std::optional<std::int64_t> number(std::string_view text, std::size_t max_digits) {
  if (text.empty() || text.size() > max_digits)
    return std::nullopt;
  std::int64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::optional<unix_ms> civil_ms(std::int64_t y, int mo, std::int64_t d, std::string_view hms) {
  // hh:mm:ss
  if (hms.size() != 8 || hms[2] != ':' || hms[5] != ':')
    return std::nullopt;
  auto h = number(hms.substr(0, 2), 2), mi = number(hms.substr(3, 2), 2),
       s = number(hms.substr(6, 2), 2);
  if (!h || !mi || !s || *h > 23 || *mi > 59 || *s > 60)
    return std::nullopt;
  std::chrono::year_month_day date{std::chrono::year(static_cast<int>(y)),
                                   std::chrono::month(static_cast<unsigned>(mo)),
                                   std::chrono::day(static_cast<unsigned>(d))};
  if (!date.ok())
    return std::nullopt;
  auto days = std::chrono::sys_days(date).time_since_epoch().count();
  return ((static_cast<std::int64_t>(days) * 24 + *h) * 60 + *mi) * 60000 + *s * 1000;
}

std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ')
      ++i;
    auto start = i;
    while (i < text.size() && text[i] != ' ')
      ++i;
    if (i > start)
      words.push_back(text.substr(start, i - start));
  }
  return words;
}

} // namespace

std::optional<unix_ms> parse_http_date(std::string_view text) {
  auto w = words_of(text);
  if (w.size() == 6 && w[0].size() == 4 && w[0][3] == ',' && w[5] == "GMT") { // IMF-fixdate
    auto d = number(w[1], 2);
    auto mo = month_of(w[2]);
    auto y = number(w[3], 4);
    if (d && mo && y && w[3].size() == 4)
      return civil_ms(*y, *mo, *d, w[4]);
    return std::nullopt;
  }
  if (w.size() == 4 && w[0].size() > 1 && w[0].back() == ',' && w[3] == "GMT" && w[1].size() == 9
      && w[1][2] == '-' && w[1][6] == '-') { // RFC 850
    auto d = number(w[1].substr(0, 2), 2);
    auto mo = month_of(w[1].substr(3, 3));
    auto yy = number(w[1].substr(7, 2), 2);
    // Two-digit years: RFC 9110 says read them as at most 50 years ahead; every
    // date a store sends is in this century.
    if (d && mo && yy)
      return civil_ms(2000 + *yy, *mo, *d, w[2]);
    return std::nullopt;
  }
  if (w.size() == 5 && w[0].size() == 3) { // asctime
    auto mo = month_of(w[1]);
    auto d = number(w[2], 2);
    auto y = number(w[4], 4);
    if (mo && d && y && w[4].size() == 4)
      return civil_ms(*y, *mo, *d, w[3]);
  }
  return std::nullopt;
}

std::optional<std::int64_t> parse_retry_after(std::string_view header, unix_ms now) {
  while (!header.empty() && (header.front() == ' ' || header.front() == '\t'))
    header.remove_prefix(1);
  while (!header.empty() && (header.back() == ' ' || header.back() == '\t'))
    header.remove_suffix(1);
  if (header.empty())
    return std::nullopt;
  if (auto seconds = number(header, 10))
    return *seconds * 1000;
  if (auto date = parse_http_date(header))
    return std::max<std::int64_t>(0, *date - now);
  return std::nullopt;
}

std::optional<unix_ms> retry_not_before(int http_status, std::string_view header, unix_ms now) {
  if (!honours_retry_after(http_status))
    return std::nullopt;
  auto wait = parse_retry_after(header, now);
  if (!wait)
    return std::nullopt;
  return now + std::min(*wait, max_retry_after_ms);
}

void honour_retry_after(store_verdict& v, int http_status, std::string_view header, unix_ms now) {
  if (v.outcome != store_outcome::unreachable)
    return;
  if (auto at = retry_not_before(http_status, header, now))
    v.retry_not_before = at;
}

} // namespace receiptd::model
