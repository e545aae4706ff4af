-- =============================================================================================
-- Milestones of hiring escrows: proposed by either party, agreed by both, completed by the
-- freelancer, released by the client out of the funded escrow (each release pays its share of
-- the amount, fees and VAT). Parties read their escrows' milestones; SQL functions write them.
-- =============================================================================================

create table public.milestones (
  id uuid primary key default gen_random_uuid(),
  escrow_id uuid not null references public.escrows (id) on delete cascade,
  created_by uuid not null references private.users (id),
  milestone_index integer not null check (milestone_index >= 1),
  title text not null check (char_length(title) between 1 and 200),
  description text check (char_length(description) <= 2000),
  amount bigint not null check (amount > 0),
  due_date date,
  status text not null default 'proposed'
    check (status in ('proposed', 'accepted', 'completed', 'released', 'cancelled')),
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
comment on table public.milestones is
  'The milestones of a hiring escrow: proposed, agreed by both parties, completed, released. Parties read them.';
create index milestones_created_by_idx on public.milestones (created_by);
create index milestones_release_tx_idx on public.milestones (release_tx_id) where release_tx_id is not null;
alter table public.milestones enable row level security;

revoke all on public.milestones from anon, authenticated;
grant select on public.milestones to authenticated;
grant select, insert, update, delete on public.milestones to service_role;

create policy "Parties can read their escrows' milestones"
  on public.milestones for select to authenticated
  using (exists (select 1 from public.escrows e where e.id = escrow_id));
create policy "Service role manages milestones" on public.milestones
  for all to service_role using (true) with check (true);

-- =============================================================================================
-- Helpers
-- =============================================================================================

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
comment on function private.milestone_lock(uuid, uuid) is
  'Locks a milestone''s escrow, then the milestone, for an operation; ES404 unless the actor is a party.';
revoke execute on function private.milestone_lock(uuid, uuid) from public, anon, authenticated;
grant execute on function private.milestone_lock(uuid, uuid) to service_role;

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
comment on function private.milestones_fit(public.escrows, bigint, uuid) is
  'Refuses (ES409) when the escrow''s milestones that are not cancelled, plus an amount, would exceed the escrow '
  'amount.';
revoke execute on function private.milestones_fit(public.escrows, bigint, uuid) from public, anon, authenticated;
grant execute on function private.milestones_fit(public.escrows, bigint, uuid) to service_role;

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
comment on function private.close_milestones(uuid, uuid) is
  'Closes an escrow''s open milestones: released with the release transfer when agreed, else cancelled.';
revoke execute on function private.close_milestones(uuid, uuid) from public, anon, authenticated;
grant execute on function private.close_milestones(uuid, uuid) to service_role;

-- =============================================================================================
-- Propose, edit, approve, complete, release
-- =============================================================================================

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
  if not private.escrow_milestones_may_change(e) then
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
    pg_catalog.jsonb_build_object('kind', 'milestone_proposed', 'milestone', p_title, 'amount', p_amount,
                                  'title', e.title),
    'milestone', v_id, 'Review milestone');
  return v_id;
end
$$;
comment on function private.milestone_create(uuid, uuid, text, text, bigint, date) is
  'milestone-create on a hiring escrow: a proposed milestone, approved by its proposer; the other party is asked to '
  'review.';
revoke execute on function private.milestone_create(uuid, uuid, text, text, bigint, date)
  from public, anon, authenticated;
grant execute on function private.milestone_create(uuid, uuid, text, text, bigint, date) to service_role;

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
  if not private.escrow_milestones_may_change(l.e) then
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
    pg_catalog.jsonb_build_object('kind', 'milestone_updated', 'milestone', v_title, 'title', (l.e).title),
    'milestone', (l.m).id, 'Review milestone');
end
$$;
comment on function private.milestone_update(uuid, uuid, jsonb) is
  'milestone-update of a proposed milestone: the editor''s approval stands and the other party must approve again.';
revoke execute on function private.milestone_update(uuid, uuid, jsonb) from public, anon, authenticated;
grant execute on function private.milestone_update(uuid, uuid, jsonb) to service_role;

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
  if not private.escrow_milestones_may_change(l.e) then
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
      pg_catalog.jsonb_build_object('kind', 'milestone_accepted', 'milestone', (l.m).title), 'milestone', (l.m).id,
      'View milestone')
       from unnest(array[(l.e).initiator_id, (l.e).counterparty_id]) as u;
  end if;
  return v_status;
end
$$;
comment on function private.milestone_approve(uuid, uuid) is
  'milestone-approve by a party; the milestone is accepted once both parties approved. Returns its status.';
revoke execute on function private.milestone_approve(uuid, uuid) from public, anon, authenticated;
grant execute on function private.milestone_approve(uuid, uuid) to service_role;

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
  if not private.escrow_milestones_may_change(l.e) then
    perform private.refuse_state(l.e, 'complete a milestone of');
  end if;
  if (l.m).status <> 'accepted' then
    raise exception 'only an accepted milestone can be completed (this one is %)', (l.m).status using errcode = 'ES409';
  end if;
  update public.milestones set status = 'completed', completed_at = now(), updated_at = now() where id = (l.m).id;
  perform private.notify(private.payer_of(l.e), (l.e).id, 'milestone_completed',
    pg_catalog.jsonb_build_object('kind', 'milestone_completed', 'milestone', (l.m).title, 'amount', (l.m).amount),
    'milestone', (l.m).id, 'Release milestone');
end
$$;
comment on function private.milestone_complete(uuid, uuid) is
  'milestone-complete by the freelancer: an accepted milestone is marked completed and the client asked to release it.';
revoke execute on function private.milestone_complete(uuid, uuid) from public, anon, authenticated;
grant execute on function private.milestone_complete(uuid, uuid) to service_role;

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
    pg_catalog.jsonb_build_object('kind', 'milestone_release', 'milestone', (l.m).title));
  update public.milestones set status = 'released', released_at = now(), release_tx_id = v_transfer, updated_at = now()
   where id = (l.m).id;
  -- what the payee was just credited: the milestone's amount less its share of the seller fee
  v_payout := private.escrow_start_payout(l.e,
    (l.m).amount - private.escrow_release_share(l.e, (l.e).seller_fee, (l.m).amount), (l.m).id);
  perform private.notify(private.payee_of(l.e), (l.e).id, 'milestone_released',
    pg_catalog.jsonb_build_object('kind', 'milestone_released', 'milestone', (l.m).title), 'milestone', (l.m).id,
    'View milestone');
  if (l.e).released_amount + (l.m).amount = (l.e).amount then
    -- the last of the money: the escrow itself is released, and both parties are told
    update public.escrows set status = 'released', released_at = now(), updated_at = now() where id = (l.e).id;
    perform private.notify(private.payee_of(l.e), (l.e).id, 'released',
      pg_catalog.jsonb_build_object('kind', 'milestones_released_payee', 'title', (l.e).title, 'amount', (l.e).amount),
      'escrow', (l.e).id, 'View escrow');
    perform private.notify(private.payer_of(l.e), (l.e).id, 'released',
      pg_catalog.jsonb_build_object('kind', 'milestones_released_payer', 'title', (l.e).title), 'escrow', (l.e).id,
      'Leave a review');
  end if;
  return v_payout;
end
$$;
comment on function private.milestone_release(uuid, uuid) is
  'milestone-release by the client: pays a completed milestone out of the funded escrow, releasing it when all are '
  'paid.';
revoke execute on function private.milestone_release(uuid, uuid) from public, anon, authenticated;
grant execute on function private.milestone_release(uuid, uuid) to service_role;
