#include "db/customer_repository.hpp"

#include <algorithm>

#include "db/sql_customers.hpp"
#include "db/migrator.hpp"

namespace receiptd::db {

namespace mp = model::purchases;

void grant_row::assign(const mp::grant& g) {
  id = g.id;
  app_id = g.app_id;
  environment = std::string(to_string(g.env));
  user_identifier = g.user_identifier;
  entitlement = g.entitlement;
  starts_at = g.starts_at;
  expires_at = g.expires_at;
  created_at = g.created_at;
}

mp::grant grant_row::grant() const {
  mp::grant g;
  g.id = id;
  g.app_id = app_id;
  g.env = parse_column(model::parse_environment(environment), "environment", environment);
  g.user_identifier = user_identifier;
  g.entitlement = entitlement;
  g.starts_at = starts_at;
  g.expires_at = expires_at;
  g.created_at = created_at;
  return g;
}

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string::npos)
      comma = text.size();
    if (comma > start)
      out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names)
    out += (out.empty() ? "" : ",") + n;
  return out;
}

} // namespace

customer_repository::customer_repository(connection& c)
  : ensure_(prepare(c.session(), std::string(sql::customers::ensure),
                    [&](soci::statement& st) {
                      st.exchange(soci::use(app_id_, "app_id"));
                      st.exchange(soci::use(environment_, "environment"));
                      st.exchange(soci::use(user_, "user_identifier"));
                      st.exchange(soci::use(now_, "now"));
                    })),
    lock_(prepare(c.session(),
                  std::string(c.kind() == dialect::postgresql ? sql::customers::lock_postgresql
                                                              : sql::customers::lock_sqlite),
                  [&](soci::statement& st) {
                    st.exchange(soci::into(active_));
                    st.exchange(soci::use(app_id_, "app_id"));
                    st.exchange(soci::use(environment_, "environment"));
                    st.exchange(soci::use(user_, "user_identifier"));
                  })),
    store_(prepare(c.session(), std::string(sql::customers::store),
                   [&](soci::statement& st) {
                     st.exchange(soci::use(active_, "active"));
                     st.exchange(soci::use(now_, "now"));
                     st.exchange(soci::use(app_id_, "app_id"));
                     st.exchange(soci::use(environment_, "environment"));
                     st.exchange(soci::use(user_, "user_identifier"));
                   })),
    insert_grant_(prepare_insert(c.session(), sql::grants::insert, grant_)),
    grants_(prepare(c.session(),
                    render(sql::grants::of_customer,
                           column_names([&](auto f) { grant_.all_columns(f); })),
                    [&](soci::statement& st) {
                      grant_.all_columns(bind_into{st});
                      st.exchange(soci::use(key_app_id_, "key_app_id"));
                      st.exchange(soci::use(key_user_, "key_user"));
                      st.exchange(soci::use(key_environment_, "key_environment"));
                    })),
    remove_grant_(prepare(c.session(), std::string(sql::grants::remove),
                          [&](soci::statement& st) {
                            st.exchange(soci::use(key_id_, "key_id"));
                            st.exchange(soci::use(key_app_id_, "key_app_id"));
                            st.exchange(soci::use(key_user_, "key_user"));
                            st.exchange(soci::use(key_entitlement_, "key_entitlement"));
                          })),
    ended_(prepare(c.session(),
                   render(sql::grants::ended, column_names([&](auto f) { grant_.all_columns(f); })),
                   [&](soci::statement& st) {
                     grant_.all_columns(bind_into{st});
                     st.exchange(soci::use(key_now_, "key_now"));
                     st.exchange(soci::use(key_limit_, "key_limit"));
                   })),
    announced_(prepare(c.session(), std::string(sql::grants::announced),
                       [&](soci::statement& st) { st.exchange(soci::use(key_id_, "key_id")); })) {}

std::vector<std::string> customer_repository::lock(const std::string& app_id,
                                                   model::environment env, const std::string& user,
                                                   model::unix_ms now) {
  app_id_ = app_id;
  environment_ = std::string(to_string(env));
  user_ = user;
  now_ = now;
  execute_change(ensure_);
  active_.clear();
  fetch_single(lock_);
  return split(active_);
}

void customer_repository::store(const std::string& app_id, model::environment env,
                                const std::string& user, const std::vector<std::string>& active,
                                model::unix_ms now) {
  app_id_ = app_id;
  environment_ = std::string(to_string(env));
  user_ = user;
  active_ = join(active);
  now_ = now;
  execute_change(store_);
}

void customer_repository::insert_grant(const mp::grant& g) {
  grant_.assign(g);
  execute_change(insert_grant_);
}

std::vector<mp::grant> customer_repository::grants(const std::string& app_id,
                                                   const std::string& user,
                                                   model::environment env) {
  key_app_id_ = app_id;
  key_user_ = user;
  key_environment_ = std::string(to_string(env));
  std::vector<mp::grant> out;
  for_each_row(grants_, [&] { out.push_back(grant_.grant()); });
  return out;
}

bool customer_repository::remove_grant(const std::string& app_id, const std::string& user,
                                       const std::string& entitlement, const std::string& id) {
  key_id_ = id;
  key_app_id_ = app_id;
  key_user_ = user;
  key_entitlement_ = entitlement;
  return execute_change(remove_grant_) == 1;
}

std::vector<mp::grant> customer_repository::ended_grants(model::unix_ms now, int limit) {
  key_now_ = now;
  key_limit_ = limit;
  std::vector<mp::grant> out;
  for_each_row(ended_, [&] { out.push_back(grant_.grant()); });
  return out;
}

void customer_repository::mark_announced(const std::string& grant_id) {
  key_id_ = grant_id;
  execute_change(announced_);
}

void install_customer_change_triggers(connection& c) {
  namespace q = sql::customer_changes;
  if (c.kind() == dialect::postgresql)
    install_when_missing(c, q::count_postgresql, q::triggers_postgresql, q::install_postgresql);
}

} // namespace receiptd::db
