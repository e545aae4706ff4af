-- =============================================================================================
-- Wallet and payments: virtual accounts, saved cards, payout accounts, the webhook inbox and the
-- flags an operator reviews, and the transitions of money coming in (card top-ups, bank
-- transfers) and going out (withdrawals and their payouts). Each transition is one SQL function,
-- one transaction, idempotent (docs/money.md).
--
-- Value only for what the provider confirms: a card charge (a wallet top-up, or a charge funding
-- an escrow) credits exactly the amount its pending transaction expects, never the amount an
-- event claims. A different amount credits nothing: it is recorded in private.payment_flags and
-- the transaction stays pending, marked `review` in its metadata, until the provider's own answer
-- settles it (webhook-payments asks Paystack's verify before it calls these functions,
-- reconciliation asks again later). These functions are the last line: whatever TypeScript
-- passes, a wrong amount is never credited.
-- =============================================================================================

-- =============================================================================================
-- Virtual accounts, saved cards, payout accounts
-- =============================================================================================

create table public.virtual_accounts (
  user_id uuid primary key references private.users (id) on delete cascade,
  status text not null check (status in ('pending', 'active', 'inactive')),
  account_number text,
  account_name text,
  bank_name text,
  provider text not null check (provider in ('paystack', 'sandbox')),
  provider_customer_code text,
  failure_reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table public.virtual_accounts is
  'A user''s dedicated bank account number at the provider, for deposits by bank transfer. Users read theirs.';
create unique index virtual_accounts_account_number_key on public.virtual_accounts (account_number);
create index virtual_accounts_customer_code_idx on public.virtual_accounts (provider_customer_code);
alter table public.virtual_accounts enable row level security;
revoke all on public.virtual_accounts from anon, authenticated;
grant select on public.virtual_accounts to authenticated;
grant select, insert, update on public.virtual_accounts to service_role;
create policy "Users can read their own virtual account"
  on public.virtual_accounts for select to authenticated
  using (user_id = (select auth.uid()));
create policy "Service role manages virtual accounts" on public.virtual_accounts
  for all to service_role using (true) with check (true);

create table public.saved_cards (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references private.users (id) on delete cascade,
  last4 text not null check (last4 ~ '^[0-9]{4}$'),
  brand text not null check (char_length(brand) between 1 and 50),
  exp_month text not null check (exp_month ~ '^(0?[1-9]|1[0-2])$'),
  exp_year text not null check (exp_year ~ '^[0-9]{2}([0-9]{2})?$'),
  bank text check (char_length(bank) <= 100),
  signature text not null check (char_length(signature) between 1 and 200),
  is_default boolean not null default false,
  created_at timestamptz not null default now(),
  unique (user_id, signature)
);
comment on table public.saved_cards is
  'A user''s saved payment cards (display details only; the authorization is private). Users read theirs.';
create unique index saved_cards_one_default on public.saved_cards (user_id) where is_default;
alter table public.saved_cards enable row level security;
revoke all on public.saved_cards from anon, authenticated;
grant select on public.saved_cards to authenticated;
grant select, insert, update, delete on public.saved_cards to service_role;
create policy "Users can read their own cards"
  on public.saved_cards for select to authenticated
  using (user_id = (select auth.uid()));
create policy "Service role manages saved cards" on public.saved_cards
  for all to service_role using (true) with check (true);

-- The provider's reusable authorization for a card: server-side only, never returned.
create table private.card_authorizations (
  card_id uuid primary key references public.saved_cards (id) on delete cascade,
  authorization_code text not null,
  created_at timestamptz not null default now()
);
comment on table private.card_authorizations is
  'The provider''s reusable authorization of each saved card: server-side only, never returned.';
alter table private.card_authorizations enable row level security;
create policy "Service role manages card authorizations" on private.card_authorizations
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.card_authorizations to service_role;

create table public.payout_accounts (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references private.users (id) on delete cascade,
  bank_name text not null check (char_length(bank_name) between 1 and 100),
  bank_code text not null check (bank_code ~ '^[0-9A-Za-z]{2,10}$'),
  account_number text not null check (account_number ~ '^[0-9]{10,20}$'),
  account_name text not null check (char_length(account_name) between 1 and 200),
  is_default boolean not null default false,
  verified boolean not null default false,
  provider_recipient_code text,
  created_at timestamptz not null default now(),
  unique (user_id, bank_code, account_number)
);
comment on table public.payout_accounts is
  'A user''s bank accounts for withdrawals and escrow payouts. Users read theirs.';
create unique index payout_accounts_one_default on public.payout_accounts (user_id) where is_default;
alter table public.payout_accounts enable row level security;
revoke all on public.payout_accounts from anon, authenticated;
grant select on public.payout_accounts to authenticated;
grant select, insert, update, delete on public.payout_accounts to service_role;
create policy "Users can read their own payout accounts"
  on public.payout_accounts for select to authenticated
  using (user_id = (select auth.uid()));
create policy "Service role manages payout accounts" on public.payout_accounts
  for all to service_role using (true) with check (true);

-- =============================================================================================
-- Webhook inbox, flags for review
-- =============================================================================================

-- An event takes effect in the same transaction that inserts its inbox row, so a redelivered or
-- concurrent duplicate finds the row and has no second effect.
create table private.webhook_inbox (
  provider text not null,
  event_key text not null,
  event_type text not null,
  payload jsonb not null,
  outcome text not null,
  received_at timestamptz not null default now(),
  primary key (provider, event_key)
);
comment on table private.webhook_inbox is
  'Every provider webhook event that took effect, once per event key, with its outcome.';
alter table private.webhook_inbox enable row level security;
create policy "Service role manages webhook inbox" on private.webhook_inbox
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.webhook_inbox to service_role;

-- Events whose processing failed: kept for operators; a redelivery is processed afresh.
create table private.webhook_failures (
  id bigint generated always as identity primary key,
  provider text not null,
  event_key text not null,
  event_type text not null,
  payload jsonb not null,
  error text not null,
  created_at timestamptz not null default now()
);
comment on table private.webhook_failures is
  'Provider webhook events whose processing failed, kept for operators; a redelivery is processed afresh.';
alter table private.webhook_failures enable row level security;
create policy "Service role manages webhook failures" on private.webhook_failures
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.webhook_failures to service_role;

-- Money that arrived in a shape we did not expect (amount mismatch, unknown account, ...),
-- recorded for an operator instead of being guessed at.
create table private.payment_flags (
  id bigint generated always as identity primary key,
  reason text not null,
  transaction_id uuid references public.transactions (id),
  provider_reference text,
  expected_amount bigint,
  received_amount bigint,
  payload jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);
comment on table private.payment_flags is
  'Money that arrived in a shape not expected (amount mismatch, closed transaction, ...), kept for an operator.';
create index payment_flags_transaction_id_idx on private.payment_flags (transaction_id);
alter table private.payment_flags enable row level security;
create policy "Service role manages payment flags" on private.payment_flags
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.payment_flags to service_role;

-- Records a card charge that cannot be credited as it stands (reason: amount_mismatch,
-- currency_mismatch, ...): one row in private.payment_flags, and, when the transaction is still
-- pending, metadata.review = {reason, expected_amount, received_amount, provider_status,
-- flagged_at}. provider_status is what the provider's verify said (null: not asked, or no
-- answer); 'success' means the provider's answer is final and disagrees, so reconciliation stops
-- asking and an operator decides. Nothing is credited and the status does not change.
-- Returns 'held_for_review' (pending, marked), 'flagged' (already closed) or 'not_found'.
create function private.charge_hold_for_review(
  p_tx uuid, p_reason text, p_received bigint, p_provider_status text, p_payload jsonb
) returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions;
  v_expected bigint;
