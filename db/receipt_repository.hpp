#pragma once
// store_a_receipts (the generic record table, db/record_table.hpp) and their
// store_a_in_app_purchases, which are written and read with each receipt.

#include <optional>
#include <string>

#include "db/record_table.hpp"

namespace receiptd::db {

class receipt_repository {
public:
  explicit receipt_repository(connection& c);
  receipt_repository(const receipt_repository&) = delete;
  receipt_repository& operator=(const receipt_repository&) = delete;

  // Two queries: call inside a read transaction for one snapshot.
  std::optional<model::receipt_record> find(const std::string& id);
  // The stored record for the same proof (app and receipt hash) as `incoming`;
  // PostgreSQL keeps its row locked until the transaction ends.
  std::optional<model::receipt_record> find_for_update(const model::receipt_record& incoming);
  // Whether the receipt the last find_for_update found had a revalidation job then.
  bool found_with_job() const { return receipts_.found_with_job(); }
  // False when the proof is already stored (a concurrent first upload won).
  bool insert(const model::receipt_record& r);
  // Rewrites the upload and verdict columns and the in-app purchases of r.id.
  void update(const model::receipt_record& r);
  // Rewrites the verdict columns and the in-app purchases; false when absent.
  bool update_verdict(const model::receipt_record& r);
  // Locks the record's row for the transaction (PostgreSQL); false when it is absent.
  bool lock(const std::string& id);

private:
  std::vector<model::apple_in_app_purchase> load_in_app_purchases(const std::string& id);
  void insert_in_app_purchases(const model::receipt_record& r);
  void replace_in_app_purchases(const model::receipt_record& r);

  record_table<receipt_table> receipts_;
  // Bound by reference into the statements below: declared first, never moved.
  in_app_purchase_row in_app_row_;
  std::string key_receipt_id_;

  soci::statement find_in_app_;
  soci::statement insert_in_app_;
  soci::statement delete_in_app_;
};

} // namespace receiptd::db
