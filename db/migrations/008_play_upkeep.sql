-- 008: Play acknowledgement, voided purchases and the subscription refresh.
--
-- Portable SQL as in 001 (SQLite and PostgreSQL both take partial indexes).

-- The app asks receiptd to acknowledge its validated Play purchases (0/1).
ALTER TABLE apps ADD COLUMN acknowledge_purchases INTEGER NOT NULL DEFAULT 0;

-- model::acknowledgement_state text ('pending', 'acknowledged', 'failed'); NULL:
-- receiptd leaves it to the app. A pending one has a job in validation_jobs.
ALTER TABLE store_b_purchase_orders ADD COLUMN acknowledgement_state TEXT;
-- From Play's voided purchases list: refunded or charged back (unix ms; Google's
-- voidedReason 0-7 and voidedSource 0-2; the quantity of a partial refund).
ALTER TABLE store_b_purchase_orders ADD COLUMN voided_time BIGINT;
ALTER TABLE store_b_purchase_orders ADD COLUMN voided_reason INTEGER;
ALTER TABLE store_b_purchase_orders ADD COLUMN voided_source INTEGER;
ALTER TABLE store_b_purchase_orders ADD COLUMN voided_quantity INTEGER;

-- The refresh sweep: validated subscriptions by expiry.
CREATE INDEX store_b_purchase_orders_by_expiry
  ON store_b_purchase_orders (expiry_time)
  WHERE product_kind = 'subscription' AND validation_state = 'validated';

-- One voided purchases poll per app (model::store_b::voided_cursor): the window
-- being read and its next page, leased like validation_jobs (version is the
-- fencing token a page's write must present).
CREATE TABLE store_b_voided_polls (
  app_id       TEXT PRIMARY KEY REFERENCES apps (id),
  window_start BIGINT NOT NULL,
  page_token   TEXT NOT NULL,
  high_water   BIGINT NOT NULL,
  next_poll_at BIGINT NOT NULL,
  lease_owner  TEXT,
  lease_until  BIGINT,
  version      BIGINT NOT NULL,
  last_error   TEXT NOT NULL,
  polled_at    BIGINT
);
