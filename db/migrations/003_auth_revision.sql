-- 003: the auth revision: one counter that every change to apps or
-- access_tokens bumps, so that receiptd may cache token lookups and still refuse a
-- revoked token within auth.revocation-check, whoever revoked it (receiptctl, SQL
-- by hand, another instance). A token lookup is read together with the revision
-- (one snapshot); a cached lookup older than the current revision is dropped.
--
-- The triggers that bump it are written per dialect and are not in this file: this
-- runner applies one text to both databases, split at ';', and an SQLite trigger
-- body holds ';' of its own. db::sql_database::migrate installs them when missing
-- (db/sql_apps.hpp, sql::auth_revision).

CREATE TABLE auth_revision (
  id       INTEGER PRIMARY KEY CHECK (id = 1), -- one row
  revision BIGINT NOT NULL
);
INSERT INTO auth_revision (id, revision) VALUES (1, 0);
