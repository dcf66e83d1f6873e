#pragma once
// store_b_purchase_orders through statements prepared once per session.

#include <optional>
#include <string>

#include "db/connection.hpp"
#include "db/record_rows.hpp"

namespace receiptd::db {

class purchase_order_repository {
public:
  explicit purchase_order_repository(connection& c);
  purchase_order_repository(const purchase_order_repository&) = delete;
  purchase_order_repository& operator=(const purchase_order_repository&) = delete;

  std::optional<model::purchase_order_record> find(const std::string& id);
  // The stored record for the same proof (app and purchase token) as `incoming`;
  // PostgreSQL keeps its row locked until the transaction ends.
  std::optional<model::purchase_order_record>
  find_for_update(const model::purchase_order_record& incoming);
  // False when the proof is already stored (a concurrent first upload won).
  bool insert(const model::purchase_order_record& r);
  // Rewrites the upload and verdict columns of the record with r.id.
  void update(const model::purchase_order_record& r);
  // Rewrites the verdict columns only; false when there is no such record.
  bool update_verdict(const model::purchase_order_record& r);
  // Locks the record's row for the transaction (PostgreSQL); false when it is absent.
  bool lock(const std::string& id);

private:
  // Bound by reference into the statements below: declared first, never moved.
  purchase_order_row row_;
  std::string key_id_;
  std::string key_app_id_;
  std::string key_purchase_token_;

  soci::statement find_by_id_;
  soci::statement find_by_key_;
  soci::statement insert_;
  soci::statement update_;
  soci::statement update_verdict_;
  soci::statement lock_;
};

} // namespace receiptd::db
