#pragma once
// The upkeep's statements: the subscription refresh sweeps (Play and
// StoreKit 2) and the Play voided purchases polls. {columns} is rendered from voided_poll_row
// (db/upkeep_repository.hpp).

#include <string_view>

namespace receiptd::db::sql::upkeep {

// Validated Play subscriptions whose expiry has passed while their state is not
// final (model::store_b::final_subscription_states), not voided, not refreshed
// since stale_before, and without a job: the oldest expiries first.
inline constexpr std::string_view refresh_candidates
  = "SELECT o.id, o.app_id FROM store_b_purchase_orders o"
    " WHERE o.product_kind = 'subscription' AND o.validation_state = 'validated'"
    " AND o.expiry_time < :now AND o.updated_at < :stale_before AND o.voided_time IS NULL"
    " AND (o.subscription_state IS NULL OR o.subscription_state NOT IN"
    "  ('SUBSCRIPTION_STATE_EXPIRED', 'SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED'))"
    " AND NOT EXISTS (SELECT 1 FROM validation_jobs j"
    "  WHERE j.record_kind = 'store_b_purchase_order' AND j.record_id = o.id)"
    " ORDER BY o.expiry_time LIMIT :batch_size";

// Validated auto-renewable StoreKit 2 transactions (never Xcode's: Apple does
// not know them) of apps with App Store Server API credentials, not revoked,
// whose subscription's expiry passed while its status is unknown or live
// (model::store_a::live_subscription_statuses), not refreshed since
// stale_before, and without a job: the oldest expiries first.
inline constexpr std::string_view transaction_refresh_candidates
  = "SELECT t.id, t.app_id FROM store_a_transactions t JOIN apps a ON a.id = t.app_id"
    " WHERE t.product_type = 'Auto-Renewable Subscription' AND t.validation_state = 'validated'"
    " AND COALESCE(t.subscription_expires_date, t.expires_date) < :now"
    " AND t.updated_at < :stale_before AND t.revocation_date IS NULL"
    " AND t.environment <> 'xcode'"
    " AND (t.subscription_status IS NULL OR t.subscription_status IN"
    "  ('active', 'billing_retry', 'grace_period'))"
    " AND a.app_store_issuer_id <> '' AND a.app_store_key_id <> ''"
    " AND a.app_store_private_key <> ''"
    " AND NOT EXISTS (SELECT 1 FROM validation_jobs j"
    "  WHERE j.record_kind = 'store_a_transaction' AND j.record_id = t.id)"
    " ORDER BY COALESCE(t.subscription_expires_date, t.expires_date) LIMIT :batch_size";

// Validated purchase orders whose order is still to be read (order_read_at
// NULL: never read, or a refund since), naming one (the Developer API's, else
// the purchase data's orderId), of apps with a service account: the least
// recently updated first.
inline constexpr std::string_view orders_due
  = "SELECT o.app_id, o.purchase_token, COALESCE(o.latest_order_id, o.order_id)"
    " FROM store_b_purchase_orders o JOIN apps a ON a.id = o.app_id"
    " WHERE o.validation_state = 'validated' AND o.order_read_at IS NULL"
    " AND COALESCE(o.latest_order_id, o.order_id) IS NOT NULL"
    " AND a.package_name <> '' AND a.store_b_service_account <> ''"
    " ORDER BY o.updated_at LIMIT :batch_size";

// Every app with a package name and a service account has a poll, first due now.
inline constexpr std::string_view add_missing_polls
  = "INSERT INTO store_b_voided_polls (app_id, window_start, page_token, high_water,"
    " next_poll_at, lease_owner, lease_until, version, last_error, polled_at)"
    " SELECT id, :window_start, '', :high_water, :now, NULL, NULL, 0, '', NULL FROM apps"
    " WHERE package_name <> '' AND store_b_service_account <> ''"
    " ON CONFLICT (app_id) DO NOTHING";

// Due polls of apps that can still be polled, leased (as validation_jobs are
// claimed: SKIP LOCKED on PostgreSQL, one writer at a time on SQLite).
inline constexpr std::string_view claim_postgresql
  = "WITH due AS MATERIALIZED ("
    "  SELECT p.app_id FROM store_b_voided_polls p JOIN apps a ON a.id = p.app_id"
    "  WHERE p.next_poll_at <= :due_at"
    "  AND (p.lease_until IS NULL OR p.lease_until <= :lease_free_at)"
    "  AND a.package_name <> '' AND a.store_b_service_account <> ''"
    "  ORDER BY p.next_poll_at LIMIT :batch_size"
    "  FOR UPDATE OF p SKIP LOCKED)"
    " UPDATE store_b_voided_polls"
    " SET lease_owner = :lease_owner, lease_until = :lease_until, version = version + 1"
    " WHERE app_id IN (SELECT app_id FROM due)"
    " RETURNING {columns}";

inline constexpr std::string_view claim_sqlite
  = "UPDATE store_b_voided_polls"
    " SET lease_owner = :lease_owner, lease_until = :lease_until, version = version + 1"
    " WHERE app_id IN ("
    "  SELECT p.app_id FROM store_b_voided_polls p JOIN apps a ON a.id = p.app_id"
    "  WHERE p.next_poll_at <= :due_at"
    "  AND (p.lease_until IS NULL OR p.lease_until <= :lease_free_at)"
    "  AND a.package_name <> '' AND a.store_b_service_account <> ''"
    "  ORDER BY p.next_poll_at LIMIT :batch_size)"
    " RETURNING {columns}";

// A page's progress or the poll's end, fenced by the claim (owner and version):
// lease_owner and lease_until NULL end the lease.
inline constexpr std::string_view store_fenced
  = "UPDATE store_b_voided_polls"
    " SET window_start = :window_start, page_token = :page_token, high_water = :high_water,"
    " next_poll_at = :next_poll_at, last_error = :last_error, polled_at = :polled_at,"
    " lease_owner = :new_lease_owner, lease_until = :new_lease_until"
    " WHERE app_id = :key_app_id AND version = :key_version AND lease_owner = :key_owner";

} // namespace receiptd::db::sql::upkeep
