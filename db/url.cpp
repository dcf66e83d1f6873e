#include "db/url.hpp"

namespace receiptd::db {

namespace {

constexpr std::string_view sqlite_prefix = "sqlite3://";
constexpr std::string_view postgresql_prefix = "postgresql://";

// Where the value of `key` starts (just after '='), or npos.
std::size_t value_position(std::string_view url, std::string_view key) {
  auto params_at = url.find("://");
  params_at = params_at == std::string_view::npos ? 0 : params_at + 3;
  for (auto at = url.find(key, params_at); at != std::string_view::npos;
       at = url.find(key, at + 1)) {
    bool starts_word = at == params_at || url[at - 1] == ' ';
    auto after = at + key.size();
    if (starts_word && after < url.size() && url[after] == '=')
      return after + 1;
  }
  return std::string_view::npos;
}

std::size_t value_end(std::string_view url, std::size_t from) {
  auto end = url.find(' ', from);
  return end == std::string_view::npos ? url.size() : end;
}

} // namespace

std::optional<dialect> dialect_of(std::string_view url) {
  if (url.starts_with(sqlite_prefix))
    return dialect::sqlite;
  if (url.starts_with(postgresql_prefix))
    return dialect::postgresql;
  return std::nullopt;
}

std::optional<std::string> url_parameter(std::string_view url, std::string_view key) {
  auto at = value_position(url, key);
  if (at == std::string_view::npos)
    return std::nullopt;
  return std::string(url.substr(at, value_end(url, at) - at));
}

std::string with_url_parameter(std::string_view url, std::string_view key, std::string_view value) {
  std::string out(url);
  auto at = value_position(url, key);
  if (at != std::string_view::npos)
    return out.replace(at, value_end(url, at) - at, value);
  if (!out.ends_with("://") && !out.ends_with(' '))
    out += ' ';
  out.append(key).append("=").append(value);
  return out;
}

std::string with_connection_defaults(std::string_view url) {
  auto kind = dialect_of(url);
  if (kind == dialect::sqlite && !url_parameter(url, "timeout"))
    return with_url_parameter(url, "timeout", "10");
  if (kind == dialect::postgresql && !url_parameter(url, "connect_timeout"))
    return with_url_parameter(url, "connect_timeout", "10");
  return std::string(url);
}

} // namespace receiptd::db
