#pragma once
// refund_requests, app_refund_settings and purchase_consumption
// (db/migrations/019_refund_requests.sql).

#include <string_view>

namespace receiptd::db::sql::refunds {

inline constexpr std::string_view insert
  = "INSERT INTO refund_requests ({columns}) VALUES ({parameters})";
inline constexpr std::string_view find = "SELECT {columns} FROM refund_requests WHERE id = :key";

// Due requests not leased by a live claimer. Several instances claim from one
// PostgreSQL database: SKIP LOCKED passes over rows another claimer holds.
// SQLite runs inside BEGIN IMMEDIATE.
inline constexpr std::string_view due
  = "SELECT id FROM refund_requests WHERE state = 'pending' AND next_attempt_at <= :due_at"
    " AND (lease_until IS NULL OR lease_until <= :free_at) ORDER BY next_attempt_at LIMIT :n";
inline constexpr std::string_view skip_locked = " FOR UPDATE SKIP LOCKED";
inline constexpr std::string_view lease
  = "UPDATE refund_requests SET lease_owner = :owner, lease_until = :until,"
    " version = version + 1 WHERE id = :key";
// The outcome of an attempt, unless another claimer leased the request since.
inline constexpr std::string_view finish
  = "UPDATE refund_requests SET state = :state, answered_at = :answered_at,"
    " sent = :sent, store_status = :store_status, attempts = :attempts,"
    " next_attempt_at = :next_attempt_at, last_error = :last_error,"
    " lease_owner = NULL, lease_until = NULL"
    " WHERE id = :key AND version = :key_version";

// The purchase a Play order id belongs to (its first or its latest order).
inline constexpr std::string_view purchase_of_order
  = "SELECT k.purchase_id, k.environment FROM store_b_purchase_orders o"
    " JOIN purchase_keys k ON k.app_id = o.app_id AND k.marketplace = 'store_b'"
    " AND k.purchase_key = o.purchase_token"
    " WHERE o.app_id = :app AND (o.order_id = :order OR o.latest_order_id = :latest)"
    " LIMIT 1";
inline constexpr std::string_view lock_purchase
  = "SELECT id FROM purchases WHERE id = :key FOR UPDATE";

inline constexpr std::string_view settings
  = "SELECT preference, customer_consent, sample_content_provided"
    " FROM app_refund_settings WHERE app_id = :key";
inline constexpr std::string_view set_settings
  = "INSERT INTO app_refund_settings (app_id, preference, customer_consent,"
    " sample_content_provided) VALUES (:key, :preference, :consent, :sample)"
    " ON CONFLICT (app_id) DO UPDATE SET preference = excluded.preference,"
    " customer_consent = excluded.customer_consent,"
    " sample_content_provided = excluded.sample_content_provided";

inline constexpr std::string_view consumption
  = "SELECT report FROM purchase_consumption WHERE purchase_id = :key";
inline constexpr std::string_view set_consumption
  = "INSERT INTO purchase_consumption (purchase_id, report, updated_at)"
    " VALUES (:key, :report, :at) ON CONFLICT (purchase_id) DO UPDATE"
    " SET report = excluded.report, updated_at = excluded.updated_at";

} // namespace receiptd::db::sql::refunds
