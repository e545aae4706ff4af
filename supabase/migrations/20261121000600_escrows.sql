-- =============================================================================================
-- Escrows: categories and their fee schedules and rules, the escrows themselves and their
-- conversations, who may read them, and the helpers every escrow operation uses. The operations
-- (one SQL function per transition, docs/escrow.md) follow in later files: creation, funding,
-- lifecycle, milestones.
--
-- Every transition locks the escrow row first (private.escrow_lock), so concurrent operations on
-- one escrow run one after the other and each sees the state the previous one left: exactly one
-- of a release, a refund and a cancel can win. Refusals use SQLSTATE ES<http status>: ES403 a
-- party doing what its role may not, ES404 not a party (or no such escrow), ES409 the current
-- state does not allow it, ES422 invalid input.
-- =============================================================================================

-- =============================================================================================
-- Categories: fee schedules (one row per category) and what each category means
-- =============================================================================================

create type public.escrow_category as enum ('goods_products', 'hiring', 'auto_dealership', 'p2p_crypto');
grant usage on type public.escrow_category to service_role, authenticated;

create table private.fee_schedules (
  category public.escrow_category primary key,
  fee_bps integer not null check (fee_bps between 0 and 10000),
  min_fee bigint not null check (min_fee >= 0),
  max_fee bigint not null check (max_fee >= min_fee),
  payer_share_bps integer not null check (payer_share_bps between 0 and 10000),
  vat_bps integer not null check (vat_bps between 0 and 10000),
  updated_at timestamptz not null default now()
);
comment on table private.fee_schedules is
  'The fee of each escrow category: rate, minimum, maximum, the payer''s share and VAT.';
alter table private.fee_schedules enable row level security;
create policy "Service role manages fee schedules" on private.fee_schedules
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.fee_schedules to service_role;
insert into private.fee_schedules (category, fee_bps, min_fee, max_fee, payer_share_bps, vat_bps)
select c, 150, 10000, 2000000, 5000, 750 from unnest(enum_range(null::public.escrow_category)) as c;

-- What each category means for inspection and release (spec: category semantics).
create table private.category_rules (
  category public.escrow_category primary key,
  payer_label text not null,
  payee_label text not null,
  inspection_period_days integer not null check (inspection_period_days >= 0),
  -- goods_products: delivery opens an inspection period that ends in an automatic release
  inspection_on_delivery boolean not null,
  -- auto_dealership: the payer releases by confirming a delivery the dealer recorded
  release_needs_delivery boolean not null,
  release_type text not null,
  transaction_type text not null
);
comment on table private.category_rules is
  'What each escrow category means: party labels, inspection period, how and when money is released.';
alter table private.category_rules enable row level security;
create policy "Service role manages category rules" on private.category_rules
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.category_rules to service_role;
insert into private.category_rules values
  ('goods_products',  'Buyer',  'Seller',     1, true,  false, 'after_inspection', 'goods'),
  ('hiring',          'Client', 'Freelancer', 0, false, false, 'manual',           'service'),
  ('auto_dealership', 'Buyer',  'Dealer',     0, false, true,  'on_delivery',      'vehicle'),
  ('p2p_crypto',      'Sender', 'Receiver',   0, false, false, 'on_approval',      'crypto');

-- =============================================================================================
-- Escrows
-- =============================================================================================

