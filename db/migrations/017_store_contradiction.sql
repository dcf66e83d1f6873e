-- 017: a unified receipt's in-app purchase that the App Store Server API's
-- transaction history contradicts (absent from it, another product or bundle):
-- why, in a few words. Such a purchase is not proved by its receipt
-- (model/records.hpp apple_in_app_purchase::store_contradiction).
--
-- Portable SQL as in 001. Existing rows keep NULL: nothing contradicted them.

ALTER TABLE store_a_in_app_purchases ADD COLUMN store_contradiction TEXT;
