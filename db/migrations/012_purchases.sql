-- 012: the In-App Purchase resources (model/purchases/), derived from the
-- records in the same transaction as the record that changed them, and the
-- store times the records' facts were said at (model/store_time.hpp).
--
-- Portable SQL as in 001. Existing records get their purchases when receiptd
-- first starts on this schema (db::sql_database::migrate: a pass over every
-- record, since the fold is model code, not SQL).

-- When the store signed or said what a record holds: an older source changes
-- nothing it contradicts.
ALTER TABLE store_a_receipts ADD COLUMN said_at BIGINT;
ALTER TABLE store_a_transactions ADD COLUMN said_at BIGINT;
ALTER TABLE store_b_purchase_orders ADD COLUMN said_at BIGINT;

-- StoreKit 2 fields the purchase reads: inAppOwnershipType, isUpgraded,
-- offerType, offerDiscountType.
ALTER TABLE store_a_transactions ADD COLUMN ownership_type TEXT;
ALTER TABLE store_a_transactions ADD COLUMN is_upgraded INTEGER;
ALTER TABLE store_a_transactions ADD COLUMN offer_type INTEGER;
ALTER TABLE store_a_transactions ADD COLUMN offer_discount_type TEXT;
-- When Apple said a transaction's revocation: only a later REFUND_REVERSED undoes it.
ALTER TABLE store_a_transactions ADD COLUMN revocation_said_at BIGINT;

-- Play Developer API fields the purchase reads: linkedPurchaseToken, regionCode,
-- the app's account id, consumptionState, the line item's offer phase.
ALTER TABLE store_b_purchase_orders ADD COLUMN linked_purchase_token TEXT;
ALTER TABLE store_b_purchase_orders ADD COLUMN region_code TEXT;
ALTER TABLE store_b_purchase_orders ADD COLUMN account_id TEXT;
ALTER TABLE store_b_purchase_orders ADD COLUMN consumed INTEGER;
ALTER TABLE store_b_purchase_orders ADD COLUMN in_free_trial INTEGER;
ALTER TABLE store_b_purchase_orders ADD COLUMN in_intro_price INTEGER;

-- One purchase, whatever store and proofs. facts: its fields with the store
-- time each was said at (model::purchases::facts_json). next_change_at: when its
-- activity changes by time passing alone (a period or grace period ends): the
-- period-end timer, claimed when due.
CREATE TABLE purchases (
  id              TEXT PRIMARY KEY,
  app_id          TEXT NOT NULL REFERENCES apps (id),
  marketplace     TEXT NOT NULL, -- 'store_a', 'store_b'
  environment     TEXT NOT NULL,
  user_identifier TEXT,
  product_id      TEXT NOT NULL,
  facts           TEXT NOT NULL,
  versions        BIGINT NOT NULL,
  next_change_at  BIGINT,
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL
);
CREATE INDEX purchases_by_customer
  ON purchases (app_id, user_identifier, environment, created_at);
CREATE INDEX purchases_by_next_change ON purchases (next_change_at);

-- The keys that name a purchase: Apple's original transaction id, Play's
-- purchase tokens of one subscription chain. A key names one purchase.
CREATE TABLE purchase_keys (
  app_id       TEXT NOT NULL,
  marketplace  TEXT NOT NULL,
  environment  TEXT NOT NULL,
  purchase_key TEXT NOT NULL,
  purchase_id  TEXT NOT NULL REFERENCES purchases (id),
  PRIMARY KEY (app_id, marketplace, environment, purchase_key)
);
CREATE INDEX purchase_keys_by_purchase ON purchase_keys (purchase_id);

-- A customer (an app's user identifier, per environment) as last announced:
-- its active entitlements when the last customer.entitlements_changed event
-- was written. The answer itself is computed, never stored; this row is what
-- the next change is compared with, and its lock orders the customer's events.
CREATE TABLE customers (
  app_id              TEXT NOT NULL REFERENCES apps (id),
  environment         TEXT NOT NULL,
  user_identifier     TEXT NOT NULL,
  active_entitlements TEXT NOT NULL, -- comma-separated names, sorted
  updated_at          BIGINT NOT NULL,
  PRIMARY KEY (app_id, environment, user_identifier)
);

-- Entitlements the app's backend grants a customer (promotional), outside any
-- store: POST /server/customers/{user}/entitlements/{name}/grants.
CREATE TABLE entitlement_grants (
  id              TEXT PRIMARY KEY,
  app_id          TEXT NOT NULL REFERENCES apps (id),
  environment     TEXT NOT NULL,
  user_identifier TEXT NOT NULL,
  entitlement     TEXT NOT NULL,
  starts_at       BIGINT NOT NULL,
  expires_at      BIGINT NOT NULL,
  created_at      BIGINT NOT NULL,
  -- 1 once its end was announced (customer.entitlements_changed by time passing)
  expiry_announced INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX entitlement_grants_by_customer
  ON entitlement_grants (app_id, user_identifier, environment);
CREATE INDEX entitlement_grants_by_expiry ON entitlement_grants (expiry_announced, expires_at);

-- Passes over existing data that model code makes (not SQL): each runs once,
-- then leaves its name here.
CREATE TABLE data_backfills (
  name    TEXT PRIMARY KEY,
  done_at BIGINT NOT NULL
)
