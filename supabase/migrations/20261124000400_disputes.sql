-- =============================================================================================
-- Disputes (issue 11, DESIGN.md §8.3, docs/disputes.md): a party of a funded escrow (or one in
-- inspection) raises a dispute; the escrow becomes `disputed` and every automatic release stops.
-- The parties negotiate with proposals (release, refund, or a split of what is still held); an
-- accepted proposal settles at once. At the negotiation deadline (raised + 72 h) the job either
-- releases to the payee (only when the payer raised it and then took no part) or escalates to the
-- admin queue, where only an admin's decision moves the money. The raiser may withdraw while it
-- is negotiated: the escrow returns to the state it left, an inspection with the time it had left.
--
-- Every transition locks the escrow first (private.escrow_lock), then reads the dispute: all
-- changes of one escrow's dispute run one after the other, so a settlement happens exactly once
-- whatever races it (an acceptance, the job, an admin, a withdrawal).
--
-- Money (private.dispute_settle) is over what the hold still has: R = amount - released_amount.
-- release: as an escrow release (private.escrow_pay_out). refund: the whole hold to the payer
-- (private.escrow_return_hold). split with P (1 kobo <= P <= R - 1 kobo): the payee gets P less
-- the seller fee on P; the payer gets R - P plus the payer fee and VAT on R - P; the platform keeps
-- the fees and VAT on P and the last kobo of rounding. A fee "on X" is the stored fee times
-- X / amount, rounded half-up. The hold ends at exactly 0.
-- =============================================================================================

-- =============================================================================================
-- Notifications: the dispute event types, entity type and action labels
-- =============================================================================================

-- The lists of shared/enums.ts (NOTIFICATION_EVENT_TYPES, ENTITY_TYPES, ACTION_LABELS) widened:
-- every existing row passes, so the checks are added NOT VALID and validated afterwards.
alter table public.notifications drop constraint notifications_event_type_check;
alter table public.notifications add constraint notifications_event_type_check check (event_type in (
  'escrow_created', 'invite_received', 'funded', 'funding_shortfall', 'active', 'payment_requested', 'declined',
  'cancelled', 'delivered', 'released', 'refunded', 'payout_succeeded', 'payout_failed', 'milestone_proposed',
  'milestone_updated', 'milestone_accepted', 'milestone_completed', 'milestone_released', 'review_received',
  'dispute_raised', 'dispute_proposal', 'dispute_proposal_rejected', 'dispute_withdrawn', 'dispute_deadline_soon',
  'dispute_escalated', 'dispute_resolved'
)) not valid;
alter table public.notifications validate constraint notifications_event_type_check;

alter table public.notifications drop constraint notifications_entity_type_check;
alter table public.notifications add constraint notifications_entity_type_check
  check (entity_type in ('escrow', 'transaction', 'milestone', 'review', 'dispute')) not valid;
alter table public.notifications validate constraint notifications_entity_type_check;

alter table public.notifications drop constraint notifications_action_label_check;
alter table public.notifications add constraint notifications_action_label_check check (action_label in (
  'View escrow', 'Review invitation', 'Fund escrow', 'Inspect delivery', 'Release funds', 'Leave a review',
  'View transaction', 'Review milestone', 'View milestone', 'Release milestone', 'View dispute',
  'Respond to proposal'
)) not valid;
alter table public.notifications validate constraint notifications_action_label_check;

-- =============================================================================================
-- Disputes and proposals
-- =============================================================================================

create table public.disputes (
  id uuid primary key default gen_random_uuid(),
  escrow_id uuid not null references public.escrows (id) on delete cascade,
  -- one of the escrow's parties (checked by private.dispute_raise), whom the escrow's own foreign
  -- keys already keep: no foreign key of its own, and no index only it would need
  raised_by uuid not null,
  -- the list of shared/enums.ts (DISPUTE_REASON_CODES); the enums test compares them
  reason_code text not null check (reason_code in (
    'item_not_received', 'item_not_as_described', 'item_damaged', 'service_not_delivered', 'service_incomplete',
    'payment_not_released', 'fraud_suspected', 'other'
  )),
  reason text not null check (char_length(reason) between 10 and 2000),
  -- DISPUTE_STATUSES: negotiation -> resolved | escalated | withdrawn; escalated -> resolved
  status text not null default 'negotiation'
    check (status in ('negotiation', 'escalated', 'resolved', 'withdrawn')),
  -- the escrow state the dispute interrupted, and what was left of an inspection period
  previous_status text not null check (previous_status in ('funded', 'inspection')),
  inspection_left interval,
  negotiation_deadline timestamptz not null,
  -- set only when the payer raised it: the money goes to the payee then if the payer takes no part
  auto_release_at timestamptz,
  reminded_at timestamptz,
  escalated_at timestamptz,
  withdrawn_at timestamptz,
  -- DISPUTE_OUTCOMES; set when resolved
  outcome text check (outcome in ('release', 'refund', 'split')),
  payee_amount bigint check (payee_amount > 0),
  -- the admin who decided it (null: the parties agreed, or the job); like private.admin_audit's
  -- admin_id, it outlives the account
  resolved_by uuid,
  resolution text check (char_length(resolution) between 1 and 2000),
  resolved_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint disputes_resolved_has_outcome check ((status = 'resolved') = (outcome is not null and resolved_at is not null)),
  constraint disputes_split_amount check ((outcome = 'split') = (payee_amount is not null))
);
comment on table public.disputes is
  'A dispute over an escrow: who raised it and why, its negotiation deadline, and how it was resolved. Parties read it.';
