-- =============================================================================================
-- Ledger reads: a user's wallet balance and an escrow's hold balance, each one function
--
-- Services and tests read these two balances in many places, each with its own select on
-- private.ledger_accounts. The account a balance lives in (kind user_wallet or escrow_hold, owned
-- by the user or the escrow, shard 0) is now named once, here. An account is created by its first
-- posting, so a user or escrow without one has a balance of 0, as every caller read it before.
-- Reads about the ledger itself (the invariant checks that sum every entry, reconciliation) stay
-- on the tables.
-- =============================================================================================

-- =============================================================================================
-- Wallet
-- =============================================================================================

create function private.wallet_balance(p_user uuid)
returns bigint
language sql
stable
set search_path = ''
as $$
  select coalesce((select a.balance from private.ledger_accounts a
                    where a.kind = 'user_wallet' and a.owner_id = p_user), 0)::bigint;
$$;
comment on function private.wallet_balance(p_user uuid) is
  'The user''s wallet balance in kobo (their user_wallet ledger account); 0 when they have no account yet.';
revoke all on function private.wallet_balance(p_user uuid) from public, anon, authenticated;
grant execute on function private.wallet_balance(p_user uuid) to service_role;

-- =============================================================================================
-- Escrow hold
-- =============================================================================================

create function private.hold_balance(p_escrow uuid)
returns bigint
language sql
stable
set search_path = ''
as $$
  select coalesce((select a.balance from private.ledger_accounts a
                    where a.kind = 'escrow_hold' and a.owner_id = p_escrow), 0)::bigint;
$$;
comment on function private.hold_balance(p_escrow uuid) is
  'The money locked in the escrow in kobo (its escrow_hold ledger account); 0 when it has no account yet.';
revoke all on function private.hold_balance(p_escrow uuid) from public, anon, authenticated;
grant execute on function private.hold_balance(p_escrow uuid) to service_role;
