-- 002: per-app upload policies and the transfer history of a proof.
--
-- accept_storekit_test_receipts: 0/1, Xcode StoreKit test receipts are accepted
--   (environment xcode) only when 1.
-- transfer_policy: model::to_string(transfer_policy): 'transfer', 'keep' or
--   'reject_after=N'.
-- previous_user_identifiers: a JSON array of the users a proof was bound to before
--   its current user_identifier, oldest first; NULL when it never moved.

ALTER TABLE apps ADD COLUMN accept_storekit_test_receipts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE apps ADD COLUMN transfer_policy TEXT NOT NULL DEFAULT 'transfer';

ALTER TABLE store_b_purchase_orders ADD COLUMN previous_user_identifiers TEXT;
ALTER TABLE store_a_receipts ADD COLUMN previous_user_identifiers TEXT;
