-- 005: StoreKit 2 signed transactions.
--
-- (app_id, transaction_key) identifies a re-upload. transaction_key is Apple's
-- transactionId for a JWS whose signature and Apple chain verified; any other JWS
-- is keyed by 'sha256:' and the hex SHA-256 of its text: what a JWS that did not
-- verify claims is never read (a forgery naming a genuine transaction gets a
-- record of its own and never touches the genuine one), and Xcode numbers its
-- test transactions from 0 on every machine.

CREATE TABLE store_a_transactions (
  id                        TEXT PRIMARY KEY,
  app_id                    TEXT NOT NULL REFERENCES apps (id),
  transaction_key           TEXT NOT NULL,
  created_at                BIGINT NOT NULL,
  -- the upload
  signed_transaction        TEXT NOT NULL, -- the JWS exactly as received
  user_identifier           TEXT,
  previous_user_identifiers TEXT,
  metadata                  TEXT,
  ip_address                TEXT,
  -- the verdict: the signed payload, then the App Store Server API's where it says more
  fraud_reason              TEXT NOT NULL,
  environment               TEXT NOT NULL,
  transaction_id            TEXT,
  original_transaction_id   TEXT,
  bundle_id                 TEXT,
  product_id                TEXT,
  product_type              TEXT,          -- Apple's "type", verbatim
  purchase_date             BIGINT,
  original_purchase_date    BIGINT,
  expires_date              BIGINT,
  revocation_date           BIGINT,
  revocation_reason         INTEGER,
  app_account_token         TEXT,
  quantity                  INTEGER,
  storefront                TEXT,
  price                     BIGINT,        -- milliunits, as Apple sends it
  currency                  TEXT,
  validation_state          TEXT NOT NULL,
  store_detail              TEXT NOT NULL,
  updated_at                BIGINT NOT NULL,
  UNIQUE (app_id, transaction_key)
);
CREATE INDEX store_a_transactions_by_original ON store_a_transactions (app_id, original_transaction_id);