comment on column public.disputes.inspection_left is
  'What was left of the inspection period when the dispute was raised (null: the escrow was funded, not in '
  'inspection); a withdrawal gives it back.';
-- one open dispute per escrow
create unique index disputes_open_key on public.disputes (escrow_id) where status in ('negotiation', 'escalated');
create index disputes_escrow_idx on public.disputes (escrow_id, created_at desc);
-- the admin queue pages by created_at over all disputes: unique when written, so `after` is exact
create trigger disputes_created_at_increasing before insert on public.disputes
  for each row execute function private.strictly_increasing_created_at_global();
create index disputes_deadline_idx on public.disputes (negotiation_deadline) where status = 'negotiation';
create index disputes_created_idx on public.disputes (created_at);
alter table public.disputes enable row level security;

revoke all on public.disputes from anon, authenticated;
grant select on public.disputes to authenticated;
grant select, insert, update, delete on public.disputes to service_role;
-- The subquery reads public.escrows under its own policy: the parties of the escrow.
create policy "Parties can read their escrows' disputes"
  on public.disputes for select to authenticated
  using (exists (select 1 from public.escrows e where e.id = escrow_id));
create policy "Service role manages disputes" on public.disputes
  for all to service_role using (true) with check (true);

create table public.dispute_proposals (
  id uuid primary key default gen_random_uuid(),
  dispute_id uuid not null references public.disputes (id) on delete cascade,
  -- one of the escrow's parties (checked by private.dispute_propose), kept by the escrow's keys
  proposed_by uuid not null,
  outcome text not null check (outcome in ('release', 'refund', 'split')),
  -- split only: the payee's share of what is not yet released, in kobo
  payee_amount bigint check (payee_amount > 0),
  -- PROPOSAL_STATUSES: open -> accepted | rejected | superseded (a newer one by the same party) |
  -- closed (the dispute ended otherwise)
  status text not null default 'open' check (status in ('open', 'accepted', 'rejected', 'superseded', 'closed')),
  responded_at timestamptz,
  created_at timestamptz not null default now(),
  constraint dispute_proposals_split_amount check ((outcome = 'split') = (payee_amount is not null))
);
comment on table public.dispute_proposals is
  'What a party proposes to settle a dispute (release, refund or a split) and the other party''s answer.';
-- one open proposal per party: a newer one replaces it
create unique index dispute_proposals_open_key on public.dispute_proposals (dispute_id, proposed_by)
  where status = 'open';
create index dispute_proposals_dispute_idx on public.dispute_proposals (dispute_id, created_at);
alter table public.dispute_proposals enable row level security;

revoke all on public.dispute_proposals from anon, authenticated;
grant select on public.dispute_proposals to authenticated;
grant select, insert, update, delete on public.dispute_proposals to service_role;
create policy "Parties can read their disputes' proposals"
  on public.dispute_proposals for select to authenticated
  using (exists (select 1 from public.disputes d where d.id = dispute_id));
create policy "Service role manages dispute proposals" on public.dispute_proposals
  for all to service_role using (true) with check (true);

-- =============================================================================================
-- Helpers: the open dispute, telling both parties, the half-up share
-- =============================================================================================

-- The escrow's open dispute (negotiation or escalated), locked; ES409 when there is none or, with
-- p_negotiating, when it is no longer negotiated. Call it with the escrow locked.
create function private.dispute_open(e public.escrows, p_negotiating boolean)
returns public.disputes
language plpgsql
set search_path = ''
as $$
declare
  d public.disputes;
begin
  select * into d from public.disputes where escrow_id = e.id and status in ('negotiation', 'escalated') for update;
  if not found then
    raise exception 'this escrow has no open dispute' using errcode = 'ES409';
  end if;
  if p_negotiating and d.status <> 'negotiation' then
    raise exception 'this dispute is % and is no longer negotiated by the parties', d.status using errcode = 'ES409';
  end if;
  return d;
