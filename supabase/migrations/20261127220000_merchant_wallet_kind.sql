-- =============================================================================================
-- The merchant's wallet, first part: its ledger account kind (docs/merchants.md)
--
-- A value added to an enum cannot be used in the transaction that adds it, so the kind has a file
-- of its own; 20261127220100_merchant_fee.sql uses it (the account's constraints, the fee credits
-- and the merchant's withdrawals).
-- =============================================================================================

alter type private.account_kind add value if not exists 'merchant_wallet';
