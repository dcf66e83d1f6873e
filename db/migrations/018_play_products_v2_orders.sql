-- 018: Play one-time products v2 (purchases.productsv2) and orders
-- (orders.get / orders.batchGet) kept on purchase orders (model/records.hpp,
-- play_purchase).
--
-- Portable SQL as in 001. Existing rows keep NULL: their order is read by the
-- orders sweep (order_read_at NULL) and their line items by the next answer.

-- productsv2, the claimed line item: its offer and purchase option; every line
-- item of a purchase of several products, as a JSON array (NULL: one product).
ALTER TABLE store_b_purchase_orders ADD COLUMN offer_id TEXT;
ALTER TABLE store_b_purchase_orders ADD COLUMN purchase_option_id TEXT;
ALTER TABLE store_b_purchase_orders ADD COLUMN line_items TEXT;
-- The order's cost in milliunits of currency_code (ISO 4217): what the buyer
-- paid (tax included), the tax, what was refunded; and when the order was read
-- (NULL: to be read by the orders sweep).
ALTER TABLE store_b_purchase_orders ADD COLUMN price BIGINT;
ALTER TABLE store_b_purchase_orders ADD COLUMN currency_code TEXT;
ALTER TABLE store_b_purchase_orders ADD COLUMN tax BIGINT;
ALTER TABLE store_b_purchase_orders ADD COLUMN refunded BIGINT;
ALTER TABLE store_b_purchase_orders ADD COLUMN order_read_at BIGINT;