end
$$;
comment on function private.dispute_open(public.escrows, boolean) is
  'The escrow''s open dispute, locked (ES409 when none, or when it must be in negotiation and is escalated).';
revoke execute on function private.dispute_open(public.escrows, boolean) from public, anon, authenticated;
grant execute on function private.dispute_open(public.escrows, boolean) to service_role;

-- Takes both parties' notification locks (the per-user advisory lock private.feed_item_created_at
-- takes for every notification, held to the end of the transaction), lower user id first. Called
-- before a dispute notifies both parties: notifying them in the order of their roles, two disputes
-- between the same two users in opposite roles (raised, withdrawn, settled at the same moment)
-- would take the two locks in opposite orders and deadlock.
create function private.dispute_lock_feeds(e public.escrows)
returns void
language plpgsql
set search_path = ''
as $$
declare
  v_user uuid;
begin
  -- the conversation's row first, as every notification takes it (escrow, conversation, users)
  perform 1 from public.conversations c where c.escrow_id = e.id for update;
  for v_user in
    select x.u from unnest(array[e.initiator_id, e.counterparty_id]) as x(u) where x.u is not null order by x.u
  loop
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('public.notifications:' || v_user::text, 0));
  end loop;
end
$$;
comment on function private.dispute_lock_feeds(public.escrows) is
  'Takes both parties'' notification locks, lower user id first, before a dispute notifies both.';
revoke execute on function private.dispute_lock_feeds(public.escrows) from public, anon, authenticated;
grant execute on function private.dispute_lock_feeds(public.escrows) to service_role;

