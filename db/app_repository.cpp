#include "db/app_repository.hpp"

#include "db/migrator.hpp"

namespace receiptd::db {

namespace {

soci::statement make_revoke(soci::session& s, long long& revoked_at, std::string& key_id,
                            std::string& key_hash) {
  return prepare(s, std::string(sql::tokens::revoke), [&](soci::statement& st) {
    st.exchange(soci::use(revoked_at, "revoked_at"));
    st.exchange(soci::use(key_id, "key_id"));
    st.exchange(soci::use(key_hash, "key_token_hash"));
  });
}

// SELECT app_row::read_columns … with one bound lookup key (none for a listing).
soci::statement prepare_app_select(soci::session& s, std::string_view tmpl, app_row& row,
                                   std::string* key = nullptr, const char* key_name = nullptr) {
  auto names = column_names([&](auto f) { row.read_columns(f); });
  return prepare(s, render(tmpl, names), [&](soci::statement& st) {
    row.read_columns(bind_into{st});
    if (key)
      st.exchange(soci::use(*key, std::string(key_name)));
  });
}

// SELECT app_row::read_columns, then the token's kind, by token hash.
soci::statement prepare_token_owner_select(soci::session& s, app_row& row, std::string& kind,
                                           std::string& key_token_hash) {
  auto names = column_names([&](auto f) { row.read_columns(f); });
  return prepare(s, render(sql::apps::find_by_token_hash, names), [&](soci::statement& st) {
    row.read_columns(bind_into{st});
    st.exchange(soci::into(kind));
    st.exchange(soci::use(key_token_hash, "key_token_hash"));
  });
}

} // namespace

void app_row::assign(const model::app& a) {
  id = a.id;
  name = a.name;
  bundle_id = a.bundle_id;
  package_name = a.package_name;
  store_a_shared_secret = a.store_a_shared_secret;
  store_b_public_key = a.store_b_public_key;
  store_b_service_account = a.store_b_service_account;
  app_store_issuer_id = a.app_store_issuer_id;
  app_store_key_id = a.app_store_key_id;
  app_store_private_key = a.app_store_private_key;
  accept_storekit_test_receipts = to_flag(a.accept_storekit_test_receipts);
  transfer_policy = model::to_string(a.transfers);
  rtdn_token = a.rtdn_token;
  acknowledge_purchases = to_flag(a.acknowledge_purchases);
  entitlement_rules = a.entitlement_rules;
  customer_lookup = model::to_string(a.customer_lookup);
  customer_id_from = model::to_string(a.customer_id_from);
}

model::app app_row::app() const {
  model::app a;
  a.id = id;
  a.name = name;
  a.bundle_id = bundle_id;
  a.package_name = package_name;
  a.store_a_shared_secret = store_a_shared_secret;
  a.store_b_public_key = store_b_public_key;
  a.store_b_service_account = store_b_service_account;
  a.app_store_issuer_id = app_store_issuer_id;
  a.app_store_key_id = app_store_key_id;
  a.app_store_private_key = app_store_private_key;
  a.accept_storekit_test_receipts = accept_storekit_test_receipts != 0;
  a.transfers = parse_column(model::parse_transfer_policy(transfer_policy), "transfer_policy",
                             transfer_policy);
  a.rtdn_token = rtdn_token;
  a.acknowledge_purchases = acknowledge_purchases != 0;
  a.entitlement_rules = entitlement_rules;
  a.customer_lookup = parse_column(model::parse_customer_lookup_policy(customer_lookup),
                                   "customer_lookup", customer_lookup);
  a.customer_id_from = parse_column(model::parse_customer_id_source(customer_id_from),
                                    "customer_id_from", customer_id_from);
  a.has_webhooks = has_webhooks != 0;
  return a;
}

void token_row::assign(const token_info& t) {
  id = t.id;
  app_id = t.app_id;
  token_hash = t.token_hash;
  created_at = t.created_at;
  revoked_at.set(t.revoked_at);
  kind = model::to_string(t.kind);
}

token_info token_row::token() const {
  return {id,         app_id,
          token_hash, created_at,
          revoked_at.get<model::unix_ms>(), parse_column(model::parse_token_kind(kind), "kind", kind)};
}

app_repository::app_repository(connection& c)
  : insert_(prepare_insert(c.session(), sql::apps::insert, app_)),
    update_(prepare_update(
      c.session(), sql::apps::update, [this](auto f) { app_.data_columns(f); }, key_id_)),
    list_(prepare_app_select(c.session(), sql::apps::list, app_)),
    find_by_id_(prepare_app_select(c.session(), sql::apps::find_by_id, app_, &key_id_, "key_id")),
    find_by_name_(
      prepare_app_select(c.session(), sql::apps::find_by_name, app_, &key_name_, "key_name")),
    find_by_token_hash_(prepare_token_owner_select(c.session(), app_, found_token_kind_,
                                                   key_token_hash_)),
    insert_token_(prepare_insert(c.session(), sql::tokens::insert, token_)),
    revoke_token_(make_revoke(c.session(), revoked_at_, key_id_, key_token_hash_)),
    list_tokens_(
      prepare_select(c.session(), sql::tokens::list, token_, &key_app_id_, "key_app_id")),
    revision_read_(prepare(c.session(), std::string(sql::auth_revision::read),
                           [this](soci::statement& st) { st.exchange(soci::into(revision_)); })) {}

void app_repository::insert(const model::app& a) {
  app_.assign(a);
  execute_change(insert_);
}

bool app_repository::update(const model::app& a) {
  app_.assign(a);
  key_id_ = a.id;
  return execute_change(update_) == 1;
}

std::vector<model::app> app_repository::list() {
  std::vector<model::app> out;
  for_each_row(list_, [&] { out.push_back(app_.app()); });
  return out;
}

std::optional<model::app> app_repository::fetch_app(soci::statement& st) {
  if (!fetch_single(st))
    return std::nullopt;
  return app_.app();
}

std::optional<model::app> app_repository::find_by_id(const std::string& id) {
  key_id_ = id;
  return fetch_app(find_by_id_);
}

std::optional<model::app> app_repository::find_by_name(const std::string& name) {
  key_name_ = name;
  return fetch_app(find_by_name_);
}

std::optional<token_owner> app_repository::find_by_token_hash(const std::string& token_hash) {
  key_token_hash_ = token_hash;
  if (!fetch_single(find_by_token_hash_))
    return std::nullopt;
  return token_owner{app_.app(), parse_column(model::parse_token_kind(found_token_kind_),
                                              "access_tokens.kind", found_token_kind_)};
}

void app_repository::insert_token(const token_info& t) {
  token_.assign(t);
  execute_change(insert_token_);
}

bool app_repository::revoke_token(const std::string& id_or_hash, model::unix_ms now) {
  revoked_at_ = now;
  key_id_ = id_or_hash;
  key_token_hash_ = id_or_hash;
  return execute_change(revoke_token_) > 0;
}

std::vector<token_info> app_repository::list_tokens(const std::string& app_id) {
  std::vector<token_info> out;
  key_app_id_ = app_id;
  for_each_row(list_tokens_, [&] { out.push_back(token_.token()); });
  return out;
}

std::int64_t app_repository::revision() {
  if (!fetch_single(revision_read_))
    throw std::runtime_error("auth_revision has no row");
  return revision_;
}

void install_auth_revision_triggers(connection& c) {
  namespace q = sql::auth_revision;
  if (c.kind() == dialect::postgresql)
    install_when_missing(c, q::count_postgresql, q::triggers_postgresql, q::install_postgresql);
  else
    install_when_missing(c, q::count_sqlite, q::triggers_sqlite, q::install_sqlite);
}

} // namespace receiptd::db