begin
  -- only the transaction row is locked (never the escrow), so this cannot invert the
  -- escrow-then-transaction lock order of the escrow operations
  select * into t from public.transactions
   where id = p_tx and type in ('wallet_topup', 'escrow_funding') for update;
  if not found then
    return 'not_found';
  end if;
  if t.type = 'escrow_funding' then
    select total_charge into v_expected from public.escrows where id = t.escrow_id;
  else
    v_expected := t.amount;
  end if;
  insert into private.payment_flags (reason, transaction_id, provider_reference, expected_amount, received_amount, payload)
  values (p_reason, t.id, t.id::text, v_expected, p_received, coalesce(p_payload, '{}'::jsonb));
  if t.status <> 'pending' then
    return 'flagged';
  end if;
  update public.transactions
     set metadata = metadata || pg_catalog.jsonb_build_object('review', pg_catalog.jsonb_build_object(
           'reason', p_reason, 'expected_amount', v_expected, 'received_amount', p_received,
           'provider_status', p_provider_status, 'flagged_at', now()))
   where id = t.id;
  return 'held_for_review';
end
$$;
comment on function private.charge_hold_for_review(uuid, text, bigint, text, jsonb) is
  'A card charge that cannot be credited as it stands: flagged in private.payment_flags and, while pending, marked '
  'metadata.review; credits nothing.';