-- Notifies both parties of the escrow about its dispute (p_action: the action label or null).
create function private.dispute_notify(e public.escrows, d public.disputes, p_event text, p_message jsonb, p_action text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform private.dispute_lock_feeds(e);
  perform private.notify(u, e.id, p_event, p_message, 'dispute', d.id, p_action)
     from unnest(array[e.initiator_id, e.counterparty_id]) as u;
end
$$;
comment on function private.dispute_notify(public.escrows, public.disputes, text, jsonb, text) is
  'Notifies both parties of an escrow about its dispute (entity: the dispute).';
revoke execute on function private.dispute_notify(public.escrows, public.disputes, text, jsonb, text)
  from public, anon, authenticated;
grant execute on function private.dispute_notify(public.escrows, public.disputes, text, jsonb, text) to service_role;

-- p_total * p_part / p_whole rounded half-up to the kobo (all non-negative).
create function private.share_half_up(p_total bigint, p_part bigint, p_whole bigint) returns bigint
language sql immutable set search_path = ''
as $$ select (2 * p_total * p_part + p_whole) / (2 * p_whole) $$;
comment on function private.share_half_up(bigint, bigint, bigint) is
  'A fee or VAT on part of an escrow amount: total * part / whole, rounded half-up to the kobo.';
revoke execute on function private.share_half_up(bigint, bigint, bigint) from public, anon, authenticated;
grant execute on function private.share_half_up(bigint, bigint, bigint) to service_role;

-- A split's payee_amount must leave both sides something: 1 kobo <= P <= R - 1 kobo, R being what
-- is not yet released (ES422 naming payee_amount otherwise). Release and refund take no amount.
create function private.dispute_check_split(e public.escrows, p_outcome text, p_payee_amount bigint)
returns void
language plpgsql
set search_path = ''
as $$
declare
  v_remaining bigint := e.amount - e.released_amount;
begin
  if p_outcome = 'split' and (p_payee_amount is null or p_payee_amount < 1 or p_payee_amount > v_remaining - 1) then
    raise exception 'payee_amount must be from 0.01 to % naira (what is still held, less 0.01)',
      private.naira(v_remaining - 1) using errcode = 'ES422';
  end if;
end
$$;
comment on function private.dispute_check_split(public.escrows, text, bigint) is
  'Refuses (ES422) a split whose payee_amount is not between 1 kobo and what is not yet released less 1 kobo.';
revoke execute on function private.dispute_check_split(public.escrows, text, bigint) from public, anon, authenticated;
grant execute on function private.dispute_check_split(public.escrows, text, bigint) to service_role;

-- =============================================================================================
-- Settling: the money of a resolution, exactly once (the caller holds the escrow's lock and the
-- open dispute's row)
-- =============================================================================================

-- Resolves dispute d of escrow e with an outcome: moves the money, closes the escrow (released or
-- refunded), closes the open proposals, records who resolved it, tells both parties (in the app
-- and by SMS). Returns the payee's bank payout transaction to start, if any.
create function private.dispute_settle(
  e public.escrows, d public.disputes, p_outcome text, p_payee_amount bigint, p_resolved_by uuid, p_resolution text,
  p_now timestamptz
) returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_remaining bigint := e.amount - e.released_amount;
  v_payer uuid := private.payer_of(e);
  v_payee uuid := private.payee_of(e);
  v_hold bigint;
  v_payee_gets bigint := 0;
  v_payer_gets bigint := 0;
  v_seller_fee bigint;
  v_payer_fee_back bigint;
  v_vat_back bigint;
  v_vat_kept bigint;
  v_release_debit bigint;
  v_fees_kept bigint;
  v_transfer uuid;
  v_tx uuid;
  v_payout_tx uuid;
  v_entries jsonb;
  v_user uuid;
begin
  perform private.dispute_check_split(e, p_outcome, p_payee_amount);
  -- Lock order (the ledger's: a user's transaction lock before their accounts, accounts in id
  -- order): a split posts two transfers, the payer's then the payee's, each with its transaction,
  -- and a payout follows a release. Taken one after the other, a split would lock the payer's side
  -- before the payee's, and deadlock with a split the other way round between the same two users
  -- at the same moment, or (the payee's wallet before a clearing shard) with a withdrawal. So,
  -- first, both users' transaction locks (the key of private.strictly_increasing_created_at on
  -- public.transactions), lower id first, then every account the settlement may touch, in id order.
  for v_user in select x.u from unnest(array[v_payer, v_payee]) as x(u) order by x.u loop
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('public.transactions:' || v_user::text, 0));
  end loop;
  perform 1 from private.ledger_accounts
   where id in (private.owner_account('escrow_hold', e.id), private.owner_account('user_wallet', v_payer),
                private.owner_account('user_wallet', v_payee), private.system_account('platform_fees'),
                private.system_account('vat_payable'), private.system_account('provider_clearing'))
   order by id
     for update;
  if p_outcome = 'release' then
    if v_remaining > 0 then
      v_transfer := private.escrow_pay_out(e, v_remaining, 'dispute-release:' || d.id, null,
        pg_catalog.jsonb_build_object('kind', 'escrow_release', 'title', e.title));
    end if;
    v_payee_gets := v_remaining - private.escrow_release_share(e, e.seller_fee, v_remaining);
    update public.escrows set status = 'released', released_at = p_now, updated_at = now() where id = e.id;
  elsif p_outcome = 'refund' then
    v_payer_gets := private.escrow_return_hold(e, pg_catalog.jsonb_build_object('kind', 'refund', 'title', e.title));
    update public.escrows set status = 'refunded', refunded_at = p_now, updated_at = now() where id = e.id;
  else
    -- split: the payer's part first (R - P with the payer fee and VAT on it, half-up), then the
    -- rest of the hold is the release of P: the payee's P less the seller fee on P, the VAT on P
    -- to VAT, and everything else (the fees on P and the last kobo of rounding) to the platform
    select balance into v_hold from private.ledger_accounts where kind = 'escrow_hold' and owner_id = e.id for update;
    v_payer_fee_back := private.share_half_up(e.payer_fee, v_remaining - p_payee_amount, e.amount);
    v_vat_back := private.share_half_up(e.vat, v_remaining - p_payee_amount, e.amount);
    v_payer_gets := (v_remaining - p_payee_amount) + v_payer_fee_back + v_vat_back;
    v_seller_fee := private.share_half_up(e.seller_fee, p_payee_amount, e.amount);
    v_payee_gets := p_payee_amount - v_seller_fee;
    -- VAT gets the VAT on P (half-up); the platform gets the rest of the hold, the last kobo of
    -- rounding either way included (never taking VAT beyond what the release part holds)
    v_release_debit := coalesce(v_hold, 0) - v_payer_gets;
    v_vat_kept := least(private.share_half_up(e.vat, p_payee_amount, e.amount),
                        greatest(v_release_debit - greatest(v_payee_gets, 0), 0));
    v_fees_kept := v_release_debit - v_payee_gets - v_vat_kept;
    if v_fees_kept < 0 then
      raise exception 'the hold of escrow % does not cover the split', e.id using errcode = 'ES409';
    end if;
    v_tx := private.escrow_transaction(v_payer, e.id, null, 'escrow_refund',
              pg_catalog.jsonb_build_object('kind', 'refund', 'title', e.title), v_payer_gets, 'in', 'wallet',
              'succeeded', pg_catalog.jsonb_build_object('dispute_id', d.id, 'refunded_amount', v_remaining - p_payee_amount,
                                                         'payer_fee', v_payer_fee_back, 'vat', v_vat_back));
    perform private.post_transfer('dispute-refund:' || d.id, 'escrow_refund',
      pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', -v_payer_gets),
        pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', v_payer), 'amount', v_payer_gets)),
      v_tx);
    -- On a small escrow the seller fee on P can be all of P (P = 1 kobo where the fee is half the
    -- amount): the payee then gets nothing, and no transaction or wallet entry of 0 is written.
    v_tx := null;
    v_entries := pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', -v_release_debit));
    if v_payee_gets > 0 then
      v_tx := private.escrow_transaction(v_payee, e.id, null, 'escrow_release',
                pg_catalog.jsonb_build_object('kind', 'escrow_release', 'title', e.title), v_payee_gets, 'in', 'wallet',
                'succeeded', pg_catalog.jsonb_build_object('dispute_id', d.id, 'released_amount', p_payee_amount,
                                                           'seller_fee', v_seller_fee, 'fees_kept', v_fees_kept,
                                                           'vat', v_vat_kept));
      v_entries := v_entries || pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('account_id', private.owner_account('user_wallet', v_payee), 'amount', v_payee_gets));
    end if;
    if v_fees_kept > 0 then
      v_entries := v_entries || pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('system', 'platform_fees', 'amount', v_fees_kept));
    end if;
    if v_vat_kept > 0 then
      v_entries := v_entries || pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('system', 'vat_payable', 'amount', v_vat_kept));
    end if;
    v_transfer := private.post_transfer('dispute-release:' || d.id, 'escrow_release', v_entries, v_tx);
    update public.escrows set status = 'released', released_at = p_now, released_amount = released_amount + p_payee_amount,
                              updated_at = now()
     where id = e.id;
  end if;
  -- open milestones end with the escrow: a release pays the agreed ones with it, else cancelled
  perform private.close_milestones(e.id, case when p_outcome = 'release' then v_transfer end);
  if v_payee_gets > 0 then
    v_payout_tx := private.escrow_start_payout(e, v_payee_gets);
  end if;
  update public.disputes
     set status = 'resolved', outcome = p_outcome, payee_amount = case when p_outcome = 'split' then p_payee_amount end,
         resolved_by = p_resolved_by, resolution = p_resolution, resolved_at = p_now, updated_at = now()
   where id = d.id;
  update public.dispute_proposals set status = 'closed', responded_at = p_now
   where dispute_id = d.id and status = 'open';
  perform private.dispute_lock_feeds(e);
  perform private.notify(v_payee, e.id, 'dispute_resolved',
    pg_catalog.jsonb_build_object('kind', 'dispute_resolved', 'title', e.title, 'outcome', p_outcome,
                                  'amount', v_payee_gets, 'by_admin', p_resolved_by is not null),
    'dispute', d.id, 'View dispute');
  perform private.notify(v_payer, e.id, 'dispute_resolved',
    pg_catalog.jsonb_build_object('kind', 'dispute_resolved', 'title', e.title, 'outcome', p_outcome,
                                  'amount', v_payer_gets, 'by_admin', p_resolved_by is not null),
    'dispute', d.id, 'View dispute');
  -- money moved: both parties are told by SMS too, each with what they received
  perform private.queue_sms(u.phone, pg_catalog.jsonb_build_object('kind', 'dispute_settled', 'outcome', p_outcome,
            'amount', case when u.id = v_payee then v_payee_gets else v_payer_gets end))
     from private.users u where u.id in (v_payer, v_payee);
  return v_payout_tx;
