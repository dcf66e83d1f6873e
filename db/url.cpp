#include "db/url.hpp"

#include "model/database_url.hpp"

namespace receiptd::db {

namespace {

constexpr std::string_view sqlite_prefix = "sqlite3://";
constexpr std::string_view postgresql_prefix = "postgresql://";

// The URL's parameters as its database reads them (model/database_url.hpp), and
// where they start in it.
struct parameters {
  std::size_t at = 0;
  std::vector<model::connection_parameter> list;
};

std::optional<parameters> parameters_of(std::string_view url) {
  auto kind = dialect_of(url);
  if (!kind)
    return std::nullopt;
  parameters out;
  out.at = url.find("://") + 3;
  auto parsed
    = model::parse_connection_parameters(url.substr(out.at), *kind == dialect::postgresql);
  if (!parsed)
    return std::nullopt;
  out.list = std::move(parsed).value();
  return out;
}

// The last parameter named `key` (the one the database takes), if any.
const model::connection_parameter* find(const parameters& p, std::string_view key) {
  const model::connection_parameter* found = nullptr;
  for (const auto& param : p.list)
    if (param.key == key)
      found = &param;
  return found;
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
  auto p = parameters_of(url);
  if (!p)
    return std::nullopt;
  if (auto* found = find(*p, key))
    return found->value;
  return std::nullopt;
}

std::string with_url_parameter(std::string_view url, std::string_view key, std::string_view value) {
  std::string out(url);
  auto kind = dialect_of(url);
  auto text = kind == dialect::postgresql ? model::libpq_quoted(value) : std::string(value);
  if (auto p = parameters_of(url))
    if (auto* found = find(*p, key))
      return out.replace(p->at + found->value_begin, found->value_end - found->value_begin, text);
  if (!out.ends_with("://") && !out.ends_with(' '))
    out += ' ';
  out.append(key).append("=").append(text);
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
