-- 013: what the customer answer (GET …/customers/{user_identifier}) needs of a
-- purchase, in indexed columns, so that a lookup reads only the purchases its
-- answer shows (model::purchases::answer_purchases) however many a customer has:
--  - active_until: the purchase is active at t exactly when t < active_until
--    (model::purchases::active_until); 9223372036854775807 until the store
--    says otherwise, NULL at no time;
--  - recency: model::purchases::recency_of; of an entitlement no purchase grants
--    now, the answer shows the most recent purchase that matches it;
--  - product_key: model::purchases::product_key, the product id or, for one too
--    long for an index entry, its digest: what the lookup walks products by.
-- Both follow from the purchase's facts alone and are written with them
-- (db::purchase_row). Purchases stored before this migration get theirs when
-- receiptd first starts on it (db/backfill.cpp).

ALTER TABLE purchases ADD COLUMN active_until BIGINT;
ALTER TABLE purchases ADD COLUMN recency BIGINT NOT NULL DEFAULT 0;
ALTER TABLE purchases ADD COLUMN product_key TEXT NOT NULL DEFAULT '';

-- A customer's purchases active at a time: one index range.
CREATE INDEX purchases_active_by_customer
  ON purchases (app_id, user_identifier, environment, active_until);
-- A customer's products, and the most recent purchase of each: two index
-- probes per product (sql_purchases.hpp, for_answer).
CREATE INDEX purchases_by_customer_product
  ON purchases (app_id, user_identifier, environment, product_key, recency, created_at, id);
