-- =============================================================================================
-- Operator money actions (docs/operators.md#resolving-a-held-charge,
-- docs/operators.md#retrying-a-failed-payout)
--
-- - private.charge_resolve: a card charge held for review (metadata.review, still pending) settled
--   by a finance operator from what the provider's verify answered (asked by the endpoint before
--   this transaction): a verified success is credited at the verified amount, never the expected
--   one; a verified failure or abandonment fails it with no money. The charge's own row (and its
--   escrow's, first, for an escrow charge) is locked, so of two resolutions at once one acts and
--   the other finds it no longer held (409 charge_not_held).
-- - private.payout_retry: a failed payout (withdrawal or escrow payout, its money back in the
--   wallet) sent again as a new withdrawal from the wallet, through private.kyc_floor_check and
--   private.withdrawal_create: the freeze, the KYC limits and the balance apply as to a user's
--   own withdrawal. The old payout's row is locked and marked retried_by, so it is retried once.
-- =============================================================================================

-- Settles a charge held for review from the provider's verified answer: p_provider_status
-- 'success' credits p_verified kobo (the amount the provider confirmed), 'failed' or 'abandoned'
-- fails it. Exactly the expected amount goes through the webhook's own functions
-- (private.topup_succeed, private.escrow_charge_succeed: an escrow still fundable is funded).
-- Another amount: a top-up is credited to the wallet at that amount (the transaction's amount
-- becomes it); an escrow charge cannot fund its escrow, so the money is the payer's: in their
-- wallet (an app escrow, as a deposit) or refunded through the provider (a merchant escrow).
-- Returns the outcome: 'credited', 'escrow:<status>', 'credited_to_wallet', 'refund_due' or
-- 'failed'. Refuses 404 charge_not_found, 409 charge_not_held (settled already, or not held).
create function private.charge_resolve(
  p_tx uuid, p_provider_status text, p_verified bigint, p_charge_id text, p_payload jsonb
) returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions;
  e public.escrows;
  v_escrow uuid;
  v_expected bigint;
  v_outcome text;
  v_refund uuid;
  v_resolution jsonb;
begin
  select escrow_id into v_escrow from public.transactions
   where id = p_tx and type in ('wallet_topup', 'escrow_funding');
  if not found then
    perform private.refuse(404, 'charge_not_found', pg_catalog.jsonb_build_object('transaction_id', p_tx));
  end if;
  -- the escrow first, then its transaction: the lock order of every escrow operation
  if v_escrow is not null then
    e := private.escrow_lock(v_escrow, null);
  end if;
  select * into t from public.transactions where id = p_tx for update;
  if t.status <> 'pending' or not (t.metadata ? 'review') then
    perform private.refuse(409, 'charge_not_held', pg_catalog.jsonb_build_object(
      'transaction_id', t.id, 'status', t.status::text));
  end if;
  v_expected := case when t.type = 'escrow_funding' then e.total_charge else t.amount end;
  v_resolution := pg_catalog.jsonb_build_object('provider_status', p_provider_status, 'verified_amount', p_verified,
    'expected_amount', v_expected, 'resolved_at', now());

  if p_provider_status in ('failed', 'abandoned') then
    update public.transactions
       set metadata = (metadata - 'review') || pg_catalog.jsonb_build_object('resolution', v_resolution)
     where id = t.id;
    perform case when t.type = 'wallet_topup'
                 then private.topup_fail(t.id, 'charge ' || p_provider_status)
                 else private.escrow_charge_fail(t.id, 'charge ' || p_provider_status) end;
    return 'failed';
  end if;
  if p_provider_status is distinct from 'success' or p_verified is null or p_verified <= 0 then
    -- an assertion: the endpoint resolves only a verified success, failure or abandonment
    raise exception 'charge_resolve: not a verified outcome (%, %)', p_provider_status, p_verified;
  end if;

  update public.transactions
     set metadata = metadata || pg_catalog.jsonb_build_object('resolution', v_resolution)
   where id = t.id;
  if p_verified = v_expected then
    -- the amount expected after all: the path of a charge.success
    v_outcome := case when t.type = 'wallet_topup'
                      then private.topup_succeed(t.id, p_verified, p_charge_id, p_payload)
                      else private.escrow_charge_succeed(t.id, p_verified, p_charge_id, p_payload) end;
    if v_outcome not in ('succeeded', 'credited_to_wallet', 'refund_due') and v_outcome not like 'escrow:%' then
      raise exception 'charge_resolve: % answered %', t.type, v_outcome;
    end if;
    return case when v_outcome = 'succeeded' then 'credited' else v_outcome end;
  end if;

  if t.type = 'wallet_topup' then
    -- a top-up of another amount: the wallet gets what the provider confirmed, once (the
    -- transfer's key is the transaction's)
    update public.transactions
       set status = 'succeeded', completed_at = now(), provider_charge_id = p_charge_id, amount = p_verified,
           metadata = metadata - 'review'
     where id = t.id;
    perform private.post_transfer(
      'topup:' || t.id, 'wallet_topup',
      pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', -p_verified),
        pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', t.user_id), 'amount', p_verified)),
      t.id);
    return 'credited';
  end if;

  if e.merchant_id is not null then
    -- a merchant escrow's buyer paid another amount: it goes back where it came from, as a late
    -- payment's does (nothing posted: it never entered a hold)
    v_refund := private.escrow_transaction(t.user_id, e.id, null, 'escrow_refund',
                  pg_catalog.jsonb_build_object('kind', 'refund', 'title', e.title), p_verified, 'in',
                  t.provider, 'pending',
                  pg_catalog.jsonb_build_object('refund_to', 'provider', 'charge_reference', t.id,
                                                'channel', t.metadata ->> 'channel', 'late_payment', true));
    update public.transactions
       set status = 'failed', completed_at = now(), provider_charge_id = p_charge_id,
           metadata = (metadata - 'review') || pg_catalog.jsonb_build_object('failure_reason', 'amount differs from the escrow',
             'received_amount', p_verified, 'refund_due', true, 'refund_tx', v_refund)
     where id = t.id;
    return 'refund_due';
  end if;
  -- an app escrow's charge of another amount: the payer's money, in their wallet
  update public.transactions
     set status = 'failed', completed_at = now(), provider_charge_id = p_charge_id,
         metadata = (metadata - 'review') || pg_catalog.jsonb_build_object('failure_reason', 'amount differs from the escrow',
           'received_amount', p_verified, 'credited_to_wallet', true)
   where id = t.id;
  perform private.virtual_account_deposit(t.user_id, p_verified, t.provider,
    'escrow-charge:' || coalesce(p_charge_id, t.id::text),
    pg_catalog.jsonb_build_object('escrow_id', e.id, 'reason', 'escrow charge resolved by an operator'));
  return 'credited_to_wallet';
