#include "db/purchase_repository.hpp"

#include "db/sql_purchases.hpp"
#include "model/purchases/activity.hpp"
#include "model/purchases/customer.hpp"
#include "model/purchases/resource_json.hpp"

namespace receiptd::db {

namespace q = sql::purchases;
namespace mp = model::purchases;

void purchase_row::assign(const mp::purchase& p, std::optional<model::unix_ms> next_change) {
  id = p.id;
  app_id = p.app_id;
  marketplace = std::string(to_string(p.market));
  environment = std::string(to_string(p.env));
  user_identifier.set(p.user_identifier);
  product_id = p.product_id.value;
  facts = mp::facts_json(p);
  versions = p.versions;
  next_change_at.set(next_change);
  created_at = p.created_at;
  updated_at = p.updated_at;
  active_until.set(mp::active_until(p));
  recency = mp::recency_of(p);
  product_key = mp::product_key(p.product_id.value);
}

mp::purchase purchase_row::purchase() const {
  mp::purchase p;
  p.id = id;
  p.app_id = app_id;
  p.market = parse_column(mp::parse_marketplace(marketplace), "marketplace", marketplace);
  p.env = parse_column(model::parse_environment(environment), "environment", environment);
  p.user_identifier = user_identifier.get();
  auto read = mp::read_facts(p, facts);
  if (!read)
    throw corrupt_row("purchase " + id + ": " + read.err().message());
  p.versions = versions;
  p.created_at = created_at;
  p.updated_at = updated_at;
  return p;
}

std::vector<std::string_view> purchase_columns() {
  purchase_row row;
  return column_names([&](auto f) { row.all_columns(f); });
}

std::string purchase_json_rows(const std::vector<purchase_to_write>& purchases) {
  // The facts are facts_json's text: a JSON object in the row.
  std::string out = "[";
  purchase_row row;
  for (const auto& p : purchases) {
    row.assign(*p.purchase, p.next_change);
    if (out.size() > 1)
      out += ',';
    out += '{';
    row.all_columns(to_json_text{out, "facts"});
    out += '}';
  }
  out += ']';
  return out;
}

namespace {

template <class Bind>
soci::statement select(connection& c, std::string_view tmpl, purchase_row& row, Bind&& keys) {
  auto names = column_names([&](auto f) { row.all_columns(f); });
  return prepare(c.session(), render(tmpl, names), [&](soci::statement& st) {
    row.all_columns(bind_into{st});
    keys(st);
  });
}

} // namespace

purchase_repository::purchase_repository(connection& c)
  : find_(prepare_select(c.session(), q::find_by_id, row_, &key_id_, "key_id")),
    find_by_key_(select(c,
                        c.kind() == dialect::postgresql ? q::find_by_key_postgresql
                                                        : q::find_by_key_sqlite,
                        row_,
                        [&](soci::statement& st) {
                          st.exchange(soci::use(key_app_id_, "key_app_id"));
                          st.exchange(soci::use(key_marketplace_, "key_marketplace"));
                          st.exchange(soci::use(key_environment_, "key_environment"));
                          st.exchange(soci::use(key_purchase_key_, "key_purchase_key"));
                        })),
    insert_(prepare_insert(c.session(), q::insert, row_)),
    update_(prepare_update(
      c.session(), q::update, [this](auto f) { row_.all_columns(f); }, key_id_)),
    insert_key_(prepare(c.session(), std::string(q::insert_key),
                        [&](soci::statement& st) {
                          st.exchange(soci::use(k_app_id_, "app_id"));
                          st.exchange(soci::use(k_marketplace_, "marketplace"));
                          st.exchange(soci::use(k_environment_, "environment"));
                          st.exchange(soci::use(k_key_, "purchase_key"));
                          st.exchange(soci::use(k_purchase_id_, "purchase_id"));
                        })),
    remove_keys_(prepare(c.session(), std::string(q::remove_keys),
                         [&](soci::statement& st) { st.exchange(soci::use(key_id_, "key_id")); })),
    remove_(prepare(c.session(), std::string(q::remove),
                    [&](soci::statement& st) { st.exchange(soci::use(key_id_, "key_id")); })),
    by_customer_(select(c, q::by_customer, row_,
                        [&](soci::statement& st) {
                          st.exchange(soci::use(key_app_id_, "key_app_id"));
                          st.exchange(soci::use(key_user_, "key_user"));
                          st.exchange(soci::use(key_environment_, "key_environment"));
                          st.exchange(soci::use(key_before_, "key_before"));
                          st.exchange(soci::use(key_before_id_, "key_before_id"));
                          st.exchange(soci::use(key_limit_, "key_limit"));
                        })),
    for_answer_(select(c, q::for_answer, row_,
                       [&](soci::statement& st) {
                         st.exchange(soci::use(key_app_id_, "key_app_id"));
                         st.exchange(soci::use(key_user_, "key_user"));
                         st.exchange(soci::use(key_environment_, "key_environment"));
                         st.exchange(soci::use(key_now_, "key_now"));
                         st.exchange(soci::into(has_grants_));
                       })),
    set_lookup_columns_(prepare(c.session(), std::string(q::set_lookup_columns),
                                [&](soci::statement& st) {
                                  st.exchange(soci::use(row_.active_until.value,
                                                        row_.active_until.ind, "active_until"));
                                  st.exchange(soci::use(row_.recency, "recency"));
                                  st.exchange(soci::use(row_.product_key, "product_key"));
                                  st.exchange(soci::use(key_id_, "key_id"));
                                })),
    due_(select(c, c.kind() == dialect::postgresql ? q::due_postgresql : q::due_sqlite, row_,
                [&](soci::statement& st) {
                  st.exchange(soci::use(key_now_, "key_now"));
                  st.exchange(soci::use(key_limit_, "key_limit"));
                })) {}

std::optional<mp::purchase> purchase_repository::find(const std::string& id) {
  key_id_ = id;
  if (!fetch_single(find_))
    return std::nullopt;
  return row_.purchase();
}

std::optional<mp::purchase> purchase_repository::find_by_key(const std::string& app_id,
                                                             mp::marketplace market,
                                                             model::environment env,
                                                             const std::string& key) {
  key_app_id_ = app_id;
  key_marketplace_ = std::string(to_string(market));
  key_environment_ = std::string(to_string(env));
  key_purchase_key_ = key;
  if (!fetch_single(find_by_key_))
    return std::nullopt;
  return row_.purchase();
}

void purchase_repository::insert(const mp::purchase& p, std::optional<model::unix_ms> next_change) {
  row_.assign(p, next_change);
  execute_change(insert_);
}

bool purchase_repository::update(const mp::purchase& p, std::optional<model::unix_ms> next_change) {
  row_.assign(p, next_change);
  key_id_ = p.id;
  return execute_change(update_) == 1;
}

void purchase_repository::remove(const std::string& id) {
  key_id_ = id;
  execute_change(remove_keys_);
  execute_change(remove_);
}

bool purchase_repository::add_key(const mp::purchase& p, const std::string& key) {
  k_app_id_ = p.app_id;
  k_marketplace_ = std::string(to_string(p.market));
  k_environment_ = std::string(to_string(p.env));
  k_key_ = key;
  k_purchase_id_ = p.id;
  return execute_change(insert_key_) == 1;
}

std::vector<mp::purchase> purchase_repository::by_customer(const std::string& app_id,
                                                          const std::string& user_identifier,
                                                          model::environment env,
                                                          const purchase_cursor& cursor,
                                                          int limit) {
  key_app_id_ = app_id;
  key_user_ = user_identifier;
  key_environment_ = std::string(to_string(env));
  key_before_ = cursor.created_at;
  key_before_id_ = cursor.id;
  key_limit_ = limit;
  std::vector<mp::purchase> out;
  for_each_row(by_customer_, [&] { out.push_back(row_.purchase()); });
  return out;
}

purchase_repository::answer_purchases
purchase_repository::for_answer(const std::string& app_id, const std::string& user_identifier,
                                model::environment env, model::unix_ms now) {
  key_app_id_ = app_id;
  key_user_ = user_identifier;
  key_environment_ = std::string(to_string(env));
  key_now_ = now;
  answer_purchases out;
  bool grants = false;
  for_each_row(for_answer_, [&] {
    out.purchases.push_back(row_.purchase());
    grants = has_grants_ != 0;
  });
  out.grants_possible = out.purchases.empty() || grants;
  return out;
}

bool purchase_repository::set_lookup_columns(const mp::purchase& p) {
  row_.assign(p, std::nullopt);
  key_id_ = p.id;
  return execute_change(set_lookup_columns_) == 1;
}

std::vector<std::pair<mp::purchase, model::unix_ms>> purchase_repository::due(model::unix_ms now,
                                                                              int limit) {
  key_now_ = now;
  key_limit_ = limit;
  std::vector<std::pair<mp::purchase, model::unix_ms>> out;
  for_each_row(due_, [&] { out.emplace_back(row_.purchase(), row_.next_change_at.value); });
  return out;
}

} // namespace receiptd::db
