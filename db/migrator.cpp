#include "db/migrator.hpp"

#include <map>

#include "db/migrations.hpp"
#include "db/redact.hpp"
#include "db/sql_migrations.hpp"
#include "model/clock.hpp"

namespace receiptd::db {

namespace q = sql::migrations;

namespace {

std::map<int, std::string> applied_versions(soci::session& s) {
  std::map<int, std::string> out;
  int version = 0;
  std::string name;
  soci::statement st = (s.prepare << std::string(q::list), soci::into(version), soci::into(name));
  st.execute(false);
  while (st.fetch())
    out.emplace(version, name);
  return out;
}

} // namespace

std::vector<std::string> split_sql_statements(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  bool has_code = false; // current holds more than whitespace and comments
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') { // line comment
      auto end = text.find('\n', i);
      i = end == std::string_view::npos ? text.size() : end;
      current += '\n';
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') { // block comment
      auto end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      current += ' ';
      continue;
    }
    if (c == '\'' || c == '"') { // quoted literal or identifier ('' escapes itself)
      auto end = text.find(c, i + 1);
      end = end == std::string_view::npos ? text.size() - 1 : end;
      current.append(text.substr(i, end - i + 1));
      has_code = true;
      i = end;
      continue;
    }
    if (c == ';') {
      if (has_code)
        out.push_back(std::move(current));
      current.clear();
      has_code = false;
      continue;
    }
    current += c;
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
      has_code = true;
  }
  if (has_code)
    out.push_back(std::move(current));
  return out;
}

int apply_migrations(connection& c) {
  auto& s = c.session();
  transaction tx(c, access::write);
  if (c.kind() == dialect::postgresql) {
    long long key = q::lock_key;
    s << std::string(q::lock_postgresql), soci::use(key, "lock_key");
  }
  s << std::string(q::create_table);
  auto applied = applied_versions(s);
  int count = 0;
  for (const auto& m : embedded_migrations()) {
    if (auto found = applied.find(m.version); found != applied.end()) {
      if (found->second != m.name)
        throw std::runtime_error("schema_migrations holds version " + std::to_string(m.version)
                                 + " as " + found->second + ", this build has "
                                 + std::string(m.name));
      continue;
    }
    for (const auto& statement : split_sql_statements(m.sql)) {
      try {
        s << statement;
      } catch (const soci::soci_error& e) {
        throw std::runtime_error(std::string(m.name) + ": " + safe_message(e));
      }
    }
    int version = m.version;
    std::string name(m.name);
    long long applied_at = model::system_time().now_ms();
    s << std::string(q::record), soci::use(version, "version"), soci::use(name, "name"),
      soci::use(applied_at, "applied_at");
    ++count;
  }
  tx.commit();
  return count;
}

void install_when_missing(connection& c, std::string_view count_query, long long expected,
                          std::span<const std::string_view> statements) {
  auto& s = c.session();
  long long present = 0;
  s << std::string(count_query), soci::into(present);
  if (present == expected)
    return;
  transaction tx(c, access::write);
  if (c.kind() == dialect::postgresql) {
    long long key = q::lock_key;
    s << std::string(q::lock_postgresql), soci::use(key, "lock_key");
  }
  for (auto statement : statements)
    s << std::string(statement);
  tx.commit();
}

} // namespace receiptd::db
