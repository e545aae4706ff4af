-- Escrows: fee schedules, escrows, conversations, notifications, milestones, the SMS queue, and
-- one SQL function per transition (DESIGN.md section 7). Every transition locks the escrow row
-- first, so concurrent operations on one escrow run one after the other and each sees the state
-- the previous one left: exactly one of a release, a refund and a cancel can win.
--
-- Refusals use SQLSTATE ES<http status>: ES403 a party doing what its role may not, ES404 not a
-- party (or no such escrow), ES409 the current state does not allow it, ES422 invalid input.

-- ---------------------------------------------------------------------------------------------
-- Fee schedules (one row per category; DESIGN.md defaults)
-- ---------------------------------------------------------------------------------------------

create type public.escrow_category as enum ('goods_products', 'hiring', 'auto_dealership', 'p2p_crypto');

create table private.fee_schedules (
  category public.escrow_category primary key,
  fee_bps integer not null check (fee_bps between 0 and 10000),
  min_fee bigint not null check (min_fee >= 0),
  max_fee bigint not null check (max_fee >= min_fee),
  payer_share_bps integer not null check (payer_share_bps between 0 and 10000),
  vat_bps integer not null check (vat_bps between 0 and 10000),
  updated_at timestamptz not null default now()
);
alter table private.fee_schedules enable row level security;
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
alter table private.category_rules enable row level security;
insert into private.category_rules values
  ('goods_products',  'Buyer',  'Seller',     1, true,  false, 'after_inspection', 'goods'),
  ('hiring',          'Client', 'Freelancer', 0, false, false, 'manual',           'service'),
  ('auto_dealership', 'Buyer',  'Dealer',     0, false, true,  'on_delivery',      'vehicle'),
  ('p2p_crypto',      'Sender', 'Receiver',   0, false, false, 'on_approval',      'crypto');

-- ---------------------------------------------------------------------------------------------
-- Escrows and conversations
-- ---------------------------------------------------------------------------------------------

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
  constraint escrows_fee_sums check (total_charge = amount + payer_fee + vat and seller_payout = amount - seller_fee),
  constraint escrows_released_within check (released_amount <= amount),
  constraint escrows_not_self check (counterparty_id is null or counterparty_id <> initiator_id)
);
-- escrow-list pages by created_at for a user who may be on either side: created_at is unique
-- over the whole table (trigger below), so the timestamp cursor is exact.
create unique index escrows_created_at_key on public.escrows (created_at desc);
create index escrows_initiator_idx on public.escrows (initiator_id, created_at desc);
create index escrows_counterparty_idx on public.escrows (counterparty_id, created_at desc);
create index escrows_counterparty_phone_idx on public.escrows (counterparty_phone) where counterparty_id is null;
create index escrows_inspection_due_idx on public.escrows (inspection_ends_at) where status = 'inspection';
create index escrows_closing_idx on public.escrows (coalesce(released_at, refunded_at)) where status in ('released', 'refunded');
alter table public.escrows enable row level security;

-- The global variant of strictly_increasing_created_at: one series for the whole table.
create function private.strictly_increasing_created_at_global()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  v_last timestamptz;
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended(tg_table_schema || '.' || tg_table_name, 0));
  execute pg_catalog.format('select max(created_at) from %I.%I', tg_table_schema, tg_table_name) into v_last;
  if v_last is not null and new.created_at <= v_last then
    new.created_at := v_last + interval '1 microsecond';
  end if;
  return new;
end
$$;
create trigger escrows_created_at_increasing before insert on public.escrows
  for each row execute function private.strictly_increasing_created_at_global();

create table public.conversations (
  id uuid primary key default gen_random_uuid(),
  escrow_id uuid not null unique references public.escrows (id) on delete cascade,
  created_at timestamptz not null default now()
);
alter table public.conversations enable row level security;

alter table public.transactions
  add constraint transactions_escrow_fk foreign key (escrow_id) references public.escrows (id);

-- ---------------------------------------------------------------------------------------------
-- Notifications and the SMS queue
-- ---------------------------------------------------------------------------------------------

create table public.notifications (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references private.users (id) on delete cascade,
  escrow_id uuid not null references public.escrows (id) on delete cascade,
  conversation_id uuid not null references public.conversations (id) on delete cascade,
  event_type text not null,
  content text not null,
  entity_type text not null check (entity_type in ('escrow', 'transaction', 'milestone')),
  entity_id uuid not null,
  action_label text,
  is_read boolean not null default false,
  created_at timestamptz not null default now()
);
create unique index notifications_user_created_key on public.notifications (user_id, created_at desc);
create index notifications_escrow_idx on public.notifications (escrow_id, created_at);
create index notifications_conversation_idx on public.notifications (conversation_id);
create trigger notifications_created_at_increasing before insert on public.notifications
  for each row execute function private.strictly_increasing_created_at('user_id');
alter table public.notifications enable row level security;

-- SMS written by transitions are queued in the same transaction and sent after commit (and
-- retried by the job); rows the OTP flow writes in outbox mode are delivered as they are written.
alter table private.sms_outbox
  add column sent_at timestamptz default now(),
  add column attempts integer not null default 0,
  add column last_error text;
create index sms_outbox_unsent_idx on private.sms_outbox (id) where sent_at is null;

create function private.queue_sms(p_phone text, p_body text)
returns void
language sql
set search_path = ''
as $$
  insert into private.sms_outbox (phone, body, sent_at) values (p_phone, p_body, null);
$$;

create function private.notify(
  p_user uuid, p_escrow uuid, p_event text, p_content text, p_entity_type text, p_entity uuid, p_action text
) returns void
language sql
set search_path = ''
as $$
  insert into public.notifications (user_id, escrow_id, conversation_id, event_type, content, entity_type, entity_id, action_label)
  select p_user, p_escrow, c.id, p_event, p_content, p_entity_type, p_entity, p_action
    from public.conversations c where c.escrow_id = p_escrow and p_user is not null;
$$;

-- ---------------------------------------------------------------------------------------------
-- Milestones
-- ---------------------------------------------------------------------------------------------

