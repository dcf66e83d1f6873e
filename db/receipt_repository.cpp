#include "db/receipt_repository.hpp"

#include "db/sql_records.hpp"

namespace receiptd::db {

namespace qi = sql::in_app_purchases;

namespace {

soci::statement make_delete_in_app(soci::session& s, std::string& key_receipt_id) {
  return prepare(s, std::string(qi::delete_by_receipt), [&](soci::statement& st) {
    st.exchange(soci::use(key_receipt_id, "key_receipt_id"));
  });
}

} // namespace

receipt_repository::receipt_repository(connection& c)
  : receipts_(c),
    find_in_app_(prepare_select(c.session(), qi::find_by_receipt, in_app_row_, &key_receipt_id_,
                                "key_receipt_id")),
    insert_in_app_(prepare_insert(c.session(), qi::insert, in_app_row_)),
    delete_in_app_(make_delete_in_app(c.session(), key_receipt_id_)) {}

std::optional<model::receipt_record> receipt_repository::find(const std::string& id) {
  auto r = receipts_.find(id);
  if (r)
    r->in_app_purchases = load_in_app_purchases(r->id);
  return r;
}

std::optional<model::receipt_record>
receipt_repository::find_for_update(const model::receipt_record& incoming) {
  auto r = receipts_.find_for_update(incoming);
  if (r)
    r->in_app_purchases = load_in_app_purchases(r->id);
  return r;
}

bool receipt_repository::insert(const model::receipt_record& r) {
  if (!receipts_.insert(r))
    return false;
  insert_in_app_purchases(r);
  return true;
}

void receipt_repository::update(const model::receipt_record& r) {
  receipts_.update(r);
  replace_in_app_purchases(r);
}

bool receipt_repository::update_verdict(const model::receipt_record& r) {
  if (!receipts_.update_verdict(r))
    return false;
  replace_in_app_purchases(r);
  return true;
}

bool receipt_repository::lock(const std::string& id) {
  return receipts_.lock(id);
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
