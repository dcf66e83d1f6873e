#pragma once
// Webhooks out and store notifications in (db/migrations/006). {columns}
// etc. are rendered from the rows of db/webhook_repository.hpp and
// db/notification_repository.hpp; :key_* parameters are lookup keys.

#include <string_view>

namespace receiptd::db::sql {

namespace webhook_endpoints {

inline constexpr std::string_view insert
  = "INSERT INTO webhook_endpoints ({columns}) VALUES ({parameters})";
inline constexpr std::string_view list_by_app
  = "SELECT {columns} FROM webhook_endpoints"
    " WHERE app_id = :key_app_id ORDER BY created_at, id";
inline constexpr std::string_view list_all
  = "SELECT {columns} FROM webhook_endpoints ORDER BY app_id, created_at, id";
inline constexpr std::string_view remove = "DELETE FROM webhook_endpoints WHERE id = :key_id";
// Delivered ones stay, as the endpoint's history.
inline constexpr std::string_view remove_undelivered
  = "DELETE FROM webhook_deliveries WHERE endpoint_id = :key_id AND state <> 'delivered'";

} // namespace webhook_endpoints

namespace webhook_events {

// seq: the record's previous event's + 1. The caller holds the record's row lock
// (PostgreSQL; SQLite has one writer), so no other writer can take the same seq.
inline constexpr std::string_view insert
  = "INSERT INTO webhook_events (id, app_id, type, record_kind, record_id, body, created_at, seq)"
    " SELECT :id, :app_id, :type, :record_kind, :record_id, :body, :created_at,"
    " COALESCE(MAX(seq), 0) + 1 FROM webhook_events WHERE record_id = :key_record_id";

inline constexpr std::string_view find = "SELECT {columns} FROM webhook_events WHERE id = :key_id";

} // namespace webhook_events

namespace webhook_deliveries {

// One delivery of an event (app, record and seq copied from it), due at once. An
// endpoint that has one already keeps it (redeliver_event adds the missing ones).
inline constexpr std::string_view insert
  = "INSERT INTO webhook_deliveries (event_id, endpoint_id, app_id, record_id, seq, state,"
    " attempts, next_attempt_at, lease_owner, lease_until, version, last_error, delivered_at)"
    " SELECT id, :endpoint_id, app_id, record_id, seq, 'pending', 0, :next_attempt_at, NULL,"
    " NULL, 0, '', NULL FROM webhook_events WHERE id = :key_event_id"
    " ON CONFLICT (event_id, endpoint_id) DO NOTHING";

// What a delivery carries beside its own columns (delivery_row::read_columns): the
// event's and the endpoint's, '' once the endpoint is removed.
inline constexpr const char* event_type_column
  = "(SELECT e.type FROM webhook_events e WHERE e.id = webhook_deliveries.event_id)";
inline constexpr const char* event_body_column
  = "(SELECT e.body FROM webhook_events e WHERE e.id = webhook_deliveries.event_id)";
inline constexpr const char* endpoint_url_column
  = "COALESCE((SELECT p.url FROM webhook_endpoints p"
    " WHERE p.id = webhook_deliveries.endpoint_id), '')";
inline constexpr const char* endpoint_secret_column
  = "COALESCE((SELECT p.secret FROM webhook_endpoints p"
    " WHERE p.id = webhook_deliveries.endpoint_id), '')";

// Newest event first (event ids sort by creation time).
inline constexpr std::string_view list_by_app
  = "SELECT {columns} FROM webhook_deliveries WHERE app_id = :key_app_id"
    " ORDER BY event_id DESC, endpoint_id LIMIT :limit";
inline constexpr std::string_view list_all
  = "SELECT {columns} FROM webhook_deliveries ORDER BY event_id DESC, endpoint_id LIMIT :limit";

// Every delivery of the event to an endpoint that still exists, as new: pending,
// no attempts, due now; version bumped, so that a send still in flight cannot
// finish it.
inline constexpr std::string_view redeliver
  = "UPDATE webhook_deliveries SET state = 'pending', attempts = 0,"
    " next_attempt_at = :next_attempt_at, lease_owner = NULL, lease_until = NULL,"
    " version = version + 1, last_error = '', delivered_at = NULL"
    " WHERE event_id = :key_event_id"
    " AND endpoint_id IN (SELECT id FROM webhook_endpoints)";

// A claim goes endpoint by endpoint (db::webhook_repository::claim): each takes
// at most its room, its max-concurrent-per-endpoint less the deliveries the
// claimer holds there now, so an endpoint that hangs holds its own slots and no
// one else's. First, every endpoint with the due time of its oldest pending
// delivery (NULL: none pending) and how many of its deliveries the claimer holds
// (leased to it, lease running). Both are index lookups (db/migrations/010).
inline constexpr std::string_view claim_rooms
  = "SELECT p.id,"
    " (SELECT MIN(d.next_attempt_at) FROM webhook_deliveries d"
    "  WHERE d.endpoint_id = p.id AND d.state = 'pending'),"
    " (SELECT COUNT(*) FROM webhook_deliveries h WHERE h.endpoint_id = p.id"
    "  AND h.lease_owner = :held_by AND h.lease_until > :held_at)"
    " FROM webhook_endpoints p";

// Then the claimable deliveries of one endpoint: pending, due, lease free or
// expired, and no earlier (lower seq) pending delivery of the same record, leased
// or not: a record's events reach an endpoint in order, and a dead or delivered
// one no longer holds the next back. Oldest due first.
#define RECEIPTD_CLAIMABLE_DELIVERIES                                                              \
  "SELECT d.event_id, d.endpoint_id FROM webhook_deliveries d"                                     \
  " WHERE d.endpoint_id = :key_endpoint_id AND d.state = 'pending'"                                \
  " AND d.next_attempt_at <= :due_at"                                                              \
  " AND (d.lease_until IS NULL OR d.lease_until <= :lease_free_at)"                                \
  " AND NOT EXISTS (SELECT 1 FROM webhook_deliveries b WHERE b.endpoint_id = d.endpoint_id"        \
  "  AND b.record_id = d.record_id AND b.state = 'pending' AND b.seq < d.seq)"                     \
  " ORDER BY d.next_attempt_at, d.event_id LIMIT :batch_size"

// As the jobs' claim (db/sql_jobs.hpp): SKIP LOCKED passes over rows another
// claimer holds; such a row is pending, so it also holds back the later ones of
// its endpoint and record.
inline constexpr std::string_view claim_postgresql
  = "WITH due AS MATERIALIZED (" RECEIPTD_CLAIMABLE_DELIVERIES " FOR UPDATE OF d SKIP LOCKED)"
    " UPDATE webhook_deliveries"
    " SET lease_owner = :lease_owner, lease_until = :lease_until, version = version + 1"
    " WHERE (event_id, endpoint_id) IN (SELECT event_id, endpoint_id FROM due)"
    " RETURNING {columns}";

// SQLite runs it inside BEGIN IMMEDIATE: one writer at a time, nothing to skip.
inline constexpr std::string_view claim_sqlite
  = "UPDATE webhook_deliveries"
    " SET lease_owner = :lease_owner, lease_until = :lease_until, version = version + 1"
    " WHERE (event_id, endpoint_id) IN (" RECEIPTD_CLAIMABLE_DELIVERIES ")"
    " RETURNING {columns}";

#undef RECEIPTD_CLAIMABLE_DELIVERIES

// Fenced: a later claim (the lease expired), a redelivery or the endpoint's
// removal (its undelivered deliveries go with it) makes this one a no-op, and a
// claim is finished once (finishing releases the lease).
inline constexpr std::string_view finish
  = "UPDATE webhook_deliveries SET state = :state, attempts = :attempts,"
    " next_attempt_at = :next_attempt_at, last_error = :last_error,"
    " delivered_at = :delivered_at, lease_owner = NULL, lease_until = NULL"
    " WHERE event_id = :key_event_id AND endpoint_id = :key_endpoint_id"
    " AND version = :key_version AND lease_owner IS NOT NULL";

} // namespace webhook_deliveries

namespace store_notifications {

// The idempotency key is (app_id, store, notification_id): a duplicate inserts
// nothing (PostgreSQL waits for a concurrent first one to end to know).
inline constexpr std::string_view insert
  = "INSERT INTO store_notifications ({columns}) VALUES ({parameters})"
    " ON CONFLICT (app_id, store, notification_id) DO NOTHING";

// The StoreKit 2 records a notification is about, locked in id order (the order
// every notification locks them in). {columns}: transaction_row's.
inline constexpr std::string_view transactions_postgresql
  = "SELECT {columns} FROM store_a_transactions WHERE app_id = :key_app_id"
    " AND (transaction_key = :key_transaction_id"
    " OR original_transaction_id = :key_original_transaction_id)"
    " ORDER BY id FOR UPDATE";
inline constexpr std::string_view transactions_sqlite
  = "SELECT {columns} FROM store_a_transactions WHERE app_id = :key_app_id"
    " AND (transaction_key = :key_transaction_id"
    " OR original_transaction_id = :key_original_transaction_id)"
    " ORDER BY id";

// The app's receipts holding an in-app purchase of that transaction id (the
// caller locks and reads each).
inline constexpr std::string_view receipts
  = "SELECT DISTINCT r.id FROM store_a_receipts r"
    " JOIN store_a_in_app_purchases p ON p.receipt_id = r.id"
    " WHERE r.app_id = :key_app_id AND p.transaction_id = :key_transaction_id ORDER BY r.id";

} // namespace store_notifications

} // namespace receiptd::db::sql
