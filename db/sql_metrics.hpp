#pragma once
// What the operational endpoints read: the revalidation queue and the webhook
// outbox for GET /metrics. (GET /readyz reads the migrator's own list, sql_migrations.hpp.)

#include <string_view>

namespace receiptd::db::sql::metrics {

// One pass over validation_jobs, every job in exactly one state: due (its
// next_attempt_at has come and its lease is free or expired: what a claim takes,
// sql_jobs.hpp), leased (its lease runs), or scheduled (not due yet); and the
// earliest next_attempt_at among the due ones (NULL when none is due). Each use of
// "now" is a parameter of its own, as in the claim.
inline constexpr std::string_view job_queue
  = "SELECT"
    " COALESCE(SUM(CASE WHEN next_attempt_at <= :due_now"
    "   AND (lease_until IS NULL OR lease_until <= :due_free_now) THEN 1 ELSE 0 END), 0),"
    " COALESCE(SUM(CASE WHEN lease_until > :leased_now THEN 1 ELSE 0 END), 0),"
    " COUNT(*),"
    " MIN(CASE WHEN next_attempt_at <= :oldest_now"
    "   AND (lease_until IS NULL OR lease_until <= :oldest_free_now) THEN next_attempt_at END)"
    " FROM validation_jobs";

// The webhook deliveries still to make (pending: not delivered, not dead), and
// when the oldest of their events was made.
inline constexpr std::string_view webhook_outbox
  = "SELECT COUNT(*), MIN(e.created_at) FROM webhook_deliveries d"
    " JOIN webhook_events e ON e.id = d.event_id WHERE d.state = 'pending'";

} // namespace receiptd::db::sql::metrics
