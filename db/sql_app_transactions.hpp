#pragma once
// store_a_app_transactions (db/migrations/020_store_a_app_transactions.sql); the
// record table's own statements are db/record_table.hpp's.

#include <string_view>

namespace receiptd::db::sql::app_transactions {

// The customer lookup's original application versions: one index range of
// (app_id, user_identifier).
inline constexpr std::string_view original_versions
  = "SELECT original_application_version FROM store_a_app_transactions"
    " WHERE app_id = :key_app_id AND user_identifier = :key_user"
    " AND validation_state = 'validated' AND fraud_reason = ''"
    " AND environment IN (:key_env, :key_other_env)"
    " AND original_application_version IS NOT NULL";

} // namespace receiptd::db::sql::app_transactions
