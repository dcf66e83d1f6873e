-- 006: store notifications in, webhooks out.
--
-- Portable SQL as in 001. The triggers that bump the auth revision on a change to
-- webhook_endpoints (an app's has_webhooks is cached with its token lookups) are
-- per dialect and installed with the others by db::install_auth_revision_triggers
-- (db/sql_apps.hpp), as 003 explains.

-- What App Store Server Notifications say about a subscription (the newest one
-- applied: notified_at is its signedDate). subscription_status: 'active',
-- 'expired', 'billing_retry', 'grace_period', 'revoked'; auto_renew 0/1.
ALTER TABLE store_a_transactions ADD COLUMN subscription_status TEXT;
ALTER TABLE store_a_transactions ADD COLUMN subscription_expires_date BIGINT;
ALTER TABLE store_a_transactions ADD COLUMN auto_renew INTEGER;
ALTER TABLE store_a_transactions ADD COLUMN auto_renew_product_id TEXT;
ALTER TABLE store_a_transactions ADD COLUMN notified_at BIGINT;

-- 0 other, 1 an issue in the app (verifyReceipt's cancellation_reason, a
-- notification's revocationReason).
ALTER TABLE store_a_in_app_purchases ADD COLUMN cancellation_reason INTEGER;
-- A notification finds the receipts holding its transactionId.
CREATE INDEX store_a_in_app_purchases_by_transaction
  ON store_a_in_app_purchases (transaction_id);

-- Every notification received, once: (app_id, store, notification_id) is the
-- idempotency key (Apple's notificationUUID, Pub/Sub's messageId).
CREATE TABLE store_notifications (
  id              TEXT PRIMARY KEY,
  app_id          TEXT NOT NULL REFERENCES apps (id),
  store           TEXT NOT NULL, -- 'store_a', 'store_b'
  notification_id TEXT NOT NULL,
  type            TEXT NOT NULL,
  subtype         TEXT NOT NULL, -- '' when none
  environment     TEXT NOT NULL, -- model::environment text
  signed_date     BIGINT,
  received_at     BIGINT NOT NULL,
  UNIQUE (app_id, store, notification_id)
);

-- Where an app's backend hears about changes. events: comma-separated event
-- types ('' = every event); secret: the HMAC key, shown once when added.
CREATE TABLE webhook_endpoints (
  id         TEXT PRIMARY KEY,
  app_id     TEXT NOT NULL REFERENCES apps (id),
  url        TEXT NOT NULL,
  secret     TEXT NOT NULL,
  events     TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_by_app ON webhook_endpoints (app_id);

-- The outbox: an event commits with the change that caused it; its body (the JSON
-- each delivery sends, byte for byte) never changes. seq orders the events of one
-- record: the previous event of the record's seq + 1, taken while the record's row
-- is locked (every writer of a record's events holds it), so it increases with
-- insertion on both databases without a sequence object or a hot counter row.
CREATE TABLE webhook_events (
  id          TEXT PRIMARY KEY, -- model::make_event_id
  app_id      TEXT NOT NULL REFERENCES apps (id),
  type        TEXT NOT NULL,    -- model::event_type text
  record_kind TEXT NOT NULL,    -- model::record_kind text
  record_id   TEXT NOT NULL,
  body        TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  seq         BIGINT NOT NULL,
  UNIQUE (record_id, seq)
);
CREATE INDEX webhook_events_by_app ON webhook_events (app_id, created_at);

-- One event to one endpoint. state: 'pending', 'delivered', 'dead'. A claim sets
-- the lease and bumps version; finishing is fenced by version (as validation_jobs).
-- app_id, record_id and seq are the event's, copied for the claim's ordering rule
-- (an endpoint gets a record's events in seq order). No foreign key to the
-- endpoint: removing one keeps its delivered history, and a save that read the
-- endpoint just before it was removed must not fail.
CREATE TABLE webhook_deliveries (
  event_id        TEXT NOT NULL REFERENCES webhook_events (id),
  endpoint_id     TEXT NOT NULL,
  app_id          TEXT NOT NULL,
  record_id       TEXT NOT NULL,
  seq             BIGINT NOT NULL,
  state           TEXT NOT NULL,
  attempts        INTEGER NOT NULL,
  next_attempt_at BIGINT NOT NULL,
  lease_owner     TEXT,
  lease_until     BIGINT,
  version         BIGINT NOT NULL,
  last_error      TEXT NOT NULL,
  delivered_at    BIGINT,
  PRIMARY KEY (event_id, endpoint_id)
);
-- The claim: due pending deliveries, and the earlier pending one of the same
-- endpoint and record that holds a later one back.
CREATE INDEX webhook_deliveries_due
  ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_endpoint_record
  ON webhook_deliveries (endpoint_id, record_id, seq);
CREATE INDEX webhook_deliveries_by_app ON webhook_deliveries (app_id);
