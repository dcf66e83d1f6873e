-- 011: server tokens, entitlement rules and customer options.
--
-- access_tokens.kind: model::to_string(token_kind), 'client' (the /client/...
--   routes; every token made before kinds is one) or 'server' (the /server/...
--   routes, for the app's own backend).
-- apps.entitlement_rules: the app's entitlements as JSON
--   (model/entitlements/rules.hpp: {"premium":{"monthly":{"product_id":[RE2, …]}}}),
--   '{}' for none. On the app's row, so a change bumps the auth revision (003)
--   and a running receiptd recompiles them within auth.revocation-check.
-- apps.customer_lookup: 'client' (client and server tokens may look customers up)
--   or 'server-only'.
-- apps.customer_id_from: 'none' or 'app_account_token' (StoreKit 2's
--   appAccountToken and Play's obfuscatedExternalAccountId name the customer).
ALTER TABLE access_tokens ADD COLUMN kind TEXT NOT NULL DEFAULT 'client';
ALTER TABLE apps ADD COLUMN entitlement_rules TEXT NOT NULL DEFAULT '{}';
ALTER TABLE apps ADD COLUMN customer_lookup TEXT NOT NULL DEFAULT 'client';
ALTER TABLE apps ADD COLUMN customer_id_from TEXT NOT NULL DEFAULT 'none';