revoke execute on function private.charge_hold_for_review(uuid, text, bigint, text, jsonb)
  from public, anon, authenticated;
grant execute on function private.charge_hold_for_review(uuid, text, bigint, text, jsonb) to service_role;

-- =============================================================================================
-- Money in: card top-ups, bank transfers into a virtual account
-- =============================================================================================

-- A pending card top-up (new card or saved card). The charge reference is the transaction id.
create function private.topup_create(p_user uuid, p_amount bigint, p_provider text, p_card_id uuid)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_tx uuid;
begin
  if p_amount <= 0 then
    raise exception 'amount must be positive' using errcode = 'ES422';
  end if;
  insert into public.transactions (user_id, type, category, message, amount, direction, status, provider, metadata)
  values (p_user, 'wallet_topup', 'deposit',
          pg_catalog.jsonb_build_object('kind', case when p_card_id is null then 'wallet_topup'
                                                     else 'wallet_topup_saved_card' end),
          p_amount, 'in', 'pending', p_provider,
          case when p_card_id is null then '{}'::jsonb else pg_catalog.jsonb_build_object('card_id', p_card_id) end)
  returning id into v_tx;
  return v_tx;
end
$$;
comment on function private.topup_create(uuid, bigint, text, uuid) is
  'wallet-topup: a pending card top-up transaction, whose id is the charge reference.';
revoke execute on function private.topup_create(uuid, bigint, text, uuid) from public, anon, authenticated;
grant execute on function private.topup_create(uuid, bigint, text, uuid) to service_role;

-- Completes a pending top-up on a confirmed charge. Credits exactly the pending amount: a
-- received amount other than that credits nothing, is flagged (amount_mismatch) and leaves the
-- top-up pending under review. A charge for a top-up already failed or canceled is flagged, not
-- credited. Returns 'succeeded', 'already_done', 'flagged' or 'not_found'.
create function private.topup_succeed(p_tx uuid, p_received bigint, p_charge_id text, p_payload jsonb)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions%rowtype;
begin
  select * into t from public.transactions where id = p_tx and type = 'wallet_topup' for update;
  if not found then
    return 'not_found';
  end if;
  if t.status in ('failed', 'canceled') then
    -- money arrived for a top-up we had already closed: not credited, but kept for an operator
    insert into private.payment_flags (reason, transaction_id, provider_reference, expected_amount, received_amount, payload)
    values ('charge_for_closed_transaction', t.id, t.id::text, t.amount, p_received, p_payload);
    return 'flagged';
  end if;
  if t.status <> 'pending' then
    return 'already_done';
  end if;
  if p_received is null or p_received <> t.amount then
    perform private.charge_hold_for_review(t.id, 'amount_mismatch', p_received, null, p_payload);
    return 'flagged';
  end if;
  update public.transactions
     set status = 'succeeded', completed_at = now(), provider_charge_id = p_charge_id, metadata = metadata - 'review'
   where id = t.id;
  perform private.post_transfer(
    'topup:' || t.id, 'wallet_topup',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', -t.amount),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', t.user_id), 'amount', t.amount)),
    t.id);
  return 'succeeded';
end
$$;
comment on function private.topup_succeed(uuid, bigint, text, jsonb) is
  'Completes a pending top-up crediting exactly its amount; any other received amount credits nothing and is held for '
  'review.';
revoke execute on function private.topup_succeed(uuid, bigint, text, jsonb) from public, anon, authenticated;
grant execute on function private.topup_succeed(uuid, bigint, text, jsonb) to service_role;

