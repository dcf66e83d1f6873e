#pragma once
// Statements prepared once per session and executed many times: their use/into
// elements stay bound to member variables, which a call fills in place before it
// executes (PostgreSQL: one PQprepare per statement and session, then only
// PQexecPrepared; SQLite: one sqlite3_prepare_v2, then reset + bind + step).

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <soci/soci.h>

#include "model/json_out.hpp"

namespace receiptd::db {

// A stored value that does not map back onto the model (unknown enumeration text).
struct corrupt_row : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A column's text parsed by one of model's parse_* functions, or corrupt_row
// naming the column and the text.
template <class Enum>
Enum parse_column(std::optional<Enum> parsed, const char* column, const std::string& text) {
  if (!parsed)
    throw corrupt_row(std::string("unknown ") + column + " '" + text + "'");
  return *parsed;
}

// A column that may be NULL: SOCI binds a value with an indicator.
template <class T>
struct nullable {
  T value{};
  soci::indicator ind = soci::i_null;

  template <class U>
  void set(const std::optional<U>& v) {
    value = v ? static_cast<T>(*v) : T{};
    ind = v ? soci::i_ok : soci::i_null;
  }
  template <class U = T>
  std::optional<U> get() const {
    if (ind == soci::i_null)
      return std::nullopt;
    return static_cast<U>(value);
  }
};

// Booleans are INTEGER 0/1 (the schema is shared with SQLite, which has no BOOLEAN).
inline int to_flag(bool b) {
  return b ? 1 : 0;
}
inline void set_flag(nullable<int>& column, std::optional<bool> v) {
  column.value = v && *v ? 1 : 0;
  column.ind = v ? soci::i_ok : soci::i_null;
}
inline std::optional<bool> get_flag(const nullable<int>& column) {
  if (column.ind == soci::i_null)
    return std::nullopt;
  return column.value != 0;
}

// Column visitors: a row type lists each column group as f(name, member) calls.
struct bind_use {
  soci::statement& st;
  template <class T>
  void operator()(const char* name, T& v) const {
    st.exchange(soci::use(v, std::string(name)));
  }
  template <class T>
  void operator()(const char* name, nullable<T>& v) const {
    st.exchange(soci::use(v.value, v.ind, std::string(name)));
  }
};

struct bind_into {
  soci::statement& st;
  template <class T>
  void operator()(const char*, T& v) const {
    st.exchange(soci::into(v));
  }
  template <class T>
  void operator()(const char*, nullable<T>& v) const {
    st.exchange(soci::into(v.value, v.ind));
  }
};

// A row as a JSON object's members, written as text into `out` (one member per
// column, NULL as null; the caller writes the braces): the rows of a statement
// that takes many at once as one JSON array parameter. Written from the values,
// without a document; column names are identifiers, strings are escaped by
// Boost.JSON.
struct to_json_text {
  std::string& out;
  // A text column holding JSON this program wrote (a purchase's facts): written
  // as the JSON value it is, not as a string of it. json_populate_recordset
  // gives a text column a JSON value's own text, byte for byte.
  std::string_view json_column = {};
  bool first = true;

