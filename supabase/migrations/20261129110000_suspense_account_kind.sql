-- =============================================================================================
-- Account deletion, first part: the suspense ledger account kind (docs/compliance.md#account-deletion)
--
-- Money a bank still sends to the dedicated account of a deleted user belongs to nobody we can pay:
-- it is credited to a system account of this kind and flagged for operators. A value added to an
-- enum cannot be used in the transaction that adds it, so the kind has a file of its own;
-- 20261129110100_account_delete.sql creates the account and posts to it.
-- =============================================================================================

alter type private.account_kind add value if not exists 'suspense';