-- A charge that failed: the pending top-up is marked failed (no ledger effect).
create function private.topup_fail(p_tx uuid, p_reason text)
returns text
language plpgsql
set search_path = ''
as $$
begin
  update public.transactions
     set status = 'failed', completed_at = now(), metadata = metadata || pg_catalog.jsonb_build_object('failure_reason', p_reason)
   where id = p_tx and type = 'wallet_topup' and status = 'pending';
  return case when found then 'failed' else 'already_done' end;
end
$$;
comment on function private.topup_fail(uuid, text) is
  'A failed top-up charge: the pending top-up is marked failed; nothing moves.';
revoke execute on function private.topup_fail(uuid, text) from public, anon, authenticated;
grant execute on function private.topup_fail(uuid, text) to service_role;

-- Money that arrived by bank transfer into a user's dedicated virtual account: a new, already
-- succeeded deposit, credited at once. Idempotent on the provider's charge id.
create function private.virtual_account_deposit(
  p_user uuid, p_amount bigint, p_provider text, p_charge_id text, p_metadata jsonb
)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_tx uuid;
begin
  if p_amount <= 0 then
    raise exception 'amount must be positive' using errcode = 'ES422';
  end if;
  select id into v_tx from public.transactions
   where provider_charge_id = p_charge_id and type = 'virtual_account_deposit' and user_id = p_user;
  if found then
    return v_tx;
  end if;
  insert into public.transactions (user_id, type, category, message, amount, direction, status, provider,
                                   provider_charge_id, metadata, completed_at)
  values (p_user, 'virtual_account_deposit', 'deposit',
          pg_catalog.jsonb_build_object('kind', 'virtual_account_deposit'),
          p_amount, 'in', 'succeeded', p_provider, p_charge_id, coalesce(p_metadata, '{}'::jsonb), now())
  returning id into v_tx;
  perform private.post_transfer(
    'va-deposit:' || p_charge_id, 'virtual_account_deposit',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', -p_amount),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', p_user), 'amount', p_amount)),
    v_tx);
  return v_tx;
end
$$;
comment on function private.virtual_account_deposit(uuid, bigint, text, text, jsonb) is
  'Credits a bank transfer into a user''s virtual account to their wallet as a settled deposit, once per provider '
  'charge id.';
revoke execute on function private.virtual_account_deposit(uuid, bigint, text, text, jsonb)
  from public, anon, authenticated;
grant execute on function private.virtual_account_deposit(uuid, bigint, text, text, jsonb) to service_role;

-- =============================================================================================
-- Money out: withdrawals and payout transfers
-- =============================================================================================

-- The payments provider the functions are configured with (PAYMENTS_PROVIDER), which shared/db.ts
-- sets on every service transaction as escrow.payments_provider; 'sandbox', the configuration's
-- default, when SQL runs outside the functions (shared/payouts.ts then records the provider it
-- sends the payout through).
create function private.payments_provider()
returns text
language sql
stable
set search_path = ''
as $$
  select coalesce(nullif(pg_catalog.current_setting('escrow.payments_provider', true), ''), 'sandbox');
$$;
comment on function private.payments_provider() is
  'The configured payments provider (escrow.payments_provider, set by the functions), else sandbox.';
revoke execute on function private.payments_provider() from public, anon, authenticated;
grant execute on function private.payments_provider() to service_role;

