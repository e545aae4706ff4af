-- =============================================================================================
-- Idempotency-Keys claimed inside the operation's own transaction (docs/idempotency.md)
--
-- The key's claim is the first statement of the request's transaction, before any effect:
-- private.idempotency_claim inserts the key, or finds it and refuses the request with what to do
-- instead: replay the stored answer (SQLSTATE ESRPL, the answer in DETAIL), a different body
-- (ESKRU), or a first request still running (ESKIP). Waiting for a first request still in its
-- transaction is bounded by a 2 s lock_timeout. The answer is stored by
-- private.idempotency_answer in the same transaction, just before COMMIT: the operation, its key
-- and its answer commit together or not at all.
--
-- An operation that calls a provider commits its claim with its first transaction (which records
-- the pending movement under the claim's reference) and stores its answer after the provider
-- answered. A claim with no answer is then either still running (its lease: 60 s from the claim,
-- longer than any provider call may take) or was left by a request that died; a retry after the
-- lease takes the claim over and resumes from what was recorded under the same reference.
-- =============================================================================================

alter table private.idempotency_keys
  add column reference uuid not null default gen_random_uuid(),
  add column claimed_at timestamptz not null default now();
comment on column private.idempotency_keys.reference is
  'The reference the operation records its pending movement under (the id of the transaction row), kept across a resumed request.';
comment on column private.idempotency_keys.claimed_at is
  'When a request last took the claim; a claim with no answer is running until 60 s after it.';

create function private.idempotency_claim(
  p_user_id uuid, p_operation text, p_key text, p_request_hash text
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_row private.idempotency_keys%rowtype;
  v_reference uuid;
  v_lock_timeout text := pg_catalog.current_setting('lock_timeout');
begin
  -- the only statement here that may wait is the insert, for another request with the same key
  -- that has not committed yet: 2 s, then "still in progress"
  perform pg_catalog.set_config('lock_timeout', '2s', true);
  begin
    insert into private.idempotency_keys as k (user_id, operation, key, request_hash)
    values (p_user_id, p_operation, p_key, p_request_hash)
    on conflict (user_id, operation, key) do update
      set request_hash = excluded.request_hash, reference = gen_random_uuid(), claimed_at = now(),
          created_at = now(), response_status = null, response_body = null
      where k.created_at < now() - interval '24 hours'
    returning k.reference into v_reference;
  exception when lock_not_available then
    raise exception 'idempotency_in_progress' using errcode = 'ESKIP';
  end;
  perform pg_catalog.set_config('lock_timeout', v_lock_timeout, true);
  if v_reference is not null then
    perform pg_catalog.set_config('escrow.idempotency_reference', v_reference::text, true);
    return pg_catalog.jsonb_build_object('reference', v_reference, 'resumed', false);
  end if;

  select * into v_row from private.idempotency_keys k
   where k.user_id = p_user_id and k.operation = p_operation and k.key = p_key
   for update;
  if v_row.request_hash <> p_request_hash then
    raise exception 'idempotency_key_reused' using errcode = 'ESKRU';
  end if;
  if v_row.response_status is not null then
    raise exception 'idempotency_replay' using errcode = 'ESRPL',
      detail = pg_catalog.jsonb_build_object('status', v_row.response_status, 'body', v_row.response_body)::text;
  end if;
  if v_row.claimed_at > now() - interval '60 seconds' then
    raise exception 'idempotency_in_progress' using errcode = 'ESKIP';
  end if;
  -- a claim left by a request that died: this request takes it over, under the same reference
  update private.idempotency_keys k set claimed_at = now()
   where k.user_id = p_user_id and k.operation = p_operation and k.key = p_key;
  perform pg_catalog.set_config('escrow.idempotency_reference', v_row.reference::text, true);
  return pg_catalog.jsonb_build_object('reference', v_row.reference, 'resumed', true);
end
$$;
comment on function private.idempotency_claim(p_user_id uuid, p_operation text, p_key text, p_request_hash text) is
  'Claims an Idempotency-Key in the calling transaction: {reference, resumed} (resumed: a dead claim taken over); raises ESRPL (replay, answer in DETAIL), ESKRU (other body) or ESKIP (in progress).';
revoke all on function private.idempotency_claim(p_user_id uuid, p_operation text, p_key text, p_request_hash text) from public;
grant execute on function private.idempotency_claim(p_user_id uuid, p_operation text, p_key text, p_request_hash text) to service_role;

create function private.idempotency_answer(
  p_user_id uuid, p_operation text, p_key text, p_status integer, p_body text
)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if p_status is null then
    -- "not now" (a 429, a 5xx): the key is freed for the same request to be retried with it
    delete from private.idempotency_keys k
     where k.user_id = p_user_id and k.operation = p_operation and k.key = p_key;
  else
    update private.idempotency_keys k set response_status = p_status, response_body = p_body
     where k.user_id = p_user_id and k.operation = p_operation and k.key = p_key;
  end if;
end
$$;
comment on function private.idempotency_answer(p_user_id uuid, p_operation text, p_key text, p_status integer, p_body text) is
  'Stores the answer of a claimed Idempotency-Key, or frees the key (null status) after a 429 or a 5xx.';
revoke all on function private.idempotency_answer(p_user_id uuid, p_operation text, p_key text, p_status integer, p_body text) from public;
grant execute on function private.idempotency_answer(p_user_id uuid, p_operation text, p_key text, p_status integer, p_body text) to service_role;

-- the reference a request under a key records its movement under: the claim's (set in the
-- claim's transaction, and by the request's later transactions), else a new one
create function private.idempotency_reference()
returns uuid
language sql
stable
set search_path = ''
as $$
  select coalesce(nullif(pg_catalog.current_setting('escrow.idempotency_reference', true), '')::uuid, gen_random_uuid())
$$;
comment on function private.idempotency_reference() is
  'The id a movement created under an Idempotency-Key takes (the key''s reference, the same for a resumed request), else a new uuid.';
revoke all on function private.idempotency_reference() from public;
grant execute on function private.idempotency_reference() to service_role;

-- =============================================================================================
-- The movements a provider operation records under its key's reference
-- =============================================================================================

create or replace function private.withdrawal_create(p_user uuid, p_amount bigint, p_payout_account uuid, p_provider text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_tx uuid;
  v_ref uuid := private.idempotency_reference();
  pa public.payout_accounts%rowtype;
begin
  -- a request resumed under its Idempotency-Key finds the withdrawal it recorded
  select id into v_tx from public.transactions where id = v_ref and user_id = p_user and type = 'withdrawal';
  if found then
    return v_tx;
  end if;
  if p_amount <= 0 then
    -- an assertion: the endpoint validated the amount
    raise exception 'amount must be positive';
  end if;
  select * into pa from public.payout_accounts where id = p_payout_account and user_id = p_user;
  if not found then
    perform private.refuse(404, 'payout_account_not_found', pg_catalog.jsonb_build_object(
      'field', 'payout_account_id', 'payout_account_id', p_payout_account));
  end if;
  perform private.kyc_limit_check(p_user, p_amount, 'withdrawal', 'amount');
  insert into public.transactions (id, user_id, type, category, message, amount, direction, status, provider, metadata)
  values (v_ref, p_user, 'withdrawal', 'withdrawal',
          pg_catalog.jsonb_build_object('kind', 'withdrawal', 'bank_name', pa.bank_name,
                                        'account_last4', pg_catalog.right(pa.account_number, 4)),
          p_amount, 'out', 'pending', p_provider,
          pg_catalog.jsonb_build_object('payout_account_id', pa.id, 'bank_name', pa.bank_name,
                                        'account_last4', pg_catalog.right(pa.account_number, 4)))
  returning id into v_tx;
  begin
    perform private.post_transfer(
      'withdrawal:' || v_tx, 'withdrawal',
      pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', p_user), 'amount', -p_amount),
        pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', p_amount)),
      v_tx);
  exception when sqlstate 'ES402' then
    -- the wallet holds less than the amount (the ledger's guard): the refusal with its facts
    perform private.refuse(409, 'insufficient_funds', pg_catalog.jsonb_build_object(
      'field', 'amount', 'balance', private.wallet_balance(p_user), 'amount', p_amount));
  end;
  return v_tx;
end
$$;
comment on function private.withdrawal_create(p_user uuid, p_amount bigint, p_payout_account uuid, p_provider text) is
  'wallet-withdraw: a pending withdrawal within the user''s KYC limits (kyc_tier_required, kyc_limit_exceeded otherwise) to one of their payout accounts (payout_account_not_found); under the Idempotency-Key''s reference (the same withdrawal for a resumed request); the amount leaves the wallet at once for the payout transfer (insufficient_funds, facts {field, balance, amount}, when short).';
revoke all on function private.withdrawal_create(p_user uuid, p_amount bigint, p_payout_account uuid, p_provider text) from public;
grant execute on function private.withdrawal_create(p_user uuid, p_amount bigint, p_payout_account uuid, p_provider text) to service_role;

create or replace function private.topup_create(p_user uuid, p_amount bigint, p_provider text, p_card_id uuid)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_tx uuid;
  v_ref uuid := private.idempotency_reference();
begin
  -- a request resumed under its Idempotency-Key finds the top-up it recorded
  select id into v_tx from public.transactions where id = v_ref and user_id = p_user and type = 'wallet_topup';
  if found then
    return v_tx;
  end if;
  if p_amount <= 0 then
    -- an assertion: the endpoint validated the amount
    raise exception 'amount must be positive';
  end if;
  perform private.kyc_limit_check(p_user, p_amount, 'topup', 'amount');
  insert into public.transactions (id, user_id, type, category, message, amount, direction, status, provider, metadata)
  values (v_ref, p_user, 'wallet_topup', 'deposit',
          pg_catalog.jsonb_build_object('kind', case when p_card_id is null then 'wallet_topup'
                                                     else 'wallet_topup_saved_card' end),
          p_amount, 'in', 'pending', p_provider,
          case when p_card_id is null then '{}'::jsonb else pg_catalog.jsonb_build_object('card_id', p_card_id) end)
  returning id into v_tx;
  return v_tx;
end
$$;
comment on function private.topup_create(p_user uuid, p_amount bigint, p_provider text, p_card_id uuid) is
  'wallet-topup: a pending card top-up transaction, whose id is the charge reference (the Idempotency-Key''s, the same top-up for a resumed request), within the user''s KYC limits (kyc_tier_required, kyc_limit_exceeded otherwise).';
revoke all on function private.topup_create(p_user uuid, p_amount bigint, p_provider text, p_card_id uuid) from public;
grant execute on function private.topup_create(p_user uuid, p_amount bigint, p_provider text, p_card_id uuid) to service_role;
