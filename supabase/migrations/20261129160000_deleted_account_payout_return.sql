-- =============================================================================================
-- A payout that fails or is reversed after its payee deleted the account (docs/compliance.md#account-deletion)
--
-- - private.deleted_account_suspense: money the provider confirms for a deleted account (nobody can
--   reach its wallet any more) is credited to the suspense account from provider_clearing, under
--   the caller's idempotency key and ledger kind, and flagged once for operators
--   (private.payment_flags, reason deleted_account_deposit, the user and the ledger transfer in
--   its payload).
-- - private.payout_fail: when the wallet the payout left belongs to a deleted account (the user's,
--   or a merchant's whose owner is deleted), the returned amount goes to suspense through it; the
--   transaction is failed as before, and a replay finds it failed and moves nothing.
-- =============================================================================================

create function private.deleted_account_suspense(p_user uuid, p_amount bigint, p_key text, p_kind text,
                                                 p_tx uuid, p_reference text, p_facts jsonb)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_transfer uuid;
begin
  select id into v_transfer from private.ledger_transfers where idempotency_key = p_key;
  if found then
    return v_transfer;
  end if;
  v_transfer := private.post_transfer(
    p_key, p_kind,
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', -p_amount),
      pg_catalog.jsonb_build_object('account_id', private.system_account('suspense'), 'amount', p_amount)),
    p_tx, pg_catalog.jsonb_build_object('user_id', p_user, 'deleted_account', true));
  insert into private.payment_flags (reason, transaction_id, provider_reference, received_amount, payload)
  values ('deleted_account_deposit', p_tx, p_reference, p_amount,
          coalesce(p_facts, '{}'::jsonb) || pg_catalog.jsonb_build_object('user_id', p_user, 'ledger_transfer_id', v_transfer));
  return v_transfer;
end
$$;
comment on function private.deleted_account_suspense(uuid, bigint, text, text, uuid, text, jsonb) is
  'Money the provider confirms for a deleted account: credited to the suspense account from provider_clearing once per idempotency key, and flagged (payment_flags, reason deleted_account_deposit).';
revoke all on function private.deleted_account_suspense(uuid, bigint, text, text, uuid, text, jsonb) from public;
grant execute on function private.deleted_account_suspense(uuid, bigint, text, text, uuid, text, jsonb) to service_role;

create or replace function private.payout_fail(p_tx uuid, p_reason text, p_transfer_code text)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions%rowtype;
  v_owner uuid;
begin
  select * into t from public.transactions where id = p_tx and type in ('withdrawal', 'escrow_payout') for update;
  if not found then
    return 'not_found';
  end if;
  if t.status = 'failed' then
    return 'already_done';
  end if;
  update public.transactions
     set status = 'failed', completed_at = now(),
         provider_transfer_id = coalesce(p_transfer_code, provider_transfer_id),
         metadata = metadata || pg_catalog.jsonb_build_object('failure_reason', p_reason,
                                                             'previous_status', t.status::text)
   where id = t.id;
  -- whose wallet the money left: the user's, or for a merchant's withdrawal its owner's
  v_owner := case when t.merchant_id is null then t.user_id
                  else (select owner_id from private.merchants where id = t.merchant_id) end;
  if exists (select 1 from private.users where id = v_owner and deleted_at is not null) then
    -- nobody can reach that wallet any more: suspense, flagged for operators
    perform private.deleted_account_suspense(v_owner, t.amount, 'payout-reversal:' || t.id, 'payout_reversal', t.id,
      coalesce(p_transfer_code, t.provider_transfer_id, t.id::text),
      pg_catalog.jsonb_build_object('source', 'payout_returned', 'reason', p_reason, 'merchant_id', t.merchant_id));
    return 'failed';
  end if;
  perform private.post_transfer(
    'payout-reversal:' || t.id, 'payout_reversal',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', -t.amount),
      pg_catalog.jsonb_build_object('account_id',
        case when t.merchant_id is null then private.owner_account('user_wallet', t.user_id)
             else private.owner_account('merchant_wallet', t.merchant_id) end,
        'amount', t.amount)),
    t.id);
  return 'failed';
end
$$;
comment on function private.payout_fail(uuid, text, text) is
  'A payout transfer failed or was reversed: marked failed and the amount returned, exactly once, to the wallet it left (the merchant''s for a merchant''s withdrawal); when that wallet''s account is deleted, to the suspense account, flagged (private.deleted_account_suspense).';
revoke execute on function private.payout_fail(uuid, text, text) from public, anon, authenticated;
grant execute on function private.payout_fail(uuid, text, text) to service_role;
