#pragma once
// apps and access_tokens through statements prepared once per session.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/connection.hpp"
#include "db/sql_apps.hpp"
#include "db/statements.hpp"
#include "model/app.hpp"

namespace receiptd::db {

struct app_row {
  std::string id;
  std::string name;
  std::string bundle_id;
  std::string package_name;
  std::string store_a_shared_secret;
  std::string store_b_public_key;
  std::string store_b_service_account;
  std::string app_store_issuer_id;
  std::string app_store_key_id;
  std::string app_store_private_key;
  int accept_storekit_test_receipts = 0;
  std::string transfer_policy = "transfer";
  std::string rtdn_token;
  int acknowledge_purchases = 0;
  std::string entitlement_rules = "{}";
  std::string customer_lookup = "client";
  std::string customer_id_from = "none";
  int has_webhooks = 0; // computed by the SELECTs, never written

  template <class F>
  void key_columns(F&& f) {
    f("id", id);
  }
  template <class F>
  void data_columns(F&& f) {
    f("name", name);
    f("bundle_id", bundle_id);
    f("package_name", package_name);
    f("store_a_shared_secret", store_a_shared_secret);
    f("store_b_public_key", store_b_public_key);
    f("store_b_service_account", store_b_service_account);
    f("app_store_issuer_id", app_store_issuer_id);
    f("app_store_key_id", app_store_key_id);
    f("app_store_private_key", app_store_private_key);
    f("accept_storekit_test_receipts", accept_storekit_test_receipts);
    f("transfer_policy", transfer_policy);
    f("rtdn_token", rtdn_token);
    f("acknowledge_purchases", acknowledge_purchases);
    f("entitlement_rules", entitlement_rules);
    f("customer_lookup", customer_lookup);
    f("customer_id_from", customer_id_from);
  }
  // What INSERT writes.
  template <class F>
  void all_columns(F&& f) {
    key_columns(f);
    data_columns(f);
  }
  // What SELECT reads: the stored columns and the computed has_webhooks (its
  // "name" is the SQL expression, db/sql_apps.hpp).
  template <class F>
  void read_columns(F&& f) {
    all_columns(f);
    f(sql::apps::has_webhooks_column, has_webhooks);
  }

  void assign(const model::app& a);
  model::app app() const;
};

struct token_row {
  std::string id;
  std::string app_id;
  std::string token_hash;
  long long created_at = 0;
  nullable<long long> revoked_at;
  std::string kind = "client";

  template <class F>
  void all_columns(F&& f) {
    f("id", id);
    f("app_id", app_id);
    f("token_hash", token_hash);
    f("created_at", created_at);
    f("revoked_at", revoked_at);
    f("kind", kind);
  }

  void assign(const token_info& t);
  token_info token() const;
};

class app_repository {
public:
  explicit app_repository(connection& c);
  app_repository(const app_repository&) = delete;
  app_repository& operator=(const app_repository&) = delete;

  void insert(const model::app& a);
  bool update(const model::app& a); // false: no such app
  std::vector<model::app> list();
  std::optional<model::app> find_by_id(const std::string& id);
  std::optional<model::app> find_by_name(const std::string& name);
  // The app of a non-revoked token, and the token's kind.
  std::optional<token_owner> find_by_token_hash(const std::string& token_hash);

  void insert_token(const token_info& t);
  bool revoke_token(const std::string& id_or_hash, model::unix_ms now);
  std::vector<token_info> list_tokens(const std::string& app_id);

  // The auth revision: bumped by trigger on every change to apps, access_tokens or
  // webhook_endpoints.
  std::int64_t revision();

private:
  std::optional<model::app> fetch_app(soci::statement& st);

  // Bound by reference into the statements below: declared first, never moved.
  app_row app_;
  token_row token_;
  std::string key_id_;
  std::string key_name_;
  std::string key_token_hash_;
  std::string key_app_id_;
  long long revoked_at_ = 0;
  long long revision_ = 0;
  std::string found_token_kind_;

  soci::statement insert_;
  soci::statement update_;
  soci::statement list_;
  soci::statement find_by_id_;
  soci::statement find_by_name_;
  soci::statement find_by_token_hash_;
  soci::statement insert_token_;
  soci::statement revoke_token_;
  soci::statement list_tokens_;
  soci::statement revision_read_;
};

// Installs the triggers that bump the auth revision (db/sql_apps.hpp) when any is
// missing, in a write transaction under the migration lock (several processes may
// start at once). Run after the migrations, which create the revision's table.
void install_auth_revision_triggers(connection& c);

} // namespace receiptd::db