create table public.milestones (
  id uuid primary key default gen_random_uuid(),
  escrow_id uuid not null references public.escrows (id) on delete cascade,
  created_by uuid not null references private.users (id),
  milestone_index integer not null check (milestone_index >= 1),
  title text not null check (char_length(title) between 1 and 200),
  description text check (char_length(description) <= 2000),
  amount bigint not null check (amount > 0),
  due_date date,
  status text not null default 'proposed' check (status in ('proposed', 'accepted', 'completed', 'released', 'cancelled')),
  initiator_approved boolean not null default false,
  counterparty_approved boolean not null default false,
  changes_note text check (char_length(changes_note) <= 2000),
  release_tx_id uuid references private.ledger_transfers (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  accepted_at timestamptz,
  completed_at timestamptz,
  released_at timestamptz,
  unique (escrow_id, milestone_index)
);
create index milestones_created_by_idx on public.milestones (created_by);
create index milestones_release_tx_idx on public.milestones (release_tx_id) where release_tx_id is not null;
alter table public.milestones enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Row-level security: parties read their escrows; everything is written by SQL functions
-- ---------------------------------------------------------------------------------------------

revoke all on public.escrows, public.conversations, public.notifications, public.milestones from anon, authenticated;
grant select on public.escrows, public.conversations, public.notifications, public.milestones to authenticated;
grant select, insert, update, delete on public.escrows, public.conversations, public.notifications, public.milestones to service_role;

create policy "Parties can read their escrows"
  on public.escrows for select to authenticated
  using (initiator_id = (select auth.uid()) or counterparty_id = (select auth.uid()));
-- The subquery reads public.escrows under its own policy, so it finds only the caller's escrows.
create policy "Parties can read their escrows' conversations"
  on public.conversations for select to authenticated
  using (exists (select 1 from public.escrows e where e.id = escrow_id));
create policy "Users can read their own notifications"
  on public.notifications for select to authenticated
  using (user_id = (select auth.uid()));
-- marking read is the one change a user makes to a notification (column privilege: is_read only)
grant update (is_read) on public.notifications to authenticated;
create policy "Users can mark their own notifications read"
  on public.notifications for update to authenticated
  using (user_id = (select auth.uid()))
  with check (user_id = (select auth.uid()));
create policy "Parties can read their escrows' milestones"
  on public.milestones for select to authenticated
  using (exists (select 1 from public.escrows e where e.id = escrow_id));

create policy "Service role manages escrows" on public.escrows for all to service_role using (true) with check (true);
create policy "Service role manages conversations" on public.conversations for all to service_role using (true) with check (true);
create policy "Service role manages notifications" on public.notifications for all to service_role using (true) with check (true);
create policy "Service role manages milestones" on public.milestones for all to service_role using (true) with check (true);
create policy "Service role manages fee schedules" on private.fee_schedules for all to service_role using (true) with check (true);
create policy "Service role manages category rules" on private.category_rules for all to service_role using (true) with check (true);

-- ---------------------------------------------------------------------------------------------
-- Helpers
-- ---------------------------------------------------------------------------------------------

create function private.naira(p_kobo bigint) returns text
language sql immutable set search_path = ''
as $$ select 'NGN ' || pg_catalog.to_char(p_kobo / 100.0, 'FM999,999,999,990.00') $$;

create function private.payer_of(e public.escrows) returns uuid
language sql immutable set search_path = ''
as $$ select case when e.payer_role = 'initiator' then e.initiator_id else e.counterparty_id end $$;

create function private.payee_of(e public.escrows) returns uuid
language sql immutable set search_path = ''
as $$ select case when e.payer_role = 'initiator' then e.counterparty_id else e.initiator_id end $$;

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

create function private.refuse_role(p_message text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  raise exception '%', p_message using errcode = 'ES403';
end
$$;

-- A user-facing transaction for an escrow movement (already settled unless p_status says otherwise).
create function private.escrow_transaction(
  p_user uuid, p_escrow uuid, p_milestone uuid, p_type text, p_description text, p_amount bigint,
  p_direction public.transaction_direction, p_provider text, p_status public.transaction_status, p_metadata jsonb
) returns uuid
language sql
set search_path = ''
as $$
  insert into public.transactions (user_id, type, category, description, amount, direction, status, escrow_id,
                                   milestone_id, provider, metadata, completed_at)
  values (p_user, p_type, 'escrow', p_description, p_amount, p_direction, p_status, p_escrow, p_milestone, p_provider,
          coalesce(p_metadata, '{}'::jsonb), case when p_status = 'pending' then null else now() end)
  returning id;
$$;

-- ---------------------------------------------------------------------------------------------
-- escrow-create
-- ---------------------------------------------------------------------------------------------

create function private.escrow_create(
  p_initiator uuid, p_category public.escrow_category, p_payer_role text, p_title text, p_description text,
  p_counterparty_phone text, p_amount bigint, p_payer_fee bigint, p_vat bigint, p_seller_fee bigint,
  p_invite_token_hash text
) returns table (escrow_id uuid, conversation_id uuid)
language plpgsql
set search_path = ''
as $$
declare
  r private.category_rules;
  v_escrow uuid;
  v_conversation uuid;
  v_counterparty uuid;
  v_initiator_phone text;
  v_name text;
  v_status text := case when p_payer_role = 'initiator' then 'draft' else 'invite_pending' end;
begin
  select * into r from private.category_rules where category = p_category;
  select phone into v_initiator_phone from private.users where id = p_initiator;
  if v_initiator_phone = p_counterparty_phone then
    raise exception 'the counterparty must be someone else' using errcode = 'ES422';
  end if;
  select id into v_counterparty from private.users where phone = p_counterparty_phone;
  select first_name || ' ' || last_name into v_name from public.profiles where id = p_initiator;

  insert into public.escrows (initiator_id, counterparty_id, counterparty_phone, category, payer_role, title, description,
                              transaction_type, release_type, amount, status, inspection_period_days,
                              payer_fee, vat, total_charge, seller_fee, seller_payout, invite_token_hash)
  values (p_initiator, v_counterparty, p_counterparty_phone, p_category, p_payer_role, p_title, coalesce(p_description, ''),
          r.transaction_type, r.release_type, p_amount, v_status, r.inspection_period_days,
          p_payer_fee, p_vat, p_amount + p_payer_fee + p_vat, p_seller_fee, p_amount - p_seller_fee, p_invite_token_hash)
  returning id into v_escrow;
  insert into public.conversations (escrow_id) values (v_escrow) returning id into v_conversation;

  perform private.notify(p_initiator, v_escrow, 'escrow_created',
    pg_catalog.format('You created "%s" for %s.', p_title, private.naira(p_amount)), 'escrow', v_escrow, 'View escrow');
  if v_status = 'invite_pending' then
    -- the counterparty pays: invite them at once
    perform private.notify(v_counterparty, v_escrow, 'invite_received',
      pg_catalog.format('%s invited you to "%s" for %s as %s.', v_name, p_title, private.naira(p_amount), r.payer_label),
      'escrow', v_escrow, 'Review invitation');
    perform private.queue_sms(p_counterparty_phone,
      pg_catalog.format('%s invited you to an escrow "%s" for %s. Open the Escrow app with this number to review it.',
                        v_name, p_title, private.naira(p_amount)));
  end if;
  return query select v_escrow, v_conversation;
end
$$;

-- A counterparty who signs up later with the invited phone is linked to the escrows waiting for it.
create function private.link_invited_escrows()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  update public.escrows set counterparty_id = new.id, updated_at = now()
   where counterparty_phone = new.phone and counterparty_id is null and initiator_id <> new.id;
  return new;
end
$$;
create trigger users_link_invited_escrows after insert on private.users
  for each row execute function private.link_invited_escrows();

-- ---------------------------------------------------------------------------------------------
-- Funding
-- ---------------------------------------------------------------------------------------------

-- Locks the escrow's funds (the hold now has total_charge) and moves the state on: draft -> active
-- (funded, the counterparty is invited), or active and accepted -> funded. p_tx is the escrow's
-- funding transaction, marked succeeded. Called by every way of paying.
create function private.escrow_mark_funded(e public.escrows, p_tx uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  v_next text := case when e.status = 'draft' then 'active' else 'funded' end;
  v_payer uuid := private.payer_of(e);
  v_name text;
begin
  update public.transactions set status = 'succeeded', completed_at = now() where id = p_tx and status = 'pending';
  -- a payment request that another way of paying overtook is withdrawn
  update public.transactions set status = 'canceled', completed_at = now()
   where escrow_id = e.id and user_id = v_payer and type = 'escrow_funding' and status = 'pending' and id <> p_tx;
  update public.escrows set status = v_next, funded_at = now(), awaiting_bank_transfer_at = null, updated_at = now()
   where id = e.id;
  perform private.notify(v_payer, e.id, 'funded',
    pg_catalog.format('%s is locked in escrow for "%s".', private.naira(e.total_charge), e.title), 'escrow', e.id, 'View escrow');
  if v_next = 'active' then
    select first_name || ' ' || last_name into v_name from public.profiles where id = e.initiator_id;
    perform private.notify(e.counterparty_id, e.id, 'invite_received',
      pg_catalog.format('%s invited you to "%s" for %s; the money is already in escrow.', v_name, e.title, private.naira(e.amount)),
      'escrow', e.id, 'Review invitation');
    perform private.queue_sms(e.counterparty_phone,
      pg_catalog.format('%s invited you to an escrow "%s" for %s, and the money is already in escrow. Open the Escrow app with this number to accept.',
                        v_name, e.title, private.naira(e.amount)));
  else
    perform private.notify(private.payee_of(e), e.id, 'funded',
      pg_catalog.format('"%s" is funded: %s is in escrow. You can deliver now.', e.title, private.naira(e.amount)),
      'escrow', e.id, 'View escrow');
  end if;
  return v_next;
end
$$;

create function private.escrow_fundable(e public.escrows, p_actor uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  if p_actor is distinct from private.payer_of(e) then
    perform private.refuse_role('only the payer can fund this escrow');
  end if;
  if not (e.status = 'draft' or (e.status = 'active' and e.funded_at is null)) then
    perform private.refuse_state(e, 'fund');
  end if;
end
$$;

-- escrow-fund from the wallet: the payer's wallet -> the escrow's hold, in one transfer.
create function private.escrow_fund_wallet(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_tx uuid;
begin
  perform private.escrow_fundable(e, p_actor);
  -- an accepted escrow's payment request (escrow_accept) is the funding it asked for: paying it
  -- marks that transaction succeeded, rather than cancelling it and recording a second one
  select id into v_tx from public.transactions
   where escrow_id = e.id and user_id = p_actor and type = 'escrow_funding' and status = 'pending'
     and metadata ? 'payment_request' and not metadata ? 'kind'
   order by created_at limit 1;
  if v_tx is null then
    v_tx := private.escrow_transaction(p_actor, e.id, null, 'escrow_funding',
              pg_catalog.format('Escrow funding: %s', e.title), e.total_charge, 'out', 'wallet', 'pending',
              pg_catalog.jsonb_build_object('method', 'wallet', 'amount', e.amount, 'payer_fee', e.payer_fee, 'vat', e.vat));
  else
    update public.transactions set provider = 'wallet', metadata = metadata || pg_catalog.jsonb_build_object('method', 'wallet')
     where id = v_tx;
  end if;
  perform private.post_transfer('escrow-fund:' || e.id, 'escrow_funding',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', p_actor), 'amount', -e.total_charge),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', e.total_charge)),
    v_tx);
  return private.escrow_mark_funded(e, v_tx);
end
$$;

-- escrow-fund by card: a pending funding transaction whose id is the charge reference.
create function private.escrow_charge_create(p_escrow uuid, p_actor uuid, p_provider text, p_method text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_tx uuid;
begin
  perform private.escrow_fundable(e, p_actor);
  -- the payment request of an accepted escrow, not yet used as a charge reference, becomes this
  -- charge's reference (a reference is used once: a later attempt gets a transaction of its own)
  select id into v_tx from public.transactions
   where escrow_id = e.id and user_id = p_actor and type = 'escrow_funding' and status = 'pending'
     and metadata ? 'payment_request' and not metadata ? 'kind'
   order by created_at limit 1;
  if v_tx is not null then
    update public.transactions
       set provider = p_provider, metadata = metadata || pg_catalog.jsonb_build_object('method', p_method, 'kind', 'escrow_charge')
     where id = v_tx;
    return v_tx;
  end if;
  return private.escrow_transaction(p_actor, e.id, null, 'escrow_funding',
           pg_catalog.format('Escrow funding: %s', e.title), e.total_charge, 'out', p_provider, 'pending',
           pg_catalog.jsonb_build_object('method', p_method, 'kind', 'escrow_charge', 'amount', e.amount,
                                         'payer_fee', e.payer_fee, 'vat', e.vat));
end
$$;

-- A card charge for an escrow that did not happen (declined, refused, abandoned): the pending
-- funding transaction is marked failed; nothing moved.
create function private.escrow_charge_fail(p_tx uuid, p_reason text)
returns text
language plpgsql
set search_path = ''
as $$
begin
  update public.transactions
     set status = 'failed', completed_at = now(), metadata = metadata || pg_catalog.jsonb_build_object('failure_reason', p_reason)
   where id = p_tx and type = 'escrow_funding' and status = 'pending';
  return case when found then 'failed' else 'already_done' end;
end
$$;

-- charge.success of kind escrow_charge. The money that arrived goes into the hold when it is
-- exactly the total and the escrow can still be funded; otherwise it is credited to the payer's
-- wallet (flagged when the amount differs), so nothing is lost and nothing is guessed.
create function private.escrow_charge_succeed(p_tx uuid, p_received bigint, p_charge_id text, p_payload jsonb)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions;
  e public.escrows;
  v_escrow uuid;
begin
  -- the escrow first, then its transaction: the lock order of every escrow operation (they lock
  -- the escrow, then change its transactions), so a charge racing a cancel cannot deadlock
  select escrow_id into v_escrow from public.transactions where id = p_tx and type = 'escrow_funding';
  if not found then
    return 'not_found';
  end if;
  e := private.escrow_lock(v_escrow, null);
  select * into t from public.transactions where id = p_tx for update;
  if t.status = 'succeeded' or t.metadata ? 'credited_to_wallet' then
    return 'already_done';
  end if;
  update public.transactions set provider_charge_id = p_charge_id where id = t.id;
  if p_received = e.total_charge and t.status = 'pending'
     and (e.status = 'draft' or (e.status = 'active' and e.funded_at is null)) then
    perform private.post_transfer('escrow-fund:' || e.id, 'escrow_funding',
      pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('system', 'provider_clearing', 'amount', -p_received),
        pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', p_received)),
      t.id);
    return 'escrow:' || private.escrow_mark_funded(e, t.id);
  end if;
  -- Not usable for this escrow: the money is the payer's, in the wallet.
  if p_received <> e.total_charge then
    insert into private.payment_flags (reason, transaction_id, provider_reference, expected_amount, received_amount, payload)
    values ('amount_mismatch', t.id, t.id::text, e.total_charge, p_received, p_payload);
  end if;
  update public.transactions
     set status = 'failed', completed_at = now(),
         metadata = metadata || pg_catalog.jsonb_build_object('failure_reason',
           case when p_received <> e.total_charge then 'amount_mismatch' else 'escrow no longer fundable' end,
           'received_amount', p_received, 'credited_to_wallet', true)
   where id = t.id;
  perform private.virtual_account_deposit(t.user_id, p_received, t.provider, 'escrow-charge:' || coalesce(p_charge_id, t.id::text),
    pg_catalog.jsonb_build_object('escrow_id', e.id, 'reason', 'escrow charge not applied'));
  return 'credited_to_wallet';
end
$$;

-- escrow-fund by bank transfer: the escrow waits for money in the payer's virtual account.
create function private.escrow_await_bank_transfer(p_escrow uuid, p_actor uuid)
returns void
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  perform private.escrow_fundable(e, p_actor);
  update public.escrows set awaiting_bank_transfer_at = now(), updated_at = now() where id = e.id;
end
$$;

-- A bank transfer of p_received kobo into p_user's virtual account: the wallet is credited (once
-- per provider charge id), and the oldest escrow waiting for a bank transfer from that payer is
-- funded from the wallet when the wallet now covers it; otherwise the payer is told the shortfall
-- by SMS and notification and the escrow stays as it is. The waiting escrow is locked before the
-- wallet is touched, the order every escrow operation follows, so this cannot deadlock with a
-- payer funding the same escrow at the same moment.
create function private.bank_transfer_received(
  p_user uuid, p_received bigint, p_provider text, p_charge_id text, p_metadata jsonb
) returns text
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
  e public.escrows;
  v_balance bigint;
  v_phone text;
begin
  if exists (select 1 from public.transactions
              where provider_charge_id = p_charge_id and type = 'virtual_account_deposit' and user_id = p_user) then
    return 'already_done';
  end if;
  select id into v_id from public.escrows
   where awaiting_bank_transfer_at is not null
     and (status = 'draft' or (status = 'active' and funded_at is null))
     and p_user = case when payer_role = 'initiator' then initiator_id else counterparty_id end
   order by awaiting_bank_transfer_at, id limit 1
   for update;
  perform private.virtual_account_deposit(p_user, p_received, p_provider, p_charge_id, p_metadata);
  if v_id is null then
    return 'deposit';
  end if;
  select * into e from public.escrows where id = v_id;
  select balance into v_balance from private.ledger_accounts where kind = 'user_wallet' and owner_id = p_user;
  if coalesce(v_balance, 0) >= e.total_charge then
    return 'deposit:escrow:' || private.escrow_fund_wallet(e.id, p_user);
  end if;
  select phone into v_phone from private.users where id = p_user;
  perform private.queue_sms(v_phone, pg_catalog.format(
    'We received %s for the escrow "%s" and put it in your Escrow wallet. The escrow needs %s: send %s more to fund it.',
    private.naira(p_received), e.title, private.naira(e.total_charge), private.naira(e.total_charge - coalesce(v_balance, 0))));
  perform private.notify(p_user, e.id, 'funding_shortfall', pg_catalog.format(
    'We received %s; "%s" needs %s more to be funded. The money is in your wallet.',
    private.naira(p_received), e.title, private.naira(e.total_charge - coalesce(v_balance, 0))), 'escrow', e.id, 'Fund escrow');
  return 'deposit:shortfall';
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Accept, decline, cancel, delete
-- ---------------------------------------------------------------------------------------------

create function private.escrow_accept(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_name text;
  v_tx uuid;
begin
  if p_actor is distinct from e.counterparty_id then
    perform private.refuse_role('only the invited counterparty can accept this escrow');
  end if;
  select first_name || ' ' || last_name into v_name from public.profiles where id = p_actor;
  if e.status = 'invite_pending' then
    -- the counterparty is the payer: accepted, now waiting for their money
    update public.escrows set status = 'active', accepted_at = now(), updated_at = now() where id = e.id;
    perform private.notify(e.initiator_id, e.id, 'active',
      pg_catalog.format('%s accepted "%s". The escrow is active.', v_name, e.title), 'escrow', e.id, 'View escrow');
    v_tx := private.escrow_transaction(p_actor, e.id, null, 'escrow_funding',
              pg_catalog.format('Payment request: %s', e.title), e.total_charge, 'out', 'wallet', 'pending',
              pg_catalog.jsonb_build_object('payment_request', true, 'amount', e.amount, 'payer_fee', e.payer_fee, 'vat', e.vat));
    perform private.notify(p_actor, e.id, 'payment_requested',
      pg_catalog.format('Fund "%s": %s (the escrow amount, fee and VAT).', e.title, private.naira(e.total_charge)),
      'transaction', v_tx, 'Fund escrow');
    return 'active';
  elsif e.status = 'active' and e.funded_at is not null and e.accepted_at is null then
    update public.escrows set status = 'funded', accepted_at = now(), updated_at = now() where id = e.id;
    perform private.notify(e.initiator_id, e.id, 'active',
      pg_catalog.format('%s accepted "%s". The money is in escrow and the deal is on.', v_name, e.title), 'escrow', e.id, 'View escrow');
    return 'funded';
  end if;
  perform private.refuse_state(e, 'accept');
  return null;
end
$$;

-- Returns the hold (whatever is left in it) to the payer's wallet and records it.
create function private.escrow_return_hold(e public.escrows, p_description text)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  v_hold bigint;
  v_payer uuid := private.payer_of(e);
  v_tx uuid;
begin
  select balance into v_hold from private.ledger_accounts where kind = 'escrow_hold' and owner_id = e.id for update;
  if coalesce(v_hold, 0) = 0 then
    return 0;
  end if;
  v_tx := private.escrow_transaction(v_payer, e.id, null, 'escrow_refund', p_description, v_hold, 'in', 'wallet', 'succeeded', '{}'::jsonb);
  perform private.post_transfer('escrow-refund:' || e.id, 'escrow_refund',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', -v_hold),
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', v_payer), 'amount', v_hold)),
    v_tx);
  return v_hold;
end
$$;

create function private.escrow_close_unfunded(e public.escrows, p_event text, p_verb text)
returns text
language plpgsql
set search_path = ''
as $$
begin
  update public.escrows set status = 'cancelled', cancelled_at = now(), awaiting_bank_transfer_at = null, updated_at = now()
   where id = e.id;
  perform private.close_milestones(e.id, null);
  update public.transactions set status = 'canceled', completed_at = now()
   where escrow_id = e.id and type = 'escrow_funding' and status = 'pending';
  perform private.notify(u, e.id, p_event, pg_catalog.format('"%s" was %s.', e.title, p_verb), 'escrow', e.id, 'View escrow')
     from unnest(array[e.initiator_id, e.counterparty_id]) as u;
  return 'cancelled';
end
$$;

-- A funded escrow that was never accepted, declined or cancelled (p_verb): the hold goes back to
-- the payer's wallet and the escrow is refunded.
create function private.escrow_refund_unaccepted(e public.escrows, p_verb text)
returns text
language plpgsql
set search_path = ''
as $$
begin
  perform private.escrow_return_hold(e, pg_catalog.format('Refund: "%s" was %s', e.title, p_verb));
  update public.escrows set status = 'refunded', refunded_at = now(), updated_at = now() where id = e.id;
  perform private.close_milestones(e.id, null);
  perform private.notify(u, e.id, p_verb,
    pg_catalog.format('"%s" was %s; %s went back to the payer''s wallet.', e.title, p_verb, private.naira(e.total_charge)),
    'escrow', e.id, 'View escrow')
     from unnest(array[e.initiator_id, e.counterparty_id]) as u;
  return 'refunded';
end
$$;

create function private.escrow_decline(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  if p_actor is distinct from e.counterparty_id then
    perform private.refuse_role('only the invited counterparty can decline this escrow');
  end if;
  if e.status in ('draft', 'invite_pending') or (e.status = 'active' and e.funded_at is null) then
    return private.escrow_close_unfunded(e, 'declined', 'declined by the counterparty');
  elsif e.status = 'active' and e.funded_at is not null and e.accepted_at is null then
    return private.escrow_refund_unaccepted(e, 'declined');
  end if;
  perform private.refuse_state(e, 'decline');
  return null;
end
$$;

create function private.escrow_cancel(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  if e.status in ('draft', 'invite_pending') or (e.status = 'active' and e.funded_at is null) then
    return private.escrow_close_unfunded(e, 'cancelled', 'cancelled');
  elsif e.status = 'active' and e.funded_at is not null and e.accepted_at is null then
    -- funded, never accepted: the payer may take the money back
    if p_actor is distinct from private.payer_of(e) then
      perform private.refuse_role('only the payer can cancel a funded escrow before it is accepted');
    end if;
    return private.escrow_refund_unaccepted(e, 'cancelled');
  end if;
  perform private.refuse_state(e, 'cancel');
  return null;
end
$$;

create function private.escrow_delete(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
begin
  if p_actor is distinct from e.initiator_id then
    perform private.refuse_role('only the initiator can delete this escrow');
  end if;
  if e.status <> 'draft' then
    perform private.refuse_state(e, 'delete');
  end if;
  update public.escrows set status = 'deleted', awaiting_bank_transfer_at = null, updated_at = now() where id = e.id;
  perform private.close_milestones(e.id, null);
  update public.transactions set status = 'canceled', completed_at = now()
   where escrow_id = e.id and type = 'escrow_funding' and status = 'pending';
  return 'deleted';
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Deliver, release, refund
-- ---------------------------------------------------------------------------------------------

create function private.escrow_deliver(p_escrow uuid, p_actor uuid, p_now timestamptz)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  r private.category_rules;
begin
  if p_actor is distinct from private.payee_of(e) then
    perform private.refuse_role('only the payee can mark this escrow delivered');
  end if;
  if e.status <> 'funded' or e.delivered_at is not null then
    perform private.refuse_state(e, 'deliver');
  end if;
  select * into r from private.category_rules where category = e.category;
  if r.inspection_on_delivery then
    update public.escrows
       set status = 'inspection', delivered_at = p_now, updated_at = now(),
           inspection_ends_at = p_now + pg_catalog.make_interval(days => e.inspection_period_days)
     where id = e.id;
    perform private.notify(private.payer_of(e), e.id, 'delivered',
      pg_catalog.format('"%s" was delivered. Inspect it: the money is released automatically after %s day(s) unless you raise a dispute.',
                        e.title, e.inspection_period_days), 'escrow', e.id, 'Inspect delivery');
    return 'inspection';
  end if;
  update public.escrows set delivered_at = p_now, updated_at = now() where id = e.id;
  perform private.notify(private.payer_of(e), e.id, 'delivered',
    pg_catalog.format('"%s" was marked delivered. Release the money when you are satisfied.', e.title),
    'escrow', e.id, 'Release funds');
  return 'funded';
end
$$;

-- Pays p_amount of the escrow amount out of the hold: the payee's share to their wallet, the fee
-- and VAT shares to the system accounts. Shares are cumulative, so the last release takes every
-- remainder and the hold ends at exactly zero. Returns the ledger transfer id.
create function private.escrow_pay_out(e public.escrows, p_amount bigint, p_key text, p_milestone uuid, p_description text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_before bigint := e.released_amount;
  v_after bigint := e.released_amount + p_amount;
  v_payee uuid := private.payee_of(e);
  v_seller_fee bigint := (e.seller_fee * v_after) / e.amount - (e.seller_fee * v_before) / e.amount;
  v_payer_fee bigint := (e.payer_fee * v_after) / e.amount - (e.payer_fee * v_before) / e.amount;
  v_vat bigint := (e.vat * v_after) / e.amount - (e.vat * v_before) / e.amount;
  v_payee_gets bigint := p_amount - v_seller_fee;
  v_tx uuid;
  v_transfer uuid;
  v_entries jsonb;
begin
  if p_amount <= 0 or v_after > e.amount then
    raise exception 'release of % kobo exceeds what is left in escrow', p_amount using errcode = 'ES409';
  end if;
  v_tx := private.escrow_transaction(v_payee, e.id, p_milestone, 'escrow_release', p_description, v_payee_gets, 'in', 'wallet', 'succeeded',
            pg_catalog.jsonb_build_object('released_amount', p_amount, 'seller_fee', v_seller_fee, 'payer_fee', v_payer_fee, 'vat', v_vat));
  v_entries := pg_catalog.jsonb_build_array(
    pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', -(p_amount + v_payer_fee + v_vat)),
    pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', v_payee), 'amount', v_payee_gets));
  if v_seller_fee + v_payer_fee > 0 then
    v_entries := v_entries || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('system', 'platform_fees', 'amount', v_seller_fee + v_payer_fee));
  end if;
  if v_vat > 0 then
    v_entries := v_entries || pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('system', 'vat_payable', 'amount', v_vat));
  end if;
  v_transfer := private.post_transfer(p_key, 'escrow_release', v_entries, v_tx);
  update public.escrows set released_amount = v_after, updated_at = now() where id = e.id;
  return v_transfer;
end
$$;

-- The payments provider the functions are configured with (PAYMENTS_PROVIDER), which shared/db.ts
-- sets on every transaction as escrow.payments_provider; 'sandbox', the configuration's default,
-- when SQL runs outside the functions (the payout module then records the provider it sends
-- the payout through).
create function private.payments_provider()
returns text
language sql
stable
set search_path = ''
as $$
  select coalesce(nullif(pg_catalog.current_setting('escrow.payments_provider', true), ''), 'sandbox');
$$;

-- Starts the payee's payout when they have a default payout account: their wallet -> clearing,
-- and a pending escrow_payout transaction, with the configured provider, whose id is the transfer
-- reference (shared/payouts.ts sends it after commit; the job retries payouts never started).
create function private.escrow_start_payout(e public.escrows, p_amount bigint, p_milestone uuid default null)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_payee uuid := private.payee_of(e);
  pa public.payout_accounts;
  v_tx uuid;
begin
  select * into pa from public.payout_accounts where user_id = v_payee and is_default;
  if not found or p_amount <= 0 then
    return null;
  end if;
  v_tx := private.escrow_transaction(v_payee, e.id, p_milestone, 'escrow_payout',
            pg_catalog.format('Payout of "%s" to %s %s', e.title, pa.bank_name, pg_catalog.right(pa.account_number, 4)),
            p_amount, 'out', private.payments_provider(), 'pending',
            pg_catalog.jsonb_build_object('payout_account_id', pa.id, 'bank_name', pa.bank_name,
                                          'account_last4', pg_catalog.right(pa.account_number, 4)));
  perform private.post_transfer('escrow-payout:' || v_tx, 'escrow_payout',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', v_payee), 'amount', -p_amount),
      pg_catalog.jsonb_build_object('system', 'provider_clearing', 'amount', p_amount)),
    v_tx);
  return v_tx;
end
$$;

-- When an escrow closes, its milestones close with it: on a release, those agreed (accepted or
-- completed) were paid by the release transfer p_release_transfer; everything else not released
-- (proposed milestones; all of them on a refund or cancellation) is cancelled.
create function private.close_milestones(p_escrow uuid, p_release_transfer uuid)
returns void
language sql
set search_path = ''
as $$
  update public.milestones
     set status = case when p_release_transfer is not null and status in ('accepted', 'completed') then 'released' else 'cancelled' end,
         release_tx_id = case when p_release_transfer is not null and status in ('accepted', 'completed') then p_release_transfer end,
         released_at = case when p_release_transfer is not null and status in ('accepted', 'completed') then now() end,
         updated_at = now()
   where escrow_id = p_escrow and status in ('proposed', 'accepted', 'completed');
$$;

-- escrow-release (the payer approves), or the job when an inspection period ends (p_actor null).
-- Returns the escrow_payout transaction to start, if any.
create function private.escrow_release(p_escrow uuid, p_actor uuid, p_now timestamptz)
returns table (status text, payout_tx uuid)
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  r private.category_rules;
  v_remaining bigint;
  v_payout bigint;
  v_payout_tx uuid;
  v_transfer uuid;
begin
  if p_actor is not null and p_actor is distinct from private.payer_of(e) then
    perform private.refuse_role('only the payer can release this escrow');
  end if;
  if e.status not in ('funded', 'inspection') then
    perform private.refuse_state(e, 'release');
  end if;
  select * into r from private.category_rules where category = e.category;
  if p_actor is not null and r.release_needs_delivery and e.delivered_at is null then
    raise exception 'release follows delivery for %: the % has not marked it delivered', e.category, r.payee_label
      using errcode = 'ES409';
  end if;
  if p_actor is null and not (e.status = 'inspection' and e.inspection_ends_at <= p_now) then
    perform private.refuse_state(e, 'auto-release');
  end if;
  v_remaining := e.amount - e.released_amount;
  if v_remaining > 0 then
    v_transfer := private.escrow_pay_out(e, v_remaining, 'escrow-release:' || e.id, null,
      pg_catalog.format('Released: %s', e.title));
  end if;
  update public.escrows set status = 'released', released_at = p_now, updated_at = now() where id = e.id;
  perform private.close_milestones(e.id, v_transfer);
  -- what the payee was just credited: the rest of the amount less the rest of the seller fee
  v_payout := v_remaining - (e.seller_fee - (e.seller_fee * e.released_amount) / e.amount);
  v_payout_tx := private.escrow_start_payout(e, v_payout);
  perform private.notify(private.payee_of(e), e.id, 'released',
    pg_catalog.format('%s from "%s" was released to you%s.', private.naira(v_payout), e.title,
                      case when v_payout_tx is null then ' and is in your wallet' else ' and is on its way to your bank' end),
    'escrow', e.id, 'View escrow');
  perform private.notify(private.payer_of(e), e.id, 'released',
    pg_catalog.format('"%s" was released%s.', e.title, case when p_actor is null then ' automatically at the end of the inspection period' else '' end),
    'escrow', e.id, 'Leave a review');
  return query select 'released'::text, v_payout_tx;
end
$$;

-- escrow-refund: the payee gives the money back.
create function private.escrow_refund(p_escrow uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_amount bigint;
begin
  if p_actor is distinct from private.payee_of(e) then
    perform private.refuse_role('only the payee can refund this escrow');
  end if;
  if e.status not in ('funded', 'inspection') then
    perform private.refuse_state(e, 'refund');
  end if;
  v_amount := private.escrow_return_hold(e, pg_catalog.format('Refund: %s', e.title));
  update public.escrows set status = 'refunded', refunded_at = now(), updated_at = now() where id = e.id;
  perform private.close_milestones(e.id, null);
  perform private.notify(u, e.id, 'refunded',
    pg_catalog.format('"%s" was refunded: %s went back to the payer''s wallet.', e.title, private.naira(v_amount)),
    'escrow', e.id, 'View escrow')
     from unnest(array[e.initiator_id, e.counterparty_id]) as u;
  return 'refunded';
end
$$;

-- transfer.success for an escrow payout: the payee is told; the escrow is released already.
create function private.escrow_payout_settled(p_tx uuid, p_succeeded boolean)
returns void
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions;
begin
  select * into t from public.transactions where id = p_tx and type = 'escrow_payout';
  if not found or t.escrow_id is null then
    return;
  end if;
  perform private.notify(t.user_id, t.escrow_id, case when p_succeeded then 'payout_succeeded' else 'payout_failed' end,
    case when p_succeeded then pg_catalog.format('%s reached your bank account.', private.naira(t.amount))
         else pg_catalog.format('The payout of %s could not be completed; the money is back in your wallet.', private.naira(t.amount)) end,
    'transaction', t.id, 'View transaction');
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Milestones
-- ---------------------------------------------------------------------------------------------

create function private.milestone_lock(p_milestone uuid, p_actor uuid)
returns table (m public.milestones, e public.escrows)
language plpgsql
set search_path = ''
as $$
declare
  v_escrow uuid;
begin
  select escrow_id into v_escrow from public.milestones where id = p_milestone;
  if v_escrow is null then
    raise exception 'milestone not found' using errcode = 'ES404';
  end if;
  -- escrow first, then the milestone: the same lock order as every escrow operation
  e := private.escrow_lock(v_escrow, p_actor);
  select * into m from public.milestones where id = p_milestone for update;
  return next;
end
$$;

create function private.milestones_fit(e public.escrows, p_extra bigint, p_except uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  if (select coalesce(sum(amount), 0) from public.milestones
       where escrow_id = e.id and status <> 'cancelled' and id is distinct from p_except) + p_extra > e.amount then
    raise exception 'milestones would add up to more than the escrow amount (%)', private.naira(e.amount)
      using errcode = 'ES409';
  end if;
end
$$;

create function private.milestone_create(
  p_escrow uuid, p_actor uuid, p_title text, p_description text, p_amount bigint, p_due date
) returns uuid
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  v_id uuid;
  v_other uuid;
begin
  if e.category <> 'hiring' then
    raise exception 'milestones are for hiring escrows' using errcode = 'ES409';
  end if;
  if e.status not in ('draft', 'invite_pending', 'active', 'funded') then
    perform private.refuse_state(e, 'add milestones to');
  end if;
  perform private.milestones_fit(e, p_amount, null);
  insert into public.milestones (escrow_id, created_by, milestone_index, title, description, amount, due_date,
                                 initiator_approved, counterparty_approved)
  values (e.id, p_actor,
          (select coalesce(max(milestone_index), 0) + 1 from public.milestones where escrow_id = e.id),
          p_title, p_description, p_amount, p_due,
          -- an invited counterparty who has not signed up yet (counterparty_id null) has not approved
          p_actor is not distinct from e.initiator_id, p_actor is not distinct from e.counterparty_id)
  returning id into v_id;
  v_other := case when p_actor = e.initiator_id then e.counterparty_id else e.initiator_id end;
  perform private.notify(v_other, e.id, 'milestone_proposed',
    pg_catalog.format('A milestone "%s" (%s) was proposed for "%s".', p_title, private.naira(p_amount), e.title),
    'milestone', v_id, 'Review milestone');
  return v_id;
end
$$;

-- Edits a proposed milestone. The editor's approval stands; the other party must approve again.
create function private.milestone_update(p_milestone uuid, p_actor uuid, p_changes jsonb)
returns void
language plpgsql
set search_path = ''
as $$
declare
  l record;
  v_amount bigint;
  v_title text;
begin
  select * into l from private.milestone_lock(p_milestone, p_actor);
  if (l.e).status not in ('draft', 'invite_pending', 'active', 'funded') then
    perform private.refuse_state(l.e, 'change the milestones of');
  end if;
  if (l.m).status <> 'proposed' then
    raise exception 'only a proposed milestone can be edited (this one is %)', (l.m).status using errcode = 'ES409';
  end if;
  v_amount := coalesce((p_changes ->> 'amount')::bigint, (l.m).amount);
  perform private.milestones_fit(l.e, v_amount, (l.m).id);
  update public.milestones set
    title = case when p_changes ? 'title' then p_changes ->> 'title' else title end,
    description = case when p_changes ? 'description' then p_changes ->> 'description' else description end,
    amount = v_amount,
    due_date = case when p_changes ? 'due_date' then (p_changes ->> 'due_date')::date else due_date end,
    changes_note = case when p_changes ? 'changes_note' then p_changes ->> 'changes_note' else changes_note end,
    initiator_approved = (p_actor is not distinct from (l.e).initiator_id),
    counterparty_approved = (p_actor is not distinct from (l.e).counterparty_id),
    updated_at = now()
  where id = (l.m).id
  returning title into v_title;
  -- the other party's approval was taken back: they are asked to review the new terms
  perform private.notify(case when p_actor = (l.e).initiator_id then (l.e).counterparty_id else (l.e).initiator_id end,
    (l.e).id, 'milestone_updated',
    pg_catalog.format('Milestone "%s" of "%s" was changed. Review and approve the new terms.', v_title, (l.e).title),
    'milestone', (l.m).id, 'Review milestone');
end
$$;

create function private.milestone_approve(p_milestone uuid, p_actor uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  l record;
  v_status text;
begin
  select * into l from private.milestone_lock(p_milestone, p_actor);
  if (l.e).status not in ('draft', 'invite_pending', 'active', 'funded') then
    perform private.refuse_state(l.e, 'change the milestones of');
  end if;
  if (l.m).status <> 'proposed' then
    raise exception 'only a proposed milestone can be approved (this one is %)', (l.m).status using errcode = 'ES409';
  end if;
  update public.milestones set
    initiator_approved = initiator_approved or p_actor is not distinct from (l.e).initiator_id,
    counterparty_approved = counterparty_approved or p_actor is not distinct from (l.e).counterparty_id,
    updated_at = now()
  where id = (l.m).id
  returning case when initiator_approved and counterparty_approved then 'accepted' else 'proposed' end into v_status;
  if v_status = 'accepted' then
    update public.milestones set status = 'accepted', accepted_at = now() where id = (l.m).id;
    perform private.notify(u, (l.e).id, 'milestone_accepted',
      pg_catalog.format('Milestone "%s" was agreed by both parties.', (l.m).title), 'milestone', (l.m).id, 'View milestone')
       from unnest(array[(l.e).initiator_id, (l.e).counterparty_id]) as u;
  end if;
  return v_status;
end
$$;

create function private.milestone_complete(p_milestone uuid, p_actor uuid)
returns void
language plpgsql
set search_path = ''
as $$
declare
  l record;
begin
  select * into l from private.milestone_lock(p_milestone, p_actor);
  if p_actor is distinct from private.payee_of(l.e) then
    perform private.refuse_role('only the freelancer can mark a milestone complete');
  end if;
  if (l.e).status not in ('draft', 'invite_pending', 'active', 'funded') then
    perform private.refuse_state(l.e, 'complete a milestone of');
  end if;
  if (l.m).status <> 'accepted' then
    raise exception 'only an accepted milestone can be completed (this one is %)', (l.m).status using errcode = 'ES409';
  end if;
  update public.milestones set status = 'completed', completed_at = now(), updated_at = now() where id = (l.m).id;
  perform private.notify(private.payer_of(l.e), (l.e).id, 'milestone_completed',
    pg_catalog.format('Milestone "%s" was marked complete. Release %s when satisfied.', (l.m).title, private.naira((l.m).amount)),
    'milestone', (l.m).id, 'Release milestone');
end
$$;

-- Releases a completed milestone's amount out of a funded escrow. When the released milestones
-- reach the escrow amount the escrow itself is released. Returns the payout transaction, if any.
create function private.milestone_release(p_milestone uuid, p_actor uuid)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  l record;
  v_transfer uuid;
  v_payout uuid;
begin
  select * into l from private.milestone_lock(p_milestone, p_actor);
  if p_actor is distinct from private.payer_of(l.e) then
    perform private.refuse_role('only the client can release a milestone');
  end if;
  if (l.m).status <> 'completed' then
    raise exception 'only a completed milestone can be released (this one is %)', (l.m).status using errcode = 'ES409';
  end if;
  if (l.e).status not in ('funded', 'inspection') then
    perform private.refuse_state(l.e, 'release a milestone of');
  end if;
  v_transfer := private.escrow_pay_out(l.e, (l.m).amount, 'milestone-release:' || (l.m).id, (l.m).id,
    pg_catalog.format('Milestone released: %s', (l.m).title));
  update public.milestones set status = 'released', released_at = now(), release_tx_id = v_transfer, updated_at = now()
   where id = (l.m).id;
  v_payout := private.escrow_start_payout(l.e, (l.m).amount - (
    ((l.e).seller_fee * ((l.e).released_amount + (l.m).amount)) / (l.e).amount - ((l.e).seller_fee * (l.e).released_amount) / (l.e).amount),
    (l.m).id);
  perform private.notify(private.payee_of(l.e), (l.e).id, 'milestone_released',
    pg_catalog.format('Milestone "%s" was released to you.', (l.m).title), 'milestone', (l.m).id, 'View milestone');
  if (l.e).released_amount + (l.m).amount = (l.e).amount then
    -- the last of the money: the escrow itself is released, and both parties are told
    update public.escrows set status = 'released', released_at = now(), updated_at = now() where id = (l.e).id;
    perform private.notify(private.payee_of(l.e), (l.e).id, 'released',
      pg_catalog.format('Every milestone of "%s" was released to you: %s in all, less fees.', (l.e).title, private.naira((l.e).amount)),
      'escrow', (l.e).id, 'View escrow');
    perform private.notify(private.payer_of(l.e), (l.e).id, 'released',
      pg_catalog.format('"%s" was released: every milestone is paid.', (l.e).title), 'escrow', (l.e).id, 'Leave a review');
  end if;
  return v_payout;
end
$$;

-- ---------------------------------------------------------------------------------------------
-- The job: time-driven transitions, with "now" as an argument
-- ---------------------------------------------------------------------------------------------

create function private.run_jobs(p_now timestamptz)
returns table (job text, escrow_id uuid, payout_tx uuid)
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
  v_payout uuid;
begin
  -- inspection periods that ended without a dispute: release. Each escrow is taken under its row
  -- lock and only while still due: overlapping runs share the work instead of one of them failing
  -- on an escrow the other just released, and an escrow some operation holds right now (a refund,
  -- a dispute) is left to the next run, which sees what that operation did.
  for v_id in
    select e.id from public.escrows e where e.status = 'inspection' and e.inspection_ends_at <= p_now
     order by e.inspection_ends_at
       for update skip locked
  loop
    select r.payout_tx into v_payout from private.escrow_release(v_id, null, p_now) r;
    return query select 'inspection_release'::text, v_id, v_payout;
  end loop;
  -- released or refunded 14 days ago: ended
  for v_id in
    update public.escrows e set status = 'ended', ended_at = p_now, updated_at = now()
     where e.status in ('released', 'refunded') and coalesce(e.released_at, e.refunded_at) <= p_now - interval '14 days'
    returning e.id
  loop
    return query select 'ended'::text, v_id, null::uuid;
  end loop;
end
$$;

-- Housekeeping for the job: Idempotency-Keys live 24 hours. (Rate-limit events are pruned as they
-- are counted, in private.rate_limit_take.) Returns the number of keys removed.
create function private.cleanup_expired(p_now timestamptz)
returns integer
language sql
set search_path = ''
as $$
  with gone as (
    delete from private.idempotency_keys where created_at < p_now - interval '24 hours' returning 1
  )
  select count(*)::integer from gone;
$$;

-- ---------------------------------------------------------------------------------------------
-- Grants
-- ---------------------------------------------------------------------------------------------

grant select, insert, update, delete on private.fee_schedules, private.category_rules to service_role;
grant usage on type public.escrow_category to service_role, authenticated;

grant execute on function
  private.strictly_increasing_created_at_global(),
  private.queue_sms(text, text),
  private.notify(uuid, uuid, text, text, text, uuid, text),
  private.naira(bigint),
  private.payer_of(public.escrows),
  private.payee_of(public.escrows),
  private.escrow_lock(uuid, uuid),
  private.refuse_state(public.escrows, text),
  private.refuse_role(text),
  private.escrow_transaction(uuid, uuid, uuid, text, text, bigint, public.transaction_direction, text, public.transaction_status, jsonb),
  private.escrow_create(uuid, public.escrow_category, text, text, text, text, bigint, bigint, bigint, bigint, text),
  private.escrow_mark_funded(public.escrows, uuid),
  private.escrow_fundable(public.escrows, uuid),
  private.escrow_fund_wallet(uuid, uuid),
  private.escrow_charge_create(uuid, uuid, text, text),
  private.escrow_charge_succeed(uuid, bigint, text, jsonb),
  private.escrow_charge_fail(uuid, text),
  private.escrow_await_bank_transfer(uuid, uuid),
  private.bank_transfer_received(uuid, bigint, text, text, jsonb),
  private.escrow_accept(uuid, uuid),
  private.escrow_return_hold(public.escrows, text),
  private.escrow_close_unfunded(public.escrows, text, text),
  private.escrow_refund_unaccepted(public.escrows, text),
  private.escrow_decline(uuid, uuid),
  private.escrow_cancel(uuid, uuid),
  private.escrow_delete(uuid, uuid),
  private.escrow_deliver(uuid, uuid, timestamptz),
  private.escrow_pay_out(public.escrows, bigint, text, uuid, text),
  private.payments_provider(),
  private.escrow_start_payout(public.escrows, bigint, uuid),
  private.escrow_release(uuid, uuid, timestamptz),
  private.close_milestones(uuid, uuid),
  private.escrow_refund(uuid, uuid),
  private.escrow_payout_settled(uuid, boolean),
  private.milestone_lock(uuid, uuid),
  private.milestones_fit(public.escrows, bigint, uuid),
  private.milestone_create(uuid, uuid, text, text, bigint, date),
  private.milestone_update(uuid, uuid, jsonb),
  private.milestone_approve(uuid, uuid),
  private.milestone_complete(uuid, uuid),
  private.milestone_release(uuid, uuid),
  private.run_jobs(timestamptz),
  private.cleanup_expired(timestamptz)
  to service_role;

revoke execute on all functions in schema private from public;
revoke execute on all functions in schema public from public, anon, authenticated;
