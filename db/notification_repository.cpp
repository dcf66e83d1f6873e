#include "db/notification_repository.hpp"

#include "db/sql_webhooks.hpp"
#include "model/identifiers.hpp"

namespace receiptd::db {

namespace q = sql::store_notifications;

namespace {

soci::statement make_transactions(connection& c, transaction_row& row, std::string& app_id,
                                  std::string& transaction_id,
                                  std::string& original_transaction_id) {
  auto tmpl = c.kind() == dialect::postgresql ? q::transactions_postgresql : q::transactions_sqlite;
  auto names = column_names([&](auto f) { row.all_columns(f); });
  return prepare(c.session(), render(tmpl, names), [&](soci::statement& st) {
    row.all_columns(bind_into{st});
    st.exchange(soci::use(app_id, "key_app_id"));
    st.exchange(soci::use(transaction_id, "key_transaction_id"));
    st.exchange(soci::use(original_transaction_id, "key_original_transaction_id"));
  });
}

soci::statement make_receipts(soci::session& s, std::string& found_id, std::string& app_id,
                              std::string& transaction_id) {
  return prepare(s, std::string(q::receipts), [&](soci::statement& st) {
    st.exchange(soci::into(found_id));
    st.exchange(soci::use(app_id, "key_app_id"));
    st.exchange(soci::use(transaction_id, "key_transaction_id"));
  });
}

} // namespace

notification_repository::notification_repository(connection& c)
  : insert_(prepare_insert(c.session(), q::insert, notification_)),
    transactions_(make_transactions(c, transaction_, key_app_id_, key_transaction_id_,
                                    key_original_transaction_id_)),
    receipts_(make_receipts(c.session(), found_id_, key_app_id_, key_transaction_id_)) {}

bool notification_repository::insert_store_a(const std::string& app_id,
                                             const model::store_a::notification& n,
                                             model::unix_ms received_at) {
  notification_.id = model::make_uuid();
  notification_.app_id = app_id;
  notification_.store = "store_a";
  notification_.notification_id = n.notification_uuid;
  notification_.type = n.type;
  notification_.subtype = n.subtype;
  notification_.environment = std::string(to_string(n.env));
  notification_.signed_date.set(n.signed_date);
  notification_.received_at = received_at;
  return execute_change(insert_) == 1;
}

bool notification_repository::insert_store_b(const std::string& app_id,
                                             const model::store_b::rtdn& n, model::environment env,
                                             model::unix_ms received_at) {
  notification_.id = model::make_uuid();
  notification_.app_id = app_id;
  notification_.store = "store_b";
  notification_.notification_id = n.message_id;
  notification_.type = std::string(to_string(n.kind));
  notification_.subtype = model::store_b::notification_subtype(n);
  notification_.environment = std::string(to_string(env));
  notification_.signed_date.set(n.event_time);
  notification_.received_at = received_at;
  return execute_change(insert_) == 1;
}

std::vector<model::transaction_record>
notification_repository::transactions(const std::string& app_id, const std::string& transaction_id,
                                      const std::string& original_transaction_id) {
  std::vector<model::transaction_record> out;
  if (transaction_id.empty() && original_transaction_id.empty())
    return out;
  key_app_id_ = app_id;
  // An empty key matches nothing: transaction keys are never empty, and an
  // empty original_transaction_id is stored as NULL.
  key_transaction_id_ = transaction_id;
  key_original_transaction_id_ = original_transaction_id;
  for_each_row(transactions_, [&] { out.push_back(transaction_.record()); });
  return out;
}

std::vector<std::string> notification_repository::receipts(const std::string& app_id,
                                                           const std::string& transaction_id) {
  std::vector<std::string> out;
  if (transaction_id.empty())
    return out;
  key_app_id_ = app_id;
  key_transaction_id_ = transaction_id;
  for_each_row(receipts_, [&] { out.push_back(found_id_); });
  return out;
}

} // namespace receiptd::db
