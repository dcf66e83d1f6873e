-- 004: per-app App Store Server API credentials: App Store Connect's
-- in-app purchase key, checked by receiptctl before it is stored
-- (model/store_a/server_api.hpp). All three empty: the app has none.
--
-- app_store_issuer_id: the issuer id (a UUID) of the App Store Connect team.
-- app_store_key_id: the key's id (10 characters), the JWT header's kid.
-- app_store_private_key: the .p8 file's PEM text (PKCS#8, EC P-256).

ALTER TABLE apps ADD COLUMN app_store_issuer_id TEXT NOT NULL DEFAULT '';
ALTER TABLE apps ADD COLUMN app_store_key_id TEXT NOT NULL DEFAULT '';
ALTER TABLE apps ADD COLUMN app_store_private_key TEXT NOT NULL DEFAULT '';
