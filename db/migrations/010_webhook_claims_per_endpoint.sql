-- 010: webhook deliveries claimed endpoint by endpoint (db/sql_webhooks.hpp).
--
-- Portable SQL as in 001 (SQLite and PostgreSQL both take partial indexes).

-- An endpoint's pending deliveries in the order a claim takes them; its oldest.
CREATE INDEX webhook_deliveries_pending_by_endpoint
  ON webhook_deliveries (endpoint_id, next_attempt_at, event_id) WHERE state = 'pending';
-- The deliveries of an endpoint a claimer holds (finishing one clears its owner).
CREATE INDEX webhook_deliveries_leased
  ON webhook_deliveries (endpoint_id, lease_owner) WHERE lease_owner IS NOT NULL;
-- The claim across endpoints, oldest due first, that these replace.
DROP INDEX webhook_deliveries_due;
