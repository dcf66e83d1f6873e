-- 016: Play Developer API fields kept on purchase orders (model/records.hpp,
-- play_purchase): what the purchase order's in_app_purchase answers and the
-- purchase reads.
--
-- Portable SQL as in 001. Existing rows keep NULL: receiptd did not read these
-- fields yet; the next answer of the API about the purchase fills them.

-- products.get refundableQuantity: what quantity-based partial refunds left.
ALTER TABLE store_b_purchase_orders ADD COLUMN refundable_quantity INTEGER;
