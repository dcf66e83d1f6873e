#pragma once
// purchases and purchase_keys (db/migrations/012_purchases.sql) through
// statements prepared once per session: the In-App Purchase resources
// (model/purchases/) as the database stores them.

#include <optional>
#include <string>
#include <string_view>
#include <vector>


#include "db/connection.hpp"
#include "db/database.hpp"
#include "db/statements.hpp"
#include "model/purchases/purchase.hpp"

namespace receiptd::db {

struct purchase_row {
  std::string id;
  std::string app_id;
  std::string marketplace;
  std::string environment;
  nullable<std::string> user_identifier;
  std::string product_id;
  std::string facts; // model::purchases::facts_json
  long long versions = 0;
  nullable<long long> next_change_at; // the period-end timer
  long long created_at = 0;
  long long updated_at = 0;
  // What the customer answer selects by (013_customer_lookup.sql), from the facts.
  nullable<long long> active_until; // model::purchases::active_until
  long long recency = 0;            // model::purchases::recency_of
  std::string product_key;          // model::purchases::product_key

  template <class F>
  void all_columns(F&& f) {
    f("id", id);
    f("app_id", app_id);
    f("marketplace", marketplace);
    f("environment", environment);
    f("user_identifier", user_identifier);
    f("product_id", product_id);
    f("facts", facts);
    f("versions", versions);
    f("next_change_at", next_change_at);
    f("created_at", created_at);
    f("updated_at", updated_at);
    f("active_until", active_until);
    f("recency", recency);
    f("product_key", product_key);
  }

  void assign(const model::purchases::purchase& p, std::optional<model::unix_ms> next_change);
  model::purchases::purchase purchase() const; // throws corrupt_row
};

// The purchases table's columns, and purchases as rows of them, a JSON array's
// text: for a statement that writes purchases with other rows at once
// (db/sql_records.hpp, insert_many_starting).
std::vector<std::string_view> purchase_columns();
struct purchase_to_write {
  const model::purchases::purchase* purchase;
  std::optional<model::unix_ms> next_change;
};
std::string purchase_json_rows(const std::vector<purchase_to_write>& purchases);

class purchase_repository {
public:
  explicit purchase_repository(connection& c);
  purchase_repository(const purchase_repository&) = delete;
  purchase_repository& operator=(const purchase_repository&) = delete;

  std::optional<model::purchases::purchase> find(const std::string& id);
  // The purchase this key names, locked for the transaction (PostgreSQL).
  std::optional<model::purchases::purchase> find_by_key(const std::string& app_id,
                                                        model::purchases::marketplace market,
                                                        model::environment env,
                                                        const std::string& key);
  void insert(const model::purchases::purchase& p, std::optional<model::unix_ms> next_change);
  // Its columns; false when there is no such purchase.
  bool update(const model::purchases::purchase& p, std::optional<model::unix_ms> next_change);
  // Removes a purchase this transaction made, and its keys.
  void remove(const std::string& id);
  // The key names the purchase from now on; false when it names another one.
  bool add_key(const model::purchases::purchase& p, const std::string& key);
  // A customer's purchases in one environment, newest first, after `cursor`.
  std::vector<model::purchases::purchase> by_customer(const std::string& app_id,
                                                      const std::string& user_identifier,
                                                      model::environment env,
                                                      const purchase_cursor& cursor, int limit);
  // The ones the customer's answer reads at `now`, newest first
  // (model::purchases::answer_purchases): a few index probes, not every purchase;
  // and whether the customer may have grants (false only when a purchase was
  // found and the customer has none).
  struct answer_purchases {
    std::vector<model::purchases::purchase> purchases;
    bool grants_possible = true;
  };
  answer_purchases for_answer(const std::string& app_id, const std::string& user_identifier,
                              model::environment env, model::unix_ms now);
  // Fills the customer answer's columns of a purchase stored before them
  // (db/backfill.cpp); false when there is no such purchase.
  bool set_lookup_columns(const model::purchases::purchase& p);
  // Purchases whose period-end timer is due at `now`, oldest first (locked on
  // PostgreSQL, others' locked rows skipped), each with the time it was due.
  std::vector<std::pair<model::purchases::purchase, model::unix_ms>> due(model::unix_ms now,
                                                                         int limit);

private:
  // Bound by reference into the statements below: declared first, never moved.
  purchase_row row_;
  std::string key_id_;
  std::string key_app_id_;
  std::string key_marketplace_;
  std::string key_environment_;
  std::string key_purchase_key_;
  std::string key_user_;
  long long key_before_ = 0;
  std::string key_before_id_;
  int key_limit_ = 0;
  long long key_now_ = 0;
  int has_grants_ = 0; // for_answer's last column
  // insert_key's values
  std::string k_app_id_, k_marketplace_, k_environment_, k_key_, k_purchase_id_;

  soci::statement find_;
  soci::statement find_by_key_;
  soci::statement insert_;
  soci::statement update_;
  soci::statement insert_key_;
  soci::statement remove_keys_;
  soci::statement remove_;
  soci::statement by_customer_;
  soci::statement for_answer_;
  soci::statement set_lookup_columns_;
  soci::statement due_;
};

} // namespace receiptd::db
