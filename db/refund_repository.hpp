#pragma once
// refund_requests, app_refund_settings and purchase_consumption
// (db/migrations/019_refund_requests.sql). Few rows and rare calls: each
// statement is prepared when it runs.

#include <optional>
#include <string>
#include <vector>

#include "db/connection.hpp"
#include "db/statements.hpp"
#include "model/purchases/refund_request.hpp"

namespace receiptd::db {

class refund_repository {
public:
  explicit refund_repository(connection& c) : c_(c) {}

  void insert(const model::purchases::refund_request& r);
  // Leases up to `limit` pending requests due at `now`; call inside a write
  // transaction. Each claim bumps the version its finish must present.
  std::vector<model::purchases::refund_request> claim(const std::string& owner, model::unix_ms now,
                                                      model::unix_ms lease_until, int limit);
  // Its state, outcome and next attempt, lease freed; fenced by version.
  bool finish(const model::purchases::refund_request& r);

  model::purchases::refund_settings settings(const std::string& app_id);
  void set_settings(const std::string& app_id, const model::purchases::refund_settings& s);

  model::purchases::consumption_report consumption(const std::string& purchase_id);
  void set_consumption(const std::string& purchase_id, const model::purchases::consumption_report& r,
                       model::unix_ms now);

  // The purchase (id, environment) of the app's Play order: the purchase order
  // whose orderId (or latest order id) it is, through its purchase token.
  std::optional<std::pair<std::string, std::string>> purchase_of_order(const std::string& app_id,
                                                                      const std::string& order_id);

  // The purchase's row locked for the transaction (PostgreSQL; SQLite's write
  // transaction holds the database): one writer of its refund_request at a time.
  void lock_purchase(const std::string& purchase_id);

private:
  std::optional<model::purchases::refund_request> find(const std::string& id);
  connection& c_;
};

} // namespace receiptd::db