-- Nothing tells an initiator whether the invited phone has an account: the escrow's link to the
-- counterparty (counterparty_id) is kept for the SQL functions and the row-level security, but
-- the API roles cannot read that column; they read revealed_counterparty_id, which is filled only
-- once the counterparty has accepted or declined.
create table public.escrows (
  id uuid primary key default gen_random_uuid(),
  initiator_id uuid not null references private.users (id),
  counterparty_id uuid references private.users (id),
  counterparty_phone text not null check (counterparty_phone ~ '^\+234[0-9]{10}$'),
  category public.escrow_category not null,
  payer_role text not null check (payer_role in ('initiator', 'counterparty')),
  title text not null check (char_length(title) between 1 and 200),
  description text not null default '' check (char_length(description) <= 2000),
  transaction_type text not null,
  release_type text not null,
  amount bigint not null check (amount > 0),
  currency text not null default 'NGN' check (currency = 'NGN'),
  status text not null check (status in ('draft', 'invite_pending', 'active', 'funded', 'inspection', 'released',
                                         'refunded', 'disputed', 'cancelled', 'deleted', 'ended')),
  inspection_period_days integer not null,
  payer_fee bigint not null check (payer_fee >= 0),
  vat bigint not null check (vat >= 0),
  total_charge bigint not null,
  seller_fee bigint not null check (seller_fee >= 0),
  seller_payout bigint not null check (seller_payout >= 0),
  released_amount bigint not null default 0 check (released_amount >= 0),
  invite_token_hash text not null unique,
  awaiting_bank_transfer_at timestamptz,
  accepted_at timestamptz,
  funded_at timestamptz,
  delivered_at timestamptz,
  inspection_ends_at timestamptz,
  released_at timestamptz,
  refunded_at timestamptz,
  cancelled_at timestamptz,
  ended_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  declined_at timestamptz,
  revealed_counterparty_id uuid
    generated always as (case when accepted_at is not null or declined_at is not null then counterparty_id end) stored,
  constraint escrows_fee_sums check (total_charge = amount + payer_fee + vat and seller_payout = amount - seller_fee),
  constraint escrows_released_within check (released_amount <= amount),
  constraint escrows_not_self check (counterparty_id is null or counterparty_id <> initiator_id)
);
comment on table public.escrows is
  'An escrow between an initiator and a counterparty: terms, fees, state and when it changed. Parties read it.';
comment on column public.escrows.counterparty_id is
  'The invited counterparty''s account, linked at creation or when that phone signs up. Not readable by the API '
  'roles: before acceptance it would tell the initiator whether the phone has an account (see '
  'revealed_counterparty_id).';
comment on column public.escrows.declined_at is
  'When the counterparty declined (the escrow is then cancelled, or refunded when it was funded).';
comment on column public.escrows.revealed_counterparty_id is
  'counterparty_id once the counterparty has accepted or declined, else null: what answers to the initiator may show.';
-- escrow-list pages by created_at for a user who may be on either side: created_at is unique
-- over the whole table (trigger below), so the timestamp cursor is exact.
create unique index escrows_created_at_key on public.escrows (created_at desc);
create index escrows_initiator_idx on public.escrows (initiator_id, created_at desc);
create index escrows_counterparty_idx on public.escrows (counterparty_id, created_at desc);
create index escrows_counterparty_phone_idx on public.escrows (counterparty_phone) where counterparty_id is null;
create index escrows_inspection_due_idx on public.escrows (inspection_ends_at) where status = 'inspection';
create index escrows_closing_idx on public.escrows (coalesce(released_at, refunded_at))
  where status in ('released', 'refunded');
create trigger escrows_created_at_increasing before insert on public.escrows
  for each row execute function private.strictly_increasing_created_at_global();
alter table public.escrows enable row level security;