end
$$;
comment on function private.dispute_settle(public.escrows, public.disputes, text, bigint, uuid, text, timestamptz) is
  'Resolves a dispute with release, refund or split: the money out of the hold (to exactly 0), the escrow closed, '
  'both parties told in the app and by SMS. The caller holds the escrow lock.';
revoke execute on function private.dispute_settle(public.escrows, public.disputes, text, bigint, uuid, text, timestamptz)
  from public, anon, authenticated;
grant execute on function private.dispute_settle(public.escrows, public.disputes, text, bigint, uuid, text, timestamptz)
  to service_role;

-- =============================================================================================
-- The parties' operations
-- =============================================================================================

-- dispute-raise: a party of a funded escrow (or one in inspection) disputes it. The escrow becomes
-- disputed: the inspection clock stops (what was left of it is kept) and nothing is released
-- automatically. Returns the dispute's id.
create function private.dispute_raise(p_escrow uuid, p_actor uuid, p_reason_code text, p_reason text, p_now timestamptz)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  d public.disputes;
begin
  if e.status not in ('funded', 'inspection') then
    perform private.refuse_state(e, 'raise a dispute on');
  end if;
  -- an inspection period that ended is owed to the payee, even before the job releases it
  if e.status = 'inspection' and e.inspection_ends_at <= p_now then
    raise exception 'the inspection period has ended: the money is being released' using errcode = 'ES409';
  end if;
  -- raising and withdrawing again and again would freeze the money: one withdrawal per party
  if exists (select 1 from public.disputes x where x.escrow_id = e.id and x.raised_by = p_actor and x.status = 'withdrawn') then
    raise exception 'you withdrew a dispute on this escrow and cannot raise another' using errcode = 'ES409';
  end if;
  insert into public.disputes (escrow_id, raised_by, reason_code, reason, previous_status, inspection_left,
                               negotiation_deadline, auto_release_at, created_at)
  values (e.id, p_actor, p_reason_code, p_reason, e.status,
          case when e.status = 'inspection' then greatest(e.inspection_ends_at - p_now, interval '0') end,
          p_now + interval '72 hours',
          case when p_actor = private.payer_of(e) then p_now + interval '72 hours' end,
          p_now)
  returning * into d;
  update public.escrows set status = 'disputed', updated_at = now() where id = e.id;
  perform private.dispute_notify(e, d, 'dispute_raised',
    pg_catalog.jsonb_build_object('kind', 'dispute_raised', 'title', e.title, 'reason_code', p_reason_code,
                                  'by_payer', p_actor = private.payer_of(e)),
    'View dispute');
  return d.id;
