-- 015: App Store Server API 1.13–1.21 fields kept on StoreKit 2 transactions
-- (JWSTransactionDecodedPayload, JWSRenewalInfoDecodedPayload): what the
-- transaction resource answers and the purchase reads (model/records.hpp).
--
-- Portable SQL as in 001. Existing rows keep NULL: their JWS did not carry these
-- fields, or receiptd did not read them yet; a later answer or notification
-- about the transaction fills them.

-- appTransactionId, offerPeriod (ISO 8601 duration), billingPlanType.
ALTER TABLE store_a_transactions ADD COLUMN app_transaction_id TEXT;
ALTER TABLE store_a_transactions ADD COLUMN offer_period TEXT;
ALTER TABLE store_a_transactions ADD COLUMN billing_plan_type TEXT;
-- revocationType and revocationPercentage (milliunits: 100000 is all of it).
ALTER TABLE store_a_transactions ADD COLUMN revocation_type TEXT;
ALTER TABLE store_a_transactions ADD COLUMN revocation_percentage INTEGER;
-- commitmentInfo of a monthly subscription with a 12-month commitment.
ALTER TABLE store_a_transactions ADD COLUMN commitment_billing_period_number INTEGER;
ALTER TABLE store_a_transactions ADD COLUMN commitment_total_billing_periods INTEGER;
ALTER TABLE store_a_transactions ADD COLUMN commitment_expires_date BIGINT;
ALTER TABLE store_a_transactions ADD COLUMN commitment_price BIGINT;
-- signedRenewalInfo appAccountToken: the account token the subscription renews with.
ALTER TABLE store_a_transactions ADD COLUMN renewal_app_account_token TEXT;
