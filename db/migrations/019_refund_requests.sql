-- 019: the stores' refund requests, answered (model/purchases/refund_request.hpp).
--
-- Portable SQL as in 001.

-- How an app answers refund requests (receiptctl app update --refund-preference,
-- --refund-consent, --sample-content-provided). No row: answer nothing.
CREATE TABLE app_refund_settings (
  app_id                  TEXT PRIMARY KEY REFERENCES apps (id),
  preference              TEXT NOT NULL,    -- none, decline, grant, grant-prorated
  customer_consent        INTEGER NOT NULL, -- the app collects the customer's consent
  sample_content_provided INTEGER NOT NULL
);

-- What the app's backend said of a purchase (PUT
-- /server/in_app_purchases/{id}/consumption): model::purchases::consumption_report.
CREATE TABLE purchase_consumption (
  purchase_id TEXT PRIMARY KEY REFERENCES purchases (id),
  report      TEXT NOT NULL,
  updated_at  BIGINT NOT NULL
);

-- A store's refund request: a durable job, claimed with a lease and fenced by
-- its version like validation_jobs, until it is answered, skipped, or its
-- deadline passed. store_key: Apple's transactionId, Play's orderId;
-- refund_token: Play's pendingRefundToken.
CREATE TABLE refund_requests (
  id              TEXT PRIMARY KEY,
  app_id          TEXT NOT NULL REFERENCES apps (id),
  purchase_id     TEXT NOT NULL REFERENCES purchases (id),
  marketplace     TEXT NOT NULL,
  environment     TEXT NOT NULL,
  store_key       TEXT NOT NULL,
  package_name    TEXT,
  refund_token    TEXT,
  reason          TEXT,
  state           TEXT NOT NULL, -- pending, answered, skipped, failed, expired
  received_at     BIGINT NOT NULL,
  deadline_at     BIGINT NOT NULL,
  answered_at     BIGINT,
  sent            TEXT,          -- the body sent, JSON
  store_status    INTEGER,       -- the store's HTTP status
  attempts        INTEGER NOT NULL,
  next_attempt_at BIGINT,
  last_error      TEXT NOT NULL,
  lease_owner     TEXT,
  lease_until     BIGINT,
  version         BIGINT NOT NULL
);
CREATE INDEX refund_requests_due ON refund_requests (next_attempt_at);
CREATE INDEX refund_requests_by_purchase ON refund_requests (purchase_id, received_at);