end
$$;
comment on function private.dispute_raise(uuid, uuid, text, text, timestamptz) is
  'dispute-raise by a party of a funded escrow or one in inspection: the escrow becomes disputed, the inspection '
  'clock stops.';
revoke execute on function private.dispute_raise(uuid, uuid, text, text, timestamptz) from public, anon, authenticated;
grant execute on function private.dispute_raise(uuid, uuid, text, text, timestamptz) to service_role;

-- dispute-propose: a party proposes how to settle (a newer proposal replaces their open one); the
-- other party is asked to answer. Returns the proposal's id.
create function private.dispute_propose(
  p_escrow uuid, p_actor uuid, p_outcome text, p_payee_amount bigint, p_now timestamptz
) returns uuid
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  d public.disputes;
  v_id uuid;
begin
  d := private.dispute_open(e, true);
  -- each proposal notifies the other party: 20 per party and dispute are plenty to negotiate
  if (select count(*) from public.dispute_proposals x where x.dispute_id = d.id and x.proposed_by = p_actor) >= 20 then
    raise exception 'you have made 20 proposals in this dispute: wait for an answer, or for the deadline'
      using errcode = 'ES409';
  end if;
  perform private.dispute_check_split(e, p_outcome, p_payee_amount);
  update public.dispute_proposals set status = 'superseded', responded_at = p_now
   where dispute_id = d.id and proposed_by = p_actor and status = 'open';
  insert into public.dispute_proposals (dispute_id, proposed_by, outcome, payee_amount, created_at)
  values (d.id, p_actor, p_outcome, case when p_outcome = 'split' then p_payee_amount end, p_now)
  returning id into v_id;
  perform private.notify(case when p_actor = e.initiator_id then e.counterparty_id else e.initiator_id end, e.id,
    'dispute_proposal',
    pg_catalog.jsonb_build_object('kind', 'dispute_proposal', 'title', e.title, 'outcome', p_outcome,
                                  'payee_amount', case when p_outcome = 'split' then p_payee_amount end),
    'dispute', d.id, 'Respond to proposal');
  return v_id;
end
$$;
comment on function private.dispute_propose(uuid, uuid, text, bigint, timestamptz) is
  'dispute-propose: a party proposes release, refund or a split of what is still held; it replaces their open '
  'proposal.';
revoke execute on function private.dispute_propose(uuid, uuid, text, bigint, timestamptz) from public, anon, authenticated;
grant execute on function private.dispute_propose(uuid, uuid, text, bigint, timestamptz) to service_role;

-- dispute-respond: the other party accepts (the dispute is settled at once) or rejects an open
-- proposal. Returns the proposal's new status and the payee's payout transaction to start, if any.
create function private.dispute_respond(p_escrow uuid, p_actor uuid, p_proposal uuid, p_accept boolean, p_now timestamptz)
returns table (status text, payout_tx uuid)
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  d public.disputes;
  p public.dispute_proposals;
begin
  d := private.dispute_open(e, true);
  select * into p from public.dispute_proposals where id = p_proposal and dispute_id = d.id for update;
  if not found then
    raise exception 'proposal not found' using errcode = 'ES404';
  end if;
  if p.proposed_by = p_actor then
    perform private.refuse_role('only the other party can answer this proposal');
  end if;
  if p.status <> 'open' then
    raise exception 'this proposal is % and can no longer be answered', p.status using errcode = 'ES409';
  end if;
  if not p_accept then
    update public.dispute_proposals set status = 'rejected', responded_at = p_now where id = p.id;
    perform private.notify(p.proposed_by, e.id, 'dispute_proposal_rejected',
      pg_catalog.jsonb_build_object('kind', 'dispute_proposal_rejected', 'title', e.title, 'outcome', p.outcome),
      'dispute', d.id, 'View dispute');
    return query select 'rejected'::text, null::uuid;
    return;
  end if;
  update public.dispute_proposals set status = 'accepted', responded_at = p_now where id = p.id;
  return query select 'accepted'::text,
    private.dispute_settle(e, d, p.outcome, p.payee_amount, null, null, p_now);
