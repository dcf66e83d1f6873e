#pragma once
// Revalidation jobs (DESIGN.md §5). {columns} is rendered from job_row
// (db/job_queue.hpp). A job is due when next_attempt_at <= now and its lease is free
// or expired; a claim leases it and bumps version, the fencing token that completion
// and rescheduling must present.

#include <string_view>

namespace receiptd::db::sql::jobs {

// A pending record keeps the job it has (attempts, lease and version included).
inline constexpr std::string_view insert_if_missing
  = "INSERT INTO validation_jobs (id, record_kind, record_id, app_id, attempts,"
    " next_attempt_at, lease_owner, lease_until, version, last_error)"
    " VALUES (:id, :record_kind, :record_id, :app_id, 0, :next_attempt_at, NULL, NULL, 0, '')"
    " ON CONFLICT (record_kind, record_id) DO NOTHING";

inline constexpr std::string_view delete_for_record
  = "DELETE FROM validation_jobs"
    " WHERE record_kind = :key_record_kind AND record_id = :key_record_id";

// Several receiptd instances claim from one PostgreSQL database: SKIP LOCKED passes
// over rows another claimer holds instead of waiting, and a row whose lease changed
// under us is re-checked against the WHERE clause before it is locked. MATERIALIZED
// makes the locking subquery run exactly once.
inline constexpr std::string_view claim_postgresql
  = "WITH due AS MATERIALIZED ("
    "  SELECT id FROM validation_jobs"
    "  WHERE next_attempt_at <= :due_at AND (lease_until IS NULL OR lease_until <= :lease_free_at)"
    "  ORDER BY next_attempt_at LIMIT :batch_size"
    "  FOR UPDATE SKIP LOCKED)"
    " UPDATE validation_jobs"
    " SET lease_owner = :lease_owner, lease_until = :lease_until, version = version + 1"
    " WHERE id IN (SELECT id FROM due)"
    " RETURNING {columns}";

// SQLite runs it inside BEGIN IMMEDIATE: one writer at a time, nothing to skip.
inline constexpr std::string_view claim_sqlite
  = "UPDATE validation_jobs"
    " SET lease_owner = :lease_owner, lease_until = :lease_until, version = version + 1"
    " WHERE id IN ("
    "  SELECT id FROM validation_jobs"
    "  WHERE next_attempt_at <= :due_at AND (lease_until IS NULL OR lease_until <= :lease_free_at)"
    "  ORDER BY next_attempt_at LIMIT :batch_size)"
    " RETURNING {columns}";

// Fenced: a claim that overtook this one (the lease expired) bumped version.
inline constexpr std::string_view delete_fenced
  = "DELETE FROM validation_jobs WHERE id = :key_id AND version = :key_version";

inline constexpr std::string_view reschedule_fenced
  = "UPDATE validation_jobs"
    " SET attempts = :attempts, next_attempt_at = :next_attempt_at, last_error = :last_error,"
    " lease_owner = NULL, lease_until = NULL"
    " WHERE id = :key_id AND version = :key_version";

inline constexpr std::string_view list
  = "SELECT {columns} FROM validation_jobs ORDER BY next_attempt_at, id";

} // namespace receiptd::db::sql::jobs
