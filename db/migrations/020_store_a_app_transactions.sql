-- 020: StoreKit 2 app transactions (AppTransaction.jwsRepresentation; the App
-- Store Server API's Get App Transaction Info): the customer's purchase or
-- download of the app itself, what entitlements by original application
-- version read (model/store_a/app_transaction.hpp).
--
-- (app_id, app_transaction_key) identifies a re-upload, as 005's
-- transaction_key: Apple's appTransactionId for a JWS whose signature and Apple
-- chain verified; any other JWS (and one signed before Apple added
-- appTransactionId) is keyed by 'sha256:' and the hex SHA-256 of its text.
-- Portable SQL as in 001.

CREATE TABLE store_a_app_transactions (
  id                           TEXT PRIMARY KEY,
  app_id                       TEXT NOT NULL REFERENCES apps (id),
  app_transaction_key          TEXT NOT NULL,
  created_at                   BIGINT NOT NULL,
  -- the upload
  signed_app_transaction       TEXT NOT NULL, -- the JWS exactly as received
  user_identifier              TEXT,
  previous_user_identifiers    TEXT,
  metadata                     TEXT,
  ip_address                   TEXT,
  -- not_checked, nonce_matched, verified, mismatch: the upload's device check
  device_verification          TEXT NOT NULL,
  -- the verdict: the signed payload, then Get App Transaction Info's
  fraud_reason                 TEXT NOT NULL,
  environment                  TEXT NOT NULL,
  app_transaction_id           TEXT,
  bundle_id                    TEXT,
  app_apple_id                 BIGINT,
  application_version          TEXT,
  version_external_identifier  BIGINT,
  receipt_creation_date        BIGINT,
  original_purchase_date       BIGINT,
  original_application_version TEXT,
  preorder_date                BIGINT,
  original_platform            TEXT,
  device_verification_value    TEXT,   -- deviceVerification (base64)
  device_verification_nonce    TEXT,   -- deviceVerificationNonce
  said_at                      BIGINT,
  validation_state             TEXT NOT NULL,
  store_detail                 TEXT NOT NULL,
  proof_size                   BIGINT,
  updated_at                   BIGINT NOT NULL,
  UNIQUE (app_id, app_transaction_key)
);
-- The customer lookup: a user's app transactions (their original version).
CREATE INDEX store_a_app_transactions_by_user ON store_a_app_transactions (app_id, user_identifier);
