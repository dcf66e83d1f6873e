#pragma once
// customers (what was last announced of a customer's active entitlements) and
// entitlement_grants (promotional grants) through statements prepared once per
// session.

#include <optional>
#include <string>
#include <vector>

#include "db/connection.hpp"
#include "db/statements.hpp"
#include "model/purchases/customer.hpp"

namespace receiptd::db {

struct grant_row {
  std::string id;
  std::string app_id;
  std::string environment;
  std::string user_identifier;
  std::string entitlement;
  long long starts_at = 0;
  long long expires_at = 0;
  long long created_at = 0;

  template <class F>
  void all_columns(F&& f) {
    f("id", id);
    f("app_id", app_id);
    f("environment", environment);
    f("user_identifier", user_identifier);
    f("entitlement", entitlement);
    f("starts_at", starts_at);
    f("expires_at", expires_at);
    f("created_at", created_at);
  }

  void assign(const model::purchases::grant& g);
  model::purchases::grant grant() const; // throws corrupt_row
};

class customer_repository {
public:
  explicit customer_repository(connection& c);
  customer_repository(const customer_repository&) = delete;
  customer_repository& operator=(const customer_repository&) = delete;

  // The customer's entitlements as last announced, its row locked for the
  // transaction (made, with none, when new).
  std::vector<std::string> lock(const std::string& app_id, model::environment env,
                                const std::string& user, model::unix_ms now);
  void store(const std::string& app_id, model::environment env, const std::string& user,
             const std::vector<std::string>& active, model::unix_ms now);

  void insert_grant(const model::purchases::grant& g);
  std::vector<model::purchases::grant> grants(const std::string& app_id, const std::string& user,
                                              model::environment env);
  // False when the customer has no such grant of that entitlement.
  bool remove_grant(const std::string& app_id, const std::string& user,
                    const std::string& entitlement, const std::string& id);
  // Grants whose end came by `now` and was not announced yet; then marked.
  std::vector<model::purchases::grant> ended_grants(model::unix_ms now, int limit);
  void mark_announced(const std::string& grant_id);

private:
  // Bound by reference into the statements below: declared first, never moved.
  grant_row grant_;
  std::string app_id_, environment_, user_, active_;
  long long now_ = 0;
  std::string key_id_, key_app_id_, key_user_, key_environment_, key_entitlement_;
  long long key_now_ = 0;
  int key_limit_ = 0;

  soci::statement ensure_;
  soci::statement lock_;
  soci::statement store_;
  soci::statement insert_grant_;
  soci::statement grants_;
  soci::statement remove_grant_;
  soci::statement ended_;
  soci::statement announced_;
};

// PostgreSQL: installs the triggers that notify other instances of changes to
// what customer answers show (db/sql_customers.hpp, sql::customer_changes) when
// any is missing, in a write transaction under the migration lock. SQLite:
// nothing. Run after the migrations.
void install_customer_change_triggers(connection& c);

} // namespace receiptd::db