  void operator()(const char* name, const std::string& v) {
    key(name);
    if (!json_column.empty() && name == json_column)
      out += v;
    else
      model::json_out::append_string(out, v);
  }
  void operator()(const char* name, long long v) {
    key(name);
    model::json_out::append_integer(out, v);
  }
  void operator()(const char* name, int v) {
    key(name);
    model::json_out::append_integer(out, v);
  }
  template <class T>
  void operator()(const char* name, const nullable<T>& v) {
    if (v.ind != soci::i_null)
      return (*this)(name, v.value);
    key(name);
    out += "null";
  }

private:
  void key(const char* name) {
    if (!first)
      out += ',';
    first = false;
    out += '"';
    out += name;
    out += "\":";
  }
};

struct collect_names {
  std::vector<std::string_view>& names;
  template <class T>
  void operator()(const char* name, T&) const {
    names.emplace_back(name);
  }
};

// The names of a column group, e.g. column_names([&](auto f) { row.all_columns(f); }).
template <class Visit>
std::vector<std::string_view> column_names(Visit&& visit) {
  std::vector<std::string_view> names;
  visit(collect_names{names});
  return names;
}

// Expands the column placeholders of a statement template from column names:
// {columns} → "a, b", {parameters} → ":a, :b", {assignments} → "a = :a, b = :b",
// {row_assignments} → "a = r.a, b = r.b".
// Only compile-time identifiers are spliced in; every value is bound.
std::string render(std::string_view sql_template, const std::vector<std::string_view>& names);

// Expands `placeholder` (e.g. "{purchase_columns}") to "a, b": a statement over
// two tables' column groups renders the second this way, then the first with render.
std::string render_names(std::string_view sql_template, std::string_view placeholder,
                         const std::vector<std::string_view>& names);

// Prepares `sql` on the session after `bind(statement&)` attached its elements.
template <class Bind>
soci::statement prepare(soci::session& s, const std::string& sql, Bind&& bind) {
  soci::statement st(s);
  bind(st);
  st.alloc();
  st.prepare(sql);
  st.define_and_bind();
  return st;
}

// SELECT <every column of row> … with one bound lookup key (none for a listing).
template <class Row>
soci::statement prepare_select(soci::session& s, std::string_view tmpl, Row& row,
                               std::string* key = nullptr, const char* key_name = nullptr) {
  auto names = column_names([&](auto f) { row.all_columns(f); });
  return prepare(s, render(tmpl, names), [&](soci::statement& st) {
    row.all_columns(bind_into{st});
    if (key)
      st.exchange(soci::use(*key, std::string(key_name)));
  });
}

// INSERT … ({columns}) VALUES ({parameters}) with every column of row bound.
template <class Row>
soci::statement prepare_insert(soci::session& s, std::string_view tmpl, Row& row) {
  auto names = column_names([&](auto f) { row.all_columns(f); });
  return prepare(s, render(tmpl, names),
                 [&](soci::statement& st) { row.all_columns(bind_use{st}); });
}

// UPDATE … SET {assignments} of a column group … WHERE id = :key_id
template <class Group>
soci::statement prepare_update(soci::session& s, std::string_view tmpl, Group group,
                               std::string& key_id) {
  auto names = column_names(group);
  return prepare(s, render(tmpl, names), [&](soci::statement& st) {
    group(bind_use{st});
    st.exchange(soci::use(key_id, "key_id"));
  });
}

// A row lock for the rest of the transaction (FOR UPDATE, or SQLite's form):
// binds :key_id, yields the id found.
inline soci::statement prepare_lock(soci::session& s, std::string_view sql, std::string& key_id,
                                    std::string& found_id) {
  return prepare(s, std::string(sql), [&](soci::statement& st) {
    st.exchange(soci::into(found_id));
    st.exchange(soci::use(key_id, "key_id"));
  });
}

// Runs an INSERT/UPDATE/DELETE; the number of rows it changed.
long long execute_change(soci::statement& st);

// Runs a query expected to give at most one row (a lookup by a unique key) into the
// bound variables; false when there is none. The cursor is run to its end: an SQLite
// statement left on a row keeps the connection's read snapshot open, so later reads
// on the connection see stale data and a later BEGIN IMMEDIATE can fail with
// SQLITE_BUSY_SNAPSHOT (seen with SOCI 4.0.3 + SQLite 3.40).
bool fetch_single(soci::statement& st);

// Runs a query and calls on_row() after each row was fetched into the bound variables.
template <class OnRow>
void for_each_row(soci::statement& st, OnRow&& on_row) {
  st.execute(false);
  while (st.fetch())
    on_row();
}

} // namespace receiptd::db