end
$$;
comment on function private.dispute_respond(uuid, uuid, uuid, boolean, timestamptz) is
  'dispute-respond: the other party accepts (settled at once) or rejects an open proposal.';
revoke execute on function private.dispute_respond(uuid, uuid, uuid, boolean, timestamptz) from public, anon, authenticated;
grant execute on function private.dispute_respond(uuid, uuid, uuid, boolean, timestamptz) to service_role;

-- dispute-withdraw: the party who raised it withdraws while it is negotiated. The escrow returns to
-- the state it left; an inspection period resumes with the time it had left.
create function private.dispute_withdraw(p_escrow uuid, p_actor uuid, p_now timestamptz)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_actor);
  d public.disputes;
begin
  d := private.dispute_open(e, true);
  if d.raised_by <> p_actor then
    perform private.refuse_role('only the party who raised this dispute can withdraw it');
  end if;
  update public.disputes set status = 'withdrawn', withdrawn_at = p_now, updated_at = now() where id = d.id;
  update public.dispute_proposals set status = 'closed', responded_at = p_now where dispute_id = d.id and status = 'open';
  update public.escrows
     set status = d.previous_status,
         inspection_ends_at = case when d.previous_status = 'inspection' then p_now + d.inspection_left
                                   else inspection_ends_at end,
         updated_at = now()
   where id = e.id;
  perform private.dispute_notify(e, d, 'dispute_withdrawn',
    pg_catalog.jsonb_build_object('kind', 'dispute_withdrawn', 'title', e.title), 'View escrow');
  return d.previous_status;
end
$$;
comment on function private.dispute_withdraw(uuid, uuid, timestamptz) is
  'dispute-withdraw by the raiser while negotiated: the escrow returns to funded, or to inspection with the time it '
  'had left.';
revoke execute on function private.dispute_withdraw(uuid, uuid, timestamptz) from public, anon, authenticated;
grant execute on function private.dispute_withdraw(uuid, uuid, timestamptz) to service_role;

-- =============================================================================================
-- The admin's decision
-- =============================================================================================

-- admin-dispute-resolve: an admin settles an open dispute (escalated, or still negotiated) with a
-- resolution both parties see; the decision is in the admin audit in the same transaction. ES404
-- for a non-admin (private.admin_record) and for an unknown dispute. Returns the payout to start.
create function private.admin_dispute_resolve(
  p_dispute uuid, p_admin uuid, p_outcome text, p_payee_amount bigint, p_resolution text, p_now timestamptz
) returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_escrow uuid;
  e public.escrows;
  d public.disputes;
  v_payout uuid;
begin
  select escrow_id into v_escrow from public.disputes where id = p_dispute;
  if not found then
    raise exception 'dispute not found' using errcode = 'ES404';
  end if;
  e := private.escrow_lock(v_escrow, null);
  -- no one decides their own case
  if p_admin in (e.initiator_id, e.counterparty_id) then
    perform private.refuse_role('an admin cannot resolve a dispute on their own escrow');
  end if;
  select * into d from public.disputes where id = p_dispute for update;
  if d.status not in ('negotiation', 'escalated') then
    raise exception 'this dispute is % already', d.status using errcode = 'ES409';
  end if;
  v_payout := private.dispute_settle(e, d, p_outcome, p_payee_amount, p_admin, p_resolution, p_now);
  perform private.admin_record(p_admin, 'dispute.resolve', 'dispute', d.id,
    pg_catalog.jsonb_build_object('escrow_id', e.id, 'outcome', p_outcome, 'payee_amount', p_payee_amount,
                                  'resolution', p_resolution, 'previous_status', d.status));
  return v_payout;
end
$$;
comment on function private.admin_dispute_resolve(uuid, uuid, text, bigint, text, timestamptz) is
  'admin-dispute-resolve: an admin settles an open dispute with release, refund or a split and a resolution; '
  'audited.';
revoke execute on function private.admin_dispute_resolve(uuid, uuid, text, bigint, text, timestamptz)
  from public, anon, authenticated;
grant execute on function private.admin_dispute_resolve(uuid, uuid, text, bigint, text, timestamptz) to service_role;

-- =============================================================================================
-- The job: reminders, deadlines
-- =============================================================================================

