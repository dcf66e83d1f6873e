#pragma once
// The Play upkeep's tables: refresh candidates among the purchase
// orders, and store_b_voided_polls, through statements prepared once per session.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "db/connection.hpp"
#include "db/statements.hpp"
#include "model/records.hpp"
#include "model/store_b/voided_poll.hpp"

namespace receiptd::db {

struct voided_poll_row {
  std::string app_id;
  long long window_start = 0;
  std::string page_token;
  long long high_water = 0;
  long long next_poll_at = 0;
  nullable<std::string> lease_owner;
  nullable<long long> lease_until;
  long long version = 0;
  std::string last_error;
  nullable<long long> polled_at;

  template <class F>
  void all_columns(F&& f) {
    f("app_id", app_id);
    f("window_start", window_start);
    f("page_token", page_token);
    f("high_water", high_water);
    f("next_poll_at", next_poll_at);
    f("lease_owner", lease_owner);
    f("lease_until", lease_until);
    f("version", version);
    f("last_error", last_error);
    f("polled_at", polled_at);
  }

  model::store_b::voided_poll poll() const;
};

class upkeep_repository {
public:
  explicit upkeep_repository(connection& c);
  upkeep_repository(const upkeep_repository&) = delete;
  upkeep_repository& operator=(const upkeep_repository&) = delete;

  // (record id, app id) of up to `limit` subscriptions of that kind due for a
  // refresh (db/sql_upkeep.hpp): store_b_purchase_order or store_a_transaction.
  std::vector<std::pair<std::string, std::string>> refresh_candidates(model::record_kind kind,
                                                                      model::unix_ms now,
                                                                      model::unix_ms stale_before,
                                                                      int limit);
  // Gives every app that can be polled a poll (first window from `window_start`).
  void add_missing_polls(model::unix_ms now, model::unix_ms window_start);
  // Leases up to `limit` due polls; call inside a write transaction.
  std::vector<model::store_b::voided_poll> claim(const std::string& owner, model::unix_ms now,
                                                 model::unix_ms lease_until, int limit);
  // Stores the poll's cursor, next_poll_at and last_error, fenced by the claim
  // (owner, version); `keep_lease_until`: the lease goes on until then, else it
  // ends. False when the claim was overtaken.
  bool store(const std::string& owner, const model::store_b::voided_poll& p, model::unix_ms now,
             std::optional<model::unix_ms> keep_lease_until);

  // (app id, purchase token, order id) of up to `limit` purchase orders whose
  // order is to be read (db/sql_upkeep.hpp orders_due).
  struct order_due {
    std::string app_id;
    std::string purchase_token;
    std::string order_id;
  };
  std::vector<order_due> orders_due(int limit);

private:
  // The two sweeps' statements read and bind the same members.
  std::function<void(soci::statement&)> bind_candidates();

  // Bound by reference into the statements below: declared first, never moved.
  voided_poll_row row_;
  std::string found_id_;
  std::string found_app_id_;
  long long now_ = 0;
  long long stale_before_ = 0;
  long long window_start_ = 0;
  int batch_size_ = 0;
  std::string lease_owner_;
  long long lease_until_ = 0;
  // store_fenced's values
  voided_poll_row next_;
  nullable<std::string> new_lease_owner_;
  nullable<long long> new_lease_until_;
  std::string key_app_id_;
  long long key_version_ = 0;
  std::string key_owner_;
  std::string found_token_;
  std::string found_order_id_;

  soci::statement candidates_;             // Play subscriptions
  soci::statement transaction_candidates_; // StoreKit 2 subscriptions
  soci::statement add_missing_;
  soci::statement claim_;
  soci::statement store_;
  soci::statement orders_due_;
};

} // namespace receiptd::db
