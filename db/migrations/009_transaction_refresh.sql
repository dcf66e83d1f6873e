-- 009: the scheduled refresh of StoreKit 2 subscriptions.
--
-- Portable SQL as in 001 (SQLite and PostgreSQL both take partial indexes on
-- an expression).

-- The refresh sweep: validated auto-renewable transactions by their
-- subscription's expiry (db/sql_upkeep.hpp, transaction_refresh_candidates).
CREATE INDEX store_a_transactions_by_subscription_expiry
  ON store_a_transactions ((COALESCE(subscription_expires_date, expires_date)))
  WHERE product_type = 'Auto-Renewable Subscription' AND validation_state = 'validated';
