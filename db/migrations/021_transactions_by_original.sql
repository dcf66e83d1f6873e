-- 021: store_a_transactions_by_original leads with original_transaction_id.
-- Led by app_id, it matched a lookup by proof (app_id and transaction_key) as
-- well as the (app_id, transaction_key) unique index does while the table is
-- small, and PostgreSQL keeps a prepared statement's plan made then: each
-- lookup of a save batch then read every transaction of the app (6,000 rows
-- per lookup after 8 s of benchmark). Every query that uses it gives both
-- columns. Portable SQL as in 001.

DROP INDEX store_a_transactions_by_original;
CREATE INDEX store_a_transactions_by_original
  ON store_a_transactions (original_transaction_id, app_id);