-- Starts a withdrawal: a pending transaction, and the amount leaves the wallet at once (to the
-- provider clearing account, where the payout transfer draws it). ES402 when the wallet is short.
create function private.withdrawal_create(p_user uuid, p_amount bigint, p_payout_account uuid, p_provider text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_tx uuid;
  pa public.payout_accounts%rowtype;
begin
  if p_amount <= 0 then
    raise exception 'amount must be positive' using errcode = 'ES422';
  end if;
  select * into pa from public.payout_accounts where id = p_payout_account and user_id = p_user;
  if not found then
    raise exception 'payout account not found' using errcode = 'ES404';
  end if;
  insert into public.transactions (user_id, type, category, message, amount, direction, status, provider, metadata)
  values (p_user, 'withdrawal', 'withdrawal',
          pg_catalog.jsonb_build_object('kind', 'withdrawal', 'bank_name', pa.bank_name,
                                        'account_last4', pg_catalog.right(pa.account_number, 4)),
          p_amount, 'out', 'pending', p_provider,
          pg_catalog.jsonb_build_object('payout_account_id', pa.id, 'bank_name', pa.bank_name,
                                        'account_last4', pg_catalog.right(pa.account_number, 4)))
  returning id into v_tx;
  perform private.post_transfer(
    'withdrawal:' || v_tx, 'withdrawal',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', p_user), 'amount', -p_amount),
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', p_amount)),
    v_tx);
  return v_tx;
end
$$;
comment on function private.withdrawal_create(uuid, bigint, uuid, text) is
  'wallet-withdraw: a pending withdrawal; the amount leaves the wallet at once for the payout transfer (ES402 when '
  'short).';
revoke execute on function private.withdrawal_create(uuid, bigint, uuid, text) from public, anon, authenticated;
grant execute on function private.withdrawal_create(uuid, bigint, uuid, text) to service_role;

-- A payout transfer (withdrawal or escrow payout) succeeded. Returns 'succeeded', 'already_done'
-- or 'not_found'; a transfer that was already failed and reversed is not resurrected.
create function private.payout_succeed(p_tx uuid, p_transfer_code text)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions%rowtype;
begin
  select * into t from public.transactions where id = p_tx and type in ('withdrawal', 'escrow_payout') for update;
  if not found then
    return 'not_found';
  end if;
  if t.status <> 'pending' then
    return 'already_done';
  end if;
  update public.transactions
     set status = 'succeeded', completed_at = now(), provider_transfer_id = coalesce(p_transfer_code, provider_transfer_id)
   where id = t.id;
  return 'succeeded';
end
$$;
comment on function private.payout_succeed(uuid, text) is
  'A payout transfer (withdrawal or escrow payout) succeeded: the transaction is marked succeeded, once.';
revoke execute on function private.payout_succeed(uuid, text) from public, anon, authenticated;
grant execute on function private.payout_succeed(uuid, text) to service_role;

-- A payout transfer failed or was reversed: the transaction is marked failed and the deduction is
-- reversed into the wallet, exactly once (a later success or failure for it changes nothing).
-- A reversal after a success (transfer.reversed following transfer.success) also returns the money.
create function private.payout_fail(p_tx uuid, p_reason text, p_transfer_code text)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions%rowtype;
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
  perform private.post_transfer(
    'payout-reversal:' || t.id, 'payout_reversal',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', -t.amount),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', t.user_id), 'amount', t.amount)),
    t.id);
  return 'failed';
end
$$;
comment on function private.payout_fail(uuid, text, text) is
  'A payout transfer failed or was reversed: marked failed and the amount returned to the wallet, exactly once.';
revoke execute on function private.payout_fail(uuid, text, text) from public, anon, authenticated;
grant execute on function private.payout_fail(uuid, text, text) to service_role;

-- =============================================================================================
-- Saved cards and payout accounts
-- =============================================================================================

-- Saved cards: deduplicated by signature per user; the first card becomes the default.
create function private.card_add(
  p_user uuid, p_authorization_code text, p_last4 text, p_brand text, p_exp_month text, p_exp_year text,
  p_bank text, p_signature text
) returns table (card_id uuid, created boolean)
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('cards:' || p_user, 0));
  select c.id into v_id from public.saved_cards c where c.user_id = p_user and c.signature = p_signature;
  if found then
    -- the same card again: refresh its details and authorization, keep one row
    update public.saved_cards c
       set last4 = p_last4, brand = p_brand, exp_month = p_exp_month, exp_year = p_exp_year, bank = coalesce(p_bank, c.bank)
     where c.id = v_id;
    update private.card_authorizations ca set authorization_code = p_authorization_code where ca.card_id = v_id;
    return query select v_id, false;
    return;
  end if;
  insert into public.saved_cards (user_id, last4, brand, exp_month, exp_year, bank, signature, is_default)
  values (p_user, p_last4, p_brand, p_exp_month, p_exp_year, p_bank, p_signature,
          not exists (select 1 from public.saved_cards c where c.user_id = p_user))
  returning saved_cards.id into v_id;
  insert into private.card_authorizations (card_id, authorization_code) values (v_id, p_authorization_code);
  return query select v_id, true;
end
$$;
comment on function private.card_add(uuid, text, text, text, text, text, text, text) is
  'Saves a card (deduplicated by signature per user, the first becomes the default) with its provider authorization.';
