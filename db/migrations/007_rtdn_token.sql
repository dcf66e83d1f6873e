-- 007: Google Play Real-time developer notifications.
--
-- rtdn_token: the secret of the app's push URL (?token=, compared in constant
-- time), made by `receiptctl app rtdn-url` (32 CSPRNG bytes, hex). '' until
-- then: the app's pushes are refused. A change bumps the auth revision through
-- the apps triggers (003), so a cached app learns of a rotated token.
ALTER TABLE apps ADD COLUMN rtdn_token TEXT NOT NULL DEFAULT '';
