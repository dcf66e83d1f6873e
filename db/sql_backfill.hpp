#pragma once
// The passes over existing records that model code makes (db/backfill.cpp).

#include <string_view>

namespace receiptd::db::sql::backfill {

inline constexpr std::string_view done
  = "SELECT COUNT(*) FROM data_backfills WHERE name = :name";
inline constexpr std::string_view mark
  = "INSERT INTO data_backfills (name, done_at) VALUES (:name, :now) ON CONFLICT (name) DO NOTHING";
// {table}: one of the record tables; a page of ids after :after.
inline constexpr std::string_view page
  = "SELECT id FROM {table} WHERE id > :after ORDER BY id LIMIT 200";
inline constexpr std::string_view rekey_receipt
  = "UPDATE store_a_receipts SET receipt_hash = :hash WHERE id = :id AND NOT EXISTS"
    " (SELECT 1 FROM store_a_receipts o WHERE o.app_id = :app_id AND o.receipt_hash = :hash)";

} // namespace receiptd::db::sql::backfill