end
$$;
comment on function private.charge_resolve(uuid, text, bigint, text, jsonb) is
  'admin-charge-resolve: a charge held for review settled from the provider''s verified answer: a success credited at the verified amount (the expected amount through the webhook''s path; another amount to the wallet, or refunded for a merchant escrow), a failure or abandonment failed with no money; once (charge_not_held afterwards; charge_not_found).';
revoke all on function private.charge_resolve(uuid, text, bigint, text, jsonb) from public;
grant execute on function private.charge_resolve(uuid, text, bigint, text, jsonb) to service_role;

-- Retries a failed payout as a new withdrawal of the same amount from the wallet to the same
-- payout account, under the withdrawal's rules (account_frozen, kyc_tier_required,
-- kyc_limit_exceeded, payout_account_not_found, insufficient_funds). The endpoint asked the
-- provider first: only a transfer it confirms failed is retried. Returns the new withdrawal's id;
-- refuses 404 payout_not_found, 409 payout_not_failed, 409 payout_already_retried, 409
-- payout_retry_unsupported (a merchant's withdrawal: its money is the merchant wallet's).
create function private.payout_retry(p_tx uuid, p_provider text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions;
  v_new uuid;
begin
  select * into t from public.transactions where id = p_tx and type in ('withdrawal', 'escrow_payout') for update;
  if not found then
    perform private.refuse(404, 'payout_not_found', pg_catalog.jsonb_build_object('transaction_id', p_tx));
  end if;
  if t.metadata ? 'retried_by' then
    perform private.refuse(409, 'payout_already_retried', pg_catalog.jsonb_build_object(
      'transaction_id', t.id, 'retry_transaction_id', t.metadata ->> 'retried_by'));
  end if;
  if t.status <> 'failed' then
    perform private.refuse(409, 'payout_not_failed', pg_catalog.jsonb_build_object(
      'transaction_id', t.id, 'status', t.status::text, 'provider_status', null));
  end if;
  if t.merchant_id is not null then
    perform private.refuse(409, 'payout_retry_unsupported', pg_catalog.jsonb_build_object(
      'transaction_id', t.id, 'kind', 'merchant_withdrawal'));
  end if;
  -- the withdrawal's own checks: the identity floor and the freeze (under the user's limit lock),
  -- then the limits, the payout account and the balance
  perform private.kyc_floor_check(t.user_id, 'withdrawal', 'transaction_id');
  v_new := private.withdrawal_create(t.user_id, t.amount, (t.metadata ->> 'payout_account_id')::uuid, p_provider);
  update public.transactions set metadata = metadata || pg_catalog.jsonb_build_object('retried_by', v_new)
   where id = t.id;
  update public.transactions set metadata = metadata || pg_catalog.jsonb_build_object('retry_of', t.id)
   where id = v_new;
  return v_new;
end
$$;
comment on function private.payout_retry(uuid, text) is
  'admin-payout-retry: a failed payout sent again as a new withdrawal of its amount from the wallet to its payout account, under the withdrawal''s checks; once (payout_already_retried afterwards; payout_not_found, payout_not_failed, payout_retry_unsupported).';
revoke all on function private.payout_retry(uuid, text) from public;
grant execute on function private.payout_retry(uuid, text) to service_role;
