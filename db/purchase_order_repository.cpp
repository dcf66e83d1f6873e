#include "db/purchase_order_repository.hpp"

#include "db/sql_records.hpp"

namespace receiptd::db {

namespace q = sql::purchase_orders;

namespace {

std::string_view lock_sql(connection& c) {
  return c.kind() == dialect::postgresql ? q::lock_postgresql : q::lock_sqlite;
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

} // namespace

purchase_order_repository::purchase_order_repository(connection& c)
  : find_by_id_(prepare_select(c.session(), q::find_by_id, row_, &key_id_, "key_id")),
    find_by_key_(make_find_by_key(c, row_, key_app_id_, key_purchase_token_)),
    insert_(prepare_insert(c.session(), q::insert, row_)),
    update_(prepare_update(
      c.session(), q::update,
      [this](auto f) {
        row_.upload_columns(f);
        row_.verdict_columns(f);
      },
      key_id_)),
    update_verdict_(
      prepare_update(c.session(), q::update, [this](auto f) { row_.verdict_columns(f); },
                     key_id_)),
    lock_(prepare_lock(c.session(), lock_sql(c), key_id_, row_.id)) {}

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
