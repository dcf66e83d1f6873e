#pragma once
// store_a_receipts and their store_a_in_app_purchases through statements prepared
// once per session. A receipt's in-app purchases are written and read with it.

#include <optional>
#include <string>

#include "db/connection.hpp"
#include "db/record_rows.hpp"

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

  // Bound by reference into the statements below: declared first, never moved.
  receipt_row row_;
  in_app_purchase_row in_app_row_;
  std::string key_id_;
  std::string key_app_id_;
  std::string key_receipt_hash_;
  std::string key_receipt_id_;

  soci::statement find_by_id_;
  soci::statement find_by_key_;
  soci::statement insert_;
  soci::statement update_;
  soci::statement update_verdict_;
  soci::statement lock_;
  soci::statement find_in_app_;
  soci::statement insert_in_app_;
  soci::statement delete_in_app_;
};

} // namespace receiptd::db
