#include "db/statements.hpp"

namespace receiptd::db {

namespace {

std::string join(const std::vector<std::string_view>& names, std::string_view prefix) {
  std::string out;
  for (auto name : names) {
    if (!out.empty())
      out += ", ";
    out.append(prefix).append(name);
  }
  return out;
}

// "a = {from}a, b = {from}b": from ":" (parameters) or "r." (the row r of a
// statement's FROM clause).
std::string assignments(const std::vector<std::string_view>& names, std::string_view from) {
  std::string out;
  for (auto name : names) {
    if (!out.empty())
      out += ", ";
    out.append(name).append(" = ").append(from).append(name);
  }
  return out;
}

void replace_all(std::string& text, std::string_view token, const std::string& with) {
  for (auto at = text.find(token); at != std::string::npos; at = text.find(token, at + with.size()))
    text.replace(at, token.size(), with);
}

} // namespace

std::string render(std::string_view sql_template, const std::vector<std::string_view>& names) {
  std::string sql(sql_template);
  replace_all(sql, "{columns}", join(names, ""));
  replace_all(sql, "{parameters}", join(names, ":"));
  replace_all(sql, "{assignments}", assignments(names, ":"));
  replace_all(sql, "{row_assignments}", assignments(names, "r."));
  return sql;
}

std::string render_names(std::string_view sql_template, std::string_view placeholder,
                         const std::vector<std::string_view>& names) {
  std::string sql(sql_template);
  replace_all(sql, placeholder, join(names, ""));
  return sql;
}

std::string for_table(std::string_view tmpl, std::string_view table, std::string_view proof) {
  std::string sql(tmpl);
  replace_all(sql, "{table}", std::string(table));
  replace_all(sql, "{proof}", std::string(proof));
  return sql;
}

long long execute_change(soci::statement& st) {
  st.execute(true);
  return st.get_affected_rows();
}

bool fetch_single(soci::statement& st) {
  if (!st.execute(true))
    return false;
  if (st.fetch())
    throw std::logic_error("a lookup by unique key returned more than one row");
  return true;
}

} // namespace receiptd::db