-- Parties read their escrows; everything is written by SQL functions. The API roles read every
-- column but counterparty_id (and the invite token's hash, which no client needs). Row-level
-- security still uses counterparty_id: policies need no column privilege. A column added to
-- public.escrows later is not readable by `authenticated` until granted here.
revoke all on public.escrows from anon, authenticated;
grant select (
  id, initiator_id, counterparty_phone, category, payer_role, title, description, transaction_type, release_type,
  amount, currency, status, inspection_period_days, payer_fee, vat, total_charge, seller_fee, seller_payout,
  released_amount, awaiting_bank_transfer_at, accepted_at, funded_at, delivered_at, inspection_ends_at, released_at,
  refunded_at, cancelled_at, ended_at, created_at, updated_at, declined_at, revealed_counterparty_id
) on public.escrows to authenticated;
grant select, insert, update, delete on public.escrows to service_role;

create policy "Parties can read their escrows"
  on public.escrows for select to authenticated
  using (initiator_id = (select auth.uid()) or counterparty_id = (select auth.uid()));
create policy "Service role manages escrows" on public.escrows
  for all to service_role using (true) with check (true);

-- A counterparty who signs up later with the invited phone is linked to the escrows waiting for
-- it. updated_at is left alone: the initiator reads it, and a change at the invitee's sign-up
-- would tell them that the phone had no account until now.
create function private.link_invited_escrows()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  update public.escrows set counterparty_id = new.id
   where counterparty_phone = new.phone and counterparty_id is null and initiator_id <> new.id;
  return new;
end
$$;
comment on function private.link_invited_escrows() is
  'Trigger on private.users: links the escrows waiting for the new account''s phone, leaving updated_at unchanged.';
revoke execute on function private.link_invited_escrows() from public, anon, authenticated;
create trigger users_link_invited_escrows after insert on private.users
  for each row execute function private.link_invited_escrows();

-- =============================================================================================
-- Conversations (one per escrow)
-- =============================================================================================

create table public.conversations (
  id uuid primary key default gen_random_uuid(),
  escrow_id uuid not null unique references public.escrows (id) on delete cascade,
  created_at timestamptz not null default now()
);
comment on table public.conversations is
  'The conversation of an escrow (one each), which its notifications belong to. Parties read it.';
alter table public.conversations enable row level security;

revoke all on public.conversations from anon, authenticated;
grant select on public.conversations to authenticated;
grant select, insert, update, delete on public.conversations to service_role;

-- The subquery reads public.escrows under its own policy, so it finds only the caller's escrows.
create policy "Parties can read their escrows' conversations"
  on public.conversations for select to authenticated
  using (exists (select 1 from public.escrows e where e.id = escrow_id));
create policy "Service role manages conversations" on public.conversations
  for all to service_role using (true) with check (true);

-- =============================================================================================
-- Helpers of every escrow operation: parties, the lock, refusals
-- =============================================================================================

create function private.payer_of(e public.escrows) returns uuid
language sql immutable set search_path = ''
as $$ select case when e.payer_role = 'initiator' then e.initiator_id else e.counterparty_id end $$;
comment on function private.payer_of(public.escrows) is
  'The escrow''s payer: the initiator or the counterparty, by payer_role.';
revoke execute on function private.payer_of(public.escrows) from public, anon, authenticated;
grant execute on function private.payer_of(public.escrows) to service_role;

create function private.payee_of(e public.escrows) returns uuid
language sql immutable set search_path = ''
as $$ select case when e.payer_role = 'initiator' then e.counterparty_id else e.initiator_id end $$;
comment on function private.payee_of(public.escrows) is
  'The escrow''s payee: the party who is not the payer.';
revoke execute on function private.payee_of(public.escrows) from public, anon, authenticated;
grant execute on function private.payee_of(public.escrows) to service_role;

-- Locks the escrow and checks the actor is one of its parties (ES404 otherwise, so a stranger
-- cannot tell the escrow exists). A null actor is the system (jobs, webhooks).
create function private.escrow_lock(p_escrow uuid, p_actor uuid)
returns public.escrows
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows;
begin
  select * into e from public.escrows where id = p_escrow for update;
  if not found or (p_actor is not null and p_actor is distinct from e.initiator_id and p_actor is distinct from e.counterparty_id) then
    raise exception 'escrow not found' using errcode = 'ES404';
  end if;
  return e;
end
$$;
comment on function private.escrow_lock(uuid, uuid) is
  'Locks an escrow for an operation and returns it; ES404 unless the actor is one of its parties (a null actor is the '
  'system).';
revoke execute on function private.escrow_lock(uuid, uuid) from public, anon, authenticated;
grant execute on function private.escrow_lock(uuid, uuid) to service_role;

create function private.refuse_state(e public.escrows, p_action text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  raise exception 'cannot % an escrow that is %', p_action,
    e.status || case when e.status = 'active' and e.funded_at is not null then ' (funded, awaiting acceptance)'
                     when e.status = 'active' then ' (accepted, awaiting funding)' else '' end
    using errcode = 'ES409';
end
$$;
comment on function private.refuse_state(public.escrows, text) is
  'Raises ES409: the escrow''s current state does not allow the action (named in the message).';
revoke execute on function private.refuse_state(public.escrows, text) from public, anon, authenticated;
grant execute on function private.refuse_state(public.escrows, text) to service_role;

create function private.refuse_role(p_message text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  raise exception '%', p_message using errcode = 'ES403';
end
$$;
comment on function private.refuse_role(text) is
  'Raises ES403 with the message: a party doing what its role may not.';
revoke execute on function private.refuse_role(text) from public, anon, authenticated;
grant execute on function private.refuse_role(text) to service_role;

-- =============================================================================================
-- States: the conditions several operations test, each written once
-- =============================================================================================

-- The payer may pay the escrow's money in now: a draft (the initiator pays before inviting), or
-- an accepted invitation whose money has not come in (status active, funded_at null).
create function private.escrow_is_fundable(e public.escrows) returns boolean
language sql immutable set search_path = ''
as $$ select e.status = 'draft' or (e.status = 'active' and e.funded_at is null) $$;
comment on function private.escrow_is_fundable(public.escrows) is
  'Whether the payer may fund the escrow now: a draft, or an accepted invitation whose money has not come in.';
revoke execute on function private.escrow_is_fundable(public.escrows) from public, anon, authenticated;
grant execute on function private.escrow_is_fundable(public.escrows) to service_role;

-- Open and without money in it: fundable, or an invitation the counterparty (the payer) has not
-- answered yet. Cancelling or declining it refunds nothing.
create function private.escrow_is_unfunded(e public.escrows) returns boolean
language sql immutable set search_path = ''
as $$ select e.status = 'invite_pending' or private.escrow_is_fundable(e) $$;
comment on function private.escrow_is_unfunded(public.escrows) is
  'Whether the escrow is open with no money in it: a draft, an unanswered invitation, or accepted and not yet funded.';
revoke execute on function private.escrow_is_unfunded(public.escrows) from public, anon, authenticated;
grant execute on function private.escrow_is_unfunded(public.escrows) to service_role;

-- Funded by the initiator (the payer) and not yet accepted by the counterparty: status active with
-- funded_at set. Accepting makes it funded; declining or the payer cancelling refunds it.
create function private.escrow_is_funded_unaccepted(e public.escrows) returns boolean
language sql immutable set search_path = ''
as $$ select e.status = 'active' and e.funded_at is not null and e.accepted_at is null $$;
comment on function private.escrow_is_funded_unaccepted(public.escrows) is
  'Whether the escrow holds the initiator''s money and waits for the counterparty to accept it.';
revoke execute on function private.escrow_is_funded_unaccepted(public.escrows) from public, anon, authenticated;
grant execute on function private.escrow_is_funded_unaccepted(public.escrows) to service_role;

-- Milestones may still be proposed, edited, approved or completed while the escrow has not been
-- released, refunded or closed: draft, invite_pending, active or funded.
create function private.escrow_milestones_may_change(e public.escrows) returns boolean
language sql immutable set search_path = ''
as $$ select e.status in ('draft', 'invite_pending', 'active', 'funded') $$;
comment on function private.escrow_milestones_may_change(public.escrows) is
  'Whether the escrow''s milestones may still be proposed, edited, approved or completed (draft to funded).';
revoke execute on function private.escrow_milestones_may_change(public.escrows) from public, anon, authenticated;
grant execute on function private.escrow_milestones_may_change(public.escrows) to service_role;
