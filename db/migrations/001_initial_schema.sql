-- 001: the initial schema (DESIGN.md §5).
--
-- One text for SQLite and PostgreSQL, so only portable SQL: ids are UUID text,
-- timestamps are unix milliseconds (BIGINT), booleans are INTEGER 0/1, JSON is TEXT
-- kept verbatim, enumerations are their model::to_string text, and an absent optional
-- is NULL. schema_migrations itself is created by the migrator (db/sql_migrations.hpp).

CREATE TABLE apps (
  id                      TEXT PRIMARY KEY,
  name                    TEXT NOT NULL UNIQUE, -- receiptctl finds apps by name
  bundle_id               TEXT NOT NULL,
  package_name            TEXT NOT NULL,
  store_a_shared_secret   TEXT NOT NULL,
  store_b_public_key      TEXT NOT NULL,
  store_b_service_account TEXT NOT NULL
);

-- Only the hex SHA-256 of a token is stored; the token itself is shown once.
CREATE TABLE access_tokens (
  id         TEXT PRIMARY KEY,
  app_id     TEXT NOT NULL REFERENCES apps (id),
  token_hash TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX access_tokens_by_app ON access_tokens (app_id);

-- Store B purchase orders; (app_id, purchase_token) identifies a re-upload.
CREATE TABLE store_b_purchase_orders (
  id                 TEXT PRIMARY KEY,
  app_id             TEXT NOT NULL REFERENCES apps (id),
  purchase_token     TEXT NOT NULL,
  created_at         BIGINT NOT NULL,
  -- the upload
  is_legacy          INTEGER NOT NULL,
  package_name       TEXT NOT NULL,
  order_id           TEXT,
  purchase_data      TEXT NOT NULL, -- byte for byte as received; '' for legacy uploads
  purchase_signature TEXT NOT NULL,
  user_identifier    TEXT,
  metadata           TEXT,          -- compact JSON object text
  ip_address         TEXT,
  -- the verdict (rewritten by a completed revalidation job)
  fraud_reason       TEXT NOT NULL, -- '' when not fraud
  environment        TEXT NOT NULL,
  product_id         TEXT NOT NULL,
  product_kind       TEXT NOT NULL,
  purchase_time      BIGINT,
  purchase_state     TEXT NOT NULL,
  quantity           INTEGER,
  acknowledged       INTEGER,
  auto_renewing      INTEGER,
  expiry_time        BIGINT,
  subscription_state TEXT,
  is_test            INTEGER NOT NULL,
  validation_state   TEXT NOT NULL,
  store_detail       TEXT NOT NULL,
  updated_at         BIGINT NOT NULL,
  UNIQUE (app_id, purchase_token)
);

-- Store A receipts; (app_id, receipt_hash) identifies a re-upload.
CREATE TABLE store_a_receipts (
  id                    TEXT PRIMARY KEY,
  app_id                TEXT NOT NULL REFERENCES apps (id),
  receipt_hash          TEXT NOT NULL, -- hex SHA-256 of the decoded receipt bytes
  created_at            BIGINT NOT NULL,
  -- the upload
  style                 TEXT NOT NULL,
  bundle_id             TEXT NOT NULL,
  receipt_data          TEXT NOT NULL, -- base64 exactly as received
  country_code          TEXT,
  identifier_for_vendor TEXT,
  user_identifier       TEXT,
  metadata              TEXT,
  ip_address            TEXT,
  -- the verdict (with the in-app purchases below)
  fraud_reason          TEXT NOT NULL,
  environment           TEXT NOT NULL,
  validation_state      TEXT NOT NULL,
  store_detail          TEXT NOT NULL,
  updated_at            BIGINT NOT NULL,
  UNIQUE (app_id, receipt_hash)
);

-- A receipt's in-app purchases in receipt order (ordinal 0, 1, …); replaced as a whole.
CREATE TABLE store_a_in_app_purchases (
  receipt_id               TEXT NOT NULL REFERENCES store_a_receipts (id) ON DELETE CASCADE,
  ordinal                  INTEGER NOT NULL,
  product_id               TEXT NOT NULL,
  transaction_id           TEXT NOT NULL,
  original_transaction_id  TEXT NOT NULL,
  quantity                 INTEGER NOT NULL,
  purchase_date            BIGINT,
  original_purchase_date   BIGINT,
  expires_date             BIGINT,
  cancellation_date        BIGINT,
  web_order_line_item_id   TEXT,
  is_trial_period          INTEGER,
  is_in_intro_offer_period INTEGER,
  product_type             INTEGER,
  PRIMARY KEY (receipt_id, ordinal)
);

-- At most one revalidation job per pending record. A claim sets the lease and bumps
-- version; completion and rescheduling are fenced by version (DESIGN.md §5).
CREATE TABLE validation_jobs (
  id              TEXT PRIMARY KEY,
  record_kind     TEXT NOT NULL, -- model::record_kind text
  record_id       TEXT NOT NULL, -- no foreign key: it points into one of two tables
  app_id          TEXT NOT NULL REFERENCES apps (id),
  attempts        INTEGER NOT NULL,
  next_attempt_at BIGINT NOT NULL,
  lease_owner     TEXT,
  lease_until     BIGINT,
  version         BIGINT NOT NULL,
  last_error      TEXT NOT NULL,
  UNIQUE (record_kind, record_id)
);
CREATE INDEX validation_jobs_by_next_attempt ON validation_jobs (next_attempt_at);