-- Whether the payer took part in dispute d after raising it and before its negotiation deadline: a
-- message in the escrow's conversation, a proposal, or an answer to one (what the payer does after
-- the deadline, before the job runs, cannot turn the payee's release into an escalation).
create function private.dispute_payer_took_part(e public.escrows, d public.disputes) returns boolean
language sql stable set search_path = ''
as $$
  select exists (select 1 from public.messages m join public.conversations c on c.id = m.conversation_id
                  where c.escrow_id = e.id and m.sender_id = private.payer_of(e) and m.created_at >= d.created_at
                    and m.created_at < d.negotiation_deadline)
      or exists (select 1 from public.dispute_proposals p
                  where p.dispute_id = d.id
                    and ((p.proposed_by = private.payer_of(e) and p.created_at < d.negotiation_deadline)
                         or (p.proposed_by <> private.payer_of(e) and p.status in ('accepted', 'rejected')
                             and p.responded_at < d.negotiation_deadline)))
$$;
comment on function private.dispute_payer_took_part(public.escrows, public.disputes) is
  'Whether the payer sent a message, made a proposal or answered one after the dispute was raised.';
revoke execute on function private.dispute_payer_took_part(public.escrows, public.disputes)
  from public, anon, authenticated;
grant execute on function private.dispute_payer_took_part(public.escrows, public.disputes) to service_role;

-- The job's part for disputes at p_now: both parties are told 24 hours before the negotiation
-- deadline; at the deadline a dispute the payer raised and then left is released to the payee,
-- any other is escalated to the admin queue. Each escrow is taken under its lock and only while
-- still due (skip locked: an operation holding it now is left to the next run).
create function private.run_dispute_jobs(p_now timestamptz)
returns table (job text, escrow_id uuid, payout_tx uuid)
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
  e public.escrows;
  d public.disputes;
begin
  for v_id in
    select x.escrow_id from public.disputes x
     where x.status = 'negotiation' and x.reminded_at is null and x.negotiation_deadline - interval '24 hours' <= p_now
       and x.negotiation_deadline > p_now
     order by x.negotiation_deadline
  loop
    select * into e from public.escrows x where x.id = v_id for update skip locked;
    continue when not found;
    select * into d from public.disputes x
     where x.escrow_id = v_id and x.status = 'negotiation' and x.reminded_at is null for update;
    continue when not found;
    update public.disputes set reminded_at = p_now, updated_at = now() where id = d.id;
    -- what happens at the deadline if nothing changes: a release only while the payer who raised it
    -- has still taken no part (once they have, it goes to the admins whatever they do next)
    perform private.dispute_notify(e, d, 'dispute_deadline_soon',
      pg_catalog.jsonb_build_object('kind', 'dispute_deadline_soon', 'title', e.title,
                                    'auto_release', d.auto_release_at is not null
                                                    and not private.dispute_payer_took_part(e, d)),
      'View dispute');
    return query select 'dispute_reminder'::text, v_id, null::uuid;
  end loop;
  for v_id in
    select x.escrow_id from public.disputes x
     where x.status = 'negotiation' and x.negotiation_deadline <= p_now
     order by x.negotiation_deadline
  loop
    select * into e from public.escrows x where x.id = v_id for update skip locked;
    continue when not found;
    select * into d from public.disputes x
     where x.escrow_id = v_id and x.status = 'negotiation' and x.negotiation_deadline <= p_now for update;
    continue when not found;
    if d.auto_release_at is not null and d.auto_release_at <= p_now and not private.dispute_payer_took_part(e, d) then
      return query select 'dispute_auto_release'::text, v_id,
        private.dispute_settle(e, d, 'release', null, null, null, p_now);
    else
      update public.disputes set status = 'escalated', escalated_at = p_now, updated_at = now() where id = d.id;
      update public.dispute_proposals set status = 'closed', responded_at = p_now
       where dispute_id = d.id and status = 'open';
      perform private.dispute_notify(e, d, 'dispute_escalated',
        pg_catalog.jsonb_build_object('kind', 'dispute_escalated', 'title', e.title), 'View dispute');
      return query select 'dispute_escalated'::text, v_id, null::uuid;
    end if;
  end loop;
end
$$;
comment on function private.run_dispute_jobs(timestamptz) is
  'The job''s disputes: reminders 24 h before the negotiation deadline; at it, release to the payee (the payer raised '
  'it and took no part) or escalation.';
revoke execute on function private.run_dispute_jobs(timestamptz) from public, anon, authenticated;
grant execute on function private.run_dispute_jobs(timestamptz) to service_role;

-- The job (private.run_jobs of 20261121001500_jobs, redefined): the disputes' deadlines first, then
-- inspection releases and ends as before.
create or replace function private.run_jobs(p_now timestamptz)
returns table (job text, escrow_id uuid, payout_tx uuid)
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
  v_payout uuid;
begin
  return query select * from private.run_dispute_jobs(p_now);
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
comment on function private.run_jobs(timestamptz) is
  'The job: dispute reminders and deadlines, releases of escrows whose inspection period ended, ends of those closed '
  '14 days ago; one row per escrow acted on.';
