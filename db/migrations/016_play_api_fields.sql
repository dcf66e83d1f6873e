-- 016: Play Developer API fields kept on purchase orders (model/records.hpp,
-- play_purchase): what the purchase order's in_app_purchase answers and the
-- purchase reads.
--
-- Portable SQL as in 001. Existing rows keep NULL: receiptd did not read these
-- fields yet; the next answer of the API about the purchase fills them.

-- products.get refundableQuantity: what quantity-based partial refunds left.
ALTER TABLE store_b_purchase_orders ADD COLUMN refundable_quantity INTEGER;
-- subscriptionsv2, the line item: its offerPhase by name; latestSuccessfulOrderId
-- (the deprecated latestOrderId when absent); a prepaid plan and when it may be
-- topped up (allowExtendAfterTime); an installment plan's committed payments
-- (initial, subsequent, remaining) and pendingCancellation; the product of a
-- deferred replacement.
ALTER TABLE store_b_purchase_orders ADD COLUMN offer_phase TEXT;
ALTER TABLE store_b_purchase_orders ADD COLUMN latest_order_id TEXT;
ALTER TABLE store_b_purchase_orders ADD COLUMN prepaid INTEGER;
ALTER TABLE store_b_purchase_orders ADD COLUMN allow_extend_after BIGINT;
ALTER TABLE store_b_purchase_orders ADD COLUMN installment_initial_payments INTEGER;
ALTER TABLE store_b_purchase_orders ADD COLUMN installment_subsequent_payments INTEGER;
ALTER TABLE store_b_purchase_orders ADD COLUMN installment_remaining_payments INTEGER;
ALTER TABLE store_b_purchase_orders ADD COLUMN installment_pending_cancellation INTEGER;
ALTER TABLE store_b_purchase_orders ADD COLUMN deferred_product_id TEXT;
