-- 014: a proof refused by its own local check (a forgery) is kept as what
-- identifies it, not whole (model::trim_rejected_proof): its hash or key, the
-- reason, its first bytes, and here its size as uploaded. NULL: the proof is
-- stored whole.
--
-- Portable SQL as in 001.

ALTER TABLE store_a_receipts ADD COLUMN proof_size BIGINT;
ALTER TABLE store_a_transactions ADD COLUMN proof_size BIGINT;
ALTER TABLE store_b_purchase_orders ADD COLUMN proof_size BIGINT;
