#include "db/receipt_repository.hpp"

#include "db/sql_records.hpp"

namespace receiptd::db {

namespace q = sql::receipts;
namespace qi = sql::in_app_purchases;

namespace {

std::string_view lock_sql(connection& c) {
  return c.kind() == dialect::postgresql ? q::lock_postgresql : q::lock_sqlite;
}

soci::statement make_find_by_key(connection& c, receipt_row& row, std::string& app_id,
                                 std::string& hash) {
  auto tmpl = c.kind() == dialect::postgresql ? q::find_by_key_postgresql : q::find_by_key_sqlite;
  auto names = column_names([&](auto f) { row.all_columns(f); });
  return prepare(c.session(), render(tmpl, names), [&](soci::statement& st) {
    row.all_columns(bind_into{st});
    st.exchange(soci::use(app_id, "key_app_id"));
    st.exchange(soci::use(hash, "key_receipt_hash"));
  });
}

soci::statement make_delete_in_app(soci::session& s, std::string& key_receipt_id) {
  return prepare(s, std::string(qi::delete_by_receipt), [&](soci::statement& st) {
    st.exchange(soci::use(key_receipt_id, "key_receipt_id"));
  });
}

} // namespace

receipt_repository::receipt_repository(connection& c)
  : find_by_id_(prepare_select(c.session(), q::find_by_id, row_, &key_id_, "key_id")),
    find_by_key_(make_find_by_key(c, row_, key_app_id_, key_receipt_hash_)),
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
    lock_(prepare_lock(c.session(), lock_sql(c), key_id_, row_.id)),
    find_in_app_(prepare_select(c.session(), qi::find_by_receipt, in_app_row_, &key_receipt_id_,
                                "key_receipt_id")),
    insert_in_app_(prepare_insert(c.session(), qi::insert, in_app_row_)),
    delete_in_app_(make_delete_in_app(c.session(), key_receipt_id_)) {}

std::optional<model::receipt_record> receipt_repository::find(const std::string& id) {
  key_id_ = id;
  if (!fetch_single(find_by_id_))
    return std::nullopt;
  auto r = row_.record();
  r.in_app_purchases = load_in_app_purchases(r.id);
  return r;
}

std::optional<model::receipt_record>
receipt_repository::find_for_update(const model::receipt_record& incoming) {
  key_app_id_ = incoming.app_id;
  key_receipt_hash_ = incoming.receipt_hash;
  if (!fetch_single(find_by_key_))
    return std::nullopt;
  auto r = row_.record();
  r.in_app_purchases = load_in_app_purchases(r.id);
  return r;
}

bool receipt_repository::insert(const model::receipt_record& r) {
  row_.assign(r);
  if (execute_change(insert_) != 1)
    return false;
  insert_in_app_purchases(r);
  return true;
}

void receipt_repository::update(const model::receipt_record& r) {
  row_.assign(r);
  key_id_ = r.id;
  if (execute_change(update_) != 1)
    throw std::runtime_error("receipt " + r.id + " vanished during its update");
  replace_in_app_purchases(r);
}

bool receipt_repository::update_verdict(const model::receipt_record& r) {
  row_.assign(r);
  key_id_ = r.id;
  if (execute_change(update_verdict_) != 1)
    return false;
  replace_in_app_purchases(r);
  return true;
}

bool receipt_repository::lock(const std::string& id) {
  key_id_ = id;
  return fetch_single(lock_);
}

std::vector<model::apple_in_app_purchase>
receipt_repository::load_in_app_purchases(const std::string& id) {
  std::vector<model::apple_in_app_purchase> out;
  key_receipt_id_ = id;
  for_each_row(find_in_app_, [&] { out.push_back(in_app_row_.purchase()); });
  return out;
}

void receipt_repository::insert_in_app_purchases(const model::receipt_record& r) {
  // One prepared INSERT per purchase: SOCI's bulk binding loops over PQexecPrepared
  // on PostgreSQL anyway, and a receipt holds tens of purchases, not thousands.
  for (std::size_t i = 0; i < r.in_app_purchases.size(); ++i) {
    in_app_row_.assign(r.id, static_cast<int>(i), r.in_app_purchases[i]);
    execute_change(insert_in_app_);
  }
}

void receipt_repository::replace_in_app_purchases(const model::receipt_record& r) {
  key_receipt_id_ = r.id;
  execute_change(delete_in_app_);
  insert_in_app_purchases(r);
}

} // namespace receiptd::db
