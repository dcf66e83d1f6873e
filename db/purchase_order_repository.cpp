#include "db/purchase_order_repository.hpp"

#include "db/sql_records.hpp"

namespace receiptd::db {

namespace q = sql::purchase_orders;

namespace {

soci::statement make_find(soci::session& s, std::string_view tmpl, purchase_order_row& row,
                          std::string& key_id) {
  auto names = column_names([&](auto f) { row.all_columns(f); });
  return prepare(s, render(tmpl, names), [&](soci::statement& st) {
    row.all_columns(bind_into{st});
    st.exchange(soci::use(key_id, "key_id"));
  });
}

soci::statement make_find_by_key(connection& c, purchase_order_row& row, std::string& app_id,
                                 std::string& token) {
  auto tmpl = c.kind() == dialect::postgresql ? q::find_by_key_postgresql : q::find_by_key_sqlite;
  auto names = column_names([&](auto f) { row.all_columns(f); });
  return prepare(c.session(), render(tmpl, names), [&](soci::statement& st) {
    row.all_columns(bind_into{st});
    st.exchange(soci::use(app_id, "key_app_id"));
    st.exchange(soci::use(token, "key_purchase_token"));
  });
}

soci::statement make_insert(soci::session& s, purchase_order_row& row) {
  auto names = column_names([&](auto f) { row.all_columns(f); });
  return prepare(s, render(q::insert, names),
                 [&](soci::statement& st) { row.all_columns(bind_use{st}); });
}

// UPDATE … SET <group> WHERE id = :key_id
template <class Group>
soci::statement make_update(soci::session& s, Group group, std::string& key_id) {
  auto names = column_names(group);
  return prepare(s, render(q::update, names), [&](soci::statement& st) {
    group(bind_use{st});
    st.exchange(soci::use(key_id, "key_id"));
  });
}

soci::statement make_lock(connection& c, std::string& key_id, std::string& found_id) {
  auto sql = std::string(c.kind() == dialect::postgresql ? q::lock_postgresql : q::lock_sqlite);
  return prepare(c.session(), sql, [&](soci::statement& st) {
    st.exchange(soci::into(found_id));
    st.exchange(soci::use(key_id, "key_id"));
  });
}

} // namespace

purchase_order_repository::purchase_order_repository(connection& c)
  : find_by_id_(make_find(c.session(), q::find_by_id, row_, key_id_)),
    find_by_key_(make_find_by_key(c, row_, key_app_id_, key_purchase_token_)),
    insert_(make_insert(c.session(), row_)),
    update_(make_update(
      c.session(),
      [this](auto f) {
        row_.upload_columns(f);
        row_.verdict_columns(f);
      },
      key_id_)),
    update_verdict_(
      make_update(c.session(), [this](auto f) { row_.verdict_columns(f); }, key_id_)),
    lock_(make_lock(c, key_id_, row_.id)) {}

std::optional<model::purchase_order_record>
purchase_order_repository::find(const std::string& id) {
  key_id_ = id;
  if (!fetch_single(find_by_id_))
    return std::nullopt;
  return row_.record();
}

std::optional<model::purchase_order_record>
purchase_order_repository::find_for_update(const model::purchase_order_record& incoming) {
  key_app_id_ = incoming.app_id;
  key_purchase_token_ = incoming.purchase_token;
  if (!fetch_single(find_by_key_))
    return std::nullopt;
  return row_.record();
}

bool purchase_order_repository::insert(const model::purchase_order_record& r) {
  row_.assign(r);
  return execute_change(insert_) == 1;
}

void purchase_order_repository::update(const model::purchase_order_record& r) {
  row_.assign(r);
  key_id_ = r.id;
  if (execute_change(update_) != 1)
    throw std::runtime_error("purchase order " + r.id + " vanished during its update");
}

bool purchase_order_repository::update_verdict(const model::purchase_order_record& r) {
  row_.assign(r);
  key_id_ = r.id;
  return execute_change(update_verdict_) == 1;
}

bool purchase_order_repository::lock(const std::string& id) {
  key_id_ = id;
  return fetch_single(lock_);
}

} // namespace receiptd::db
