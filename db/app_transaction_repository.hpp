#pragma once
// store_a_app_transactions: StoreKit 2 app transactions through the generic
// record table (db/record_table.hpp), keyed by app_transaction_key; and a
// customer's original application versions (the entitlement rules' version
// subjects).

#include <string>
#include <vector>

#include "db/record_table.hpp"
#include "model/store_a/app_transaction.hpp"

namespace receiptd::db {

struct app_transaction_table {
  static constexpr model::record_kind kind = model::record_kind::store_a_app_transaction;
  using row = app_transaction_row;
  using record = model::store_a::app_transaction_record;
  static constexpr std::string_view name = "store_a_app_transactions";
  static const std::string& proof(const record& r) { return r.app_transaction_key; }
};

// The record table, and the customer lookup's query.
class app_transaction_repository : public record_table<app_transaction_table> {
public:
  explicit app_transaction_repository(connection& c);

  // The originalApplicationVersion of the app transactions of a customer that
  // are validated, not fraud and in one of the two environments (the same
  // twice for one), by the (app_id, user_identifier) index.
  std::vector<std::string> original_versions(const std::string& app_id,
                                             const std::string& user_identifier,
                                             std::string_view env, std::string_view other_env);

private:
  std::string key_app_id_;
  std::string key_user_;
  std::string key_env_;
  std::string key_other_env_;
  nullable<std::string> version_;
  soci::statement versions_;
};

} // namespace receiptd::db
