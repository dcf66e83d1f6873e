#include "model/config_paths.hpp"

#include <vector>

#include "model/database_url.hpp"

namespace receiptd::model {

namespace {

constexpr std::string_view sqlite_prefix = "sqlite3://";
constexpr std::string_view postgresql_prefix = "postgresql://";

bool sqlite_special_name(std::string_view name) {
  return name.empty() || name == ":memory:" || name.starts_with("file:");
}

bool is_sqlite_file_key(std::string_view key) {
  return key == "db" || key == "dbname";
}

bool is_postgresql_file_key(std::string_view key) {
  for (auto k : {"sslrootcert", "sslcert", "sslkey", "sslcrl", "sslcrldir", "passfile"})
    if (key == k)
      return true;
  return false;
}

// `value` as a parameter value in the style of `quote` (0: bare when it can be);
// nullopt when SOCI's SQLite form cannot hold it ("…" with a '"' inside).
std::optional<std::string> quoted(const std::string& value, char quote, bool libpq) {
  if (libpq && quote == 0)
    return libpq_quoted(value); // bare unless a blank of any kind, ' or \ needs quotes
  if (!libpq) { // SOCI's SQLite backend: "…", no escapes
    if (value.find(' ') == std::string::npos && quote == 0)
      return value;
    if (value.find('"') != std::string::npos)
      return std::nullopt;
    return '"' + value + '"';
  }
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "'";
}

} // namespace

std::string resolve_config_path(const std::filesystem::path& base, std::string_view path) {
  if (path.empty())
    return {};
  std::filesystem::path p(path);
  if (p.is_absolute() || base.empty())
    return std::string(path);
  return (base / p).lexically_normal().string();
}

std::string resolve_database_url(const std::filesystem::path& base, std::string_view url) {
  bool sqlite = url.starts_with(sqlite_prefix);
  if (!sqlite && !url.starts_with(postgresql_prefix))
    return std::string(url);
  auto params_at = url.find("://") + 3;
  auto params = parse_connection_parameters(url.substr(params_at), !sqlite);
  if (!params)
    return std::string(url);
  std::string out(url);
  // From the last parameter to the first, so earlier offsets stay valid.
  for (auto p = params->rbegin(); p != params->rend(); ++p) {
    bool file = sqlite
      ? is_sqlite_file_key(p->key) && !sqlite_special_name(p->value)
      : is_postgresql_file_key(p->key) && !p->value.empty() && p->value != "system";
    if (!file)
      continue;
    auto resolved = resolve_config_path(base, p->value);
    auto written = quoted(resolved, p->quote, !sqlite);
    if (resolved == p->value || !written)
      continue; // unchanged, or not writable: left as given, relative to the working folder
    out.replace(params_at + p->value_begin, p->value_end - p->value_begin, *written);
  }
  return out;
}

std::optional<std::string> sqlite_database_file(std::string_view url) {
  if (!url.starts_with(sqlite_prefix))
    return std::nullopt;
  auto params = parse_connection_parameters(url.substr(sqlite_prefix.size()), false);
  if (!params)
    return std::nullopt;
  for (const auto& p : *params)
    if (is_sqlite_file_key(p.key))
      return sqlite_special_name(p.value) ? std::nullopt : std::optional<std::string>(p.value);
  return std::nullopt;
}

} // namespace receiptd::model