revoke execute on function private.card_add(uuid, text, text, text, text, text, text, text)
  from public, anon, authenticated;
grant execute on function private.card_add(uuid, text, text, text, text, text, text, text) to service_role;

-- Removes a card; when it was the default, the newest remaining card becomes the default.
create function private.card_remove(p_user uuid, p_card uuid)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  was_default boolean;
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('cards:' || p_user, 0));
  delete from public.saved_cards where id = p_card and user_id = p_user returning is_default into was_default;
  if not found then
    return false;
  end if;
  if was_default then
    update public.saved_cards set is_default = true
     where id = (select id from public.saved_cards where user_id = p_user order by created_at desc, id desc limit 1);
  end if;
  return true;
end
$$;
comment on function private.card_remove(uuid, uuid) is
  'Removes a user''s saved card; the newest remaining card becomes the default if it was.';
revoke execute on function private.card_remove(uuid, uuid) from public, anon, authenticated;
grant execute on function private.card_remove(uuid, uuid) to service_role;

create function private.card_set_default(p_user uuid, p_card uuid)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('cards:' || p_user, 0));
  if not exists (select 1 from public.saved_cards where id = p_card and user_id = p_user) then
    return false;
  end if;
  update public.saved_cards set is_default = false where user_id = p_user and is_default and id <> p_card;
  update public.saved_cards set is_default = true where id = p_card;
  return true;
end
$$;
comment on function private.card_set_default(uuid, uuid) is
  'Makes one of a user''s saved cards the default; false when it is not theirs.';
revoke execute on function private.card_set_default(uuid, uuid) from public, anon, authenticated;
grant execute on function private.card_set_default(uuid, uuid) to service_role;

-- Payout accounts: one per (bank, number) per user; the first becomes the default.
create function private.payout_add(
  p_user uuid, p_bank_code text, p_bank_name text, p_account_number text, p_account_name text,
  p_verified boolean, p_recipient_code text
) returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('payouts:' || p_user, 0));
  insert into public.payout_accounts (user_id, bank_code, bank_name, account_number, account_name, verified,
                                      provider_recipient_code, is_default)
  values (p_user, p_bank_code, p_bank_name, p_account_number, p_account_name, p_verified, p_recipient_code,
          not exists (select 1 from public.payout_accounts where user_id = p_user))
  returning id into v_id;
  return v_id;
end
$$;
comment on function private.payout_add(uuid, text, text, text, text, boolean, text) is
  'Adds a payout account for a user (the first becomes the default); returns its id.';
revoke execute on function private.payout_add(uuid, text, text, text, text, boolean, text)
  from public, anon, authenticated;
grant execute on function private.payout_add(uuid, text, text, text, text, boolean, text) to service_role;

create function private.payout_remove(p_user uuid, p_account uuid)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  was_default boolean;
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('payouts:' || p_user, 0));
  delete from public.payout_accounts where id = p_account and user_id = p_user returning is_default into was_default;
  if not found then
    return false;
  end if;
  if was_default then
    update public.payout_accounts set is_default = true
     where id = (select id from public.payout_accounts where user_id = p_user order by created_at desc, id desc limit 1);
  end if;
  return true;
end
$$;
comment on function private.payout_remove(uuid, uuid) is
  'Removes a user''s payout account; the newest remaining one becomes the default if it was.';
revoke execute on function private.payout_remove(uuid, uuid) from public, anon, authenticated;
grant execute on function private.payout_remove(uuid, uuid) to service_role;

create function private.payout_set_default(p_user uuid, p_account uuid)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('payouts:' || p_user, 0));
  if not exists (select 1 from public.payout_accounts where id = p_account and user_id = p_user) then
    return false;
  end if;
  update public.payout_accounts set is_default = false where user_id = p_user and is_default and id <> p_account;
  update public.payout_accounts set is_default = true where id = p_account;
  return true;
end
$$;
comment on function private.payout_set_default(uuid, uuid) is
  'Makes one of a user''s payout accounts the default; false when it is not theirs.';
revoke execute on function private.payout_set_default(uuid, uuid) from public, anon, authenticated;
grant execute on function private.payout_set_default(uuid, uuid) to service_role;
