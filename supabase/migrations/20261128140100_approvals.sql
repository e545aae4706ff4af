-- =============================================================================================
-- Four eyes: approvals (docs/operators.md#four-eyes)
-- =============================================================================================
-- An action that needs a second operator (money above FOUR_EYES_MIN_AMOUNT, every role grant,
-- every factor reset, every unfreeze) is stored here as pending by private.approval_request and
-- answered 202. A second operator decides it: private.approval_take locks the row, checks that it
-- is pending and unexpired, that the decider is not the requester and has held one of the
-- action's roles for 24 hours, and marks it approved, in the transaction in which the caller then
-- performs the action; so two approvals racing perform it once (the second waits for the row,
-- then finds it approved), and an action refused on its re-check rolls the approval back to
-- pending. private.approval_reject closes it without acting.

create table private.approvals (
  id uuid primary key default gen_random_uuid(),
  -- '<area>.<verb>' of the action, as in the audit: e.g. 'charge.resolve', 'user.unfreeze'
  action text not null check (action ~ '^[a-z][a-z_]*(\.[a-z][a-z_]*)+$' and char_length(action) <= 100),
  target_type text not null check (target_type ~ '^[a-z][a-z_]*$' and char_length(target_type) <= 50),
  target_id uuid not null,
  -- the action's own parameters (its request body less the reason), replayed by the decider
  params jsonb not null default '{}'::jsonb check (jsonb_typeof(params) = 'object'),
  -- the money the action moves, in kobo, when that is why it needs four eyes
  amount bigint check (amount is null or amount >= 0),
  -- the roles that may perform the action, and so approve it
  roles text[] not null check (cardinality(roles) > 0
    and roles <@ array['support', 'finance', 'disputes', 'admin']::text[]),
  reason text not null check (char_length(reason) between 10 and 2000),
  requested_by uuid not null,
  requested_at timestamptz not null default now(),
  expires_at timestamptz not null,
  status text not null default 'pending' check (status in ('pending', 'approved', 'rejected')),
  decided_by uuid,
  decided_at timestamptz,
  decision_reason text check (decision_reason is null or char_length(decision_reason) between 10 and 2000),
  -- what the action answered when it was performed
  result jsonb,
  check ((status = 'pending') = (decided_at is null))
);
comment on table private.approvals is
  'Operator actions waiting for a second operator (four eyes): pending until approved (and performed in the same '
  'transaction) or rejected; a pending one past expires_at is expired and can no longer be decided.';
-- one pending approval per action and target: a repeat of the request answers the same approval
create unique index approvals_one_pending_idx on private.approvals (action, target_id) where status = 'pending';
create index approvals_status_idx on private.approvals (status, requested_at);
alter table private.approvals enable row level security;
create policy "Service role manages approvals" on private.approvals
  for all to service_role using (true) with check (true);
grant select, insert, update on private.approvals to service_role;

-- Stores a pending approval of p_action on p_target for p_operator (who must hold one of p_roles,
-- recorded in the audit as approval.request), or answers the pending one of the same action and
-- target already there (nothing written). Expires 24 hours after p_now.
create function private.approval_request(
  p_operator uuid,
  p_action text,
  p_target_type text,
  p_target uuid,
  p_params jsonb,
  p_amount bigint,
  p_roles text[],
  p_reason text,
  p_now timestamptz default now()
)
returns private.approvals
language plpgsql
set search_path = ''
as $$
declare
  a private.approvals;
begin
  perform private.operator_record(p_operator, p_roles, 'approval.request', p_target_type, p_target, p_reason,
    pg_catalog.jsonb_build_object('action', p_action, 'amount', p_amount));
  insert into private.approvals (action, target_type, target_id, params, amount, roles, reason, requested_by,
                                 requested_at, expires_at)
  values (p_action, p_target_type, p_target, coalesce(p_params, '{}'::jsonb), p_amount, p_roles, p_reason, p_operator,
          p_now, p_now + interval '24 hours')
  on conflict (action, target_id) where status = 'pending' do nothing
  returning * into a;
  if a.id is null then
    select * into a from private.approvals x
     where x.action = p_action and x.target_id = p_target and x.status = 'pending';
  end if;
  return a;
end
$$;
comment on function private.approval_request(uuid, text, text, uuid, jsonb, bigint, text[], text, timestamptz) is
  'Stores a pending four-eyes approval (audited as approval.request), or returns the pending one of the same action '
  'and target; it expires 24 hours later.';
revoke execute on function private.approval_request(uuid, text, text, uuid, jsonb, bigint, text[], text, timestamptz)
  from public, anon, authenticated;
grant execute on function private.approval_request(uuid, text, text, uuid, jsonb, bigint, text[], text, timestamptz)
  to service_role;

-- The checks of a decision on approval p_id by p_decider at p_now, the row locked: 404
-- approval_not_found, 409 approval_not_pending (decided already), 409 approval_expired, 409
-- approval_own_action (the requester), 403 operator_role_required (the decider holds none of its
-- roles), 403 approval_tenure_required (held for less than 24 hours).
create function private.approval_lock(p_id uuid, p_decider uuid, p_now timestamptz)
returns private.approvals
language plpgsql
set search_path = ''
as $$
declare
  a private.approvals;
  v_since timestamptz;
begin
  select * into a from private.approvals x where x.id = p_id for update;
  if a.id is null then
    perform private.refuse(404, 'approval_not_found');
  end if;
  if a.status <> 'pending' then
    perform private.refuse(409, 'approval_not_pending', pg_catalog.jsonb_build_object('status', a.status));
  end if;
  if a.expires_at <= p_now then
    perform private.refuse(409, 'approval_expired', pg_catalog.jsonb_build_object('expired_at', a.expires_at));
  end if;
  if a.requested_by = p_decider then
    perform private.refuse(409, 'approval_own_action');
  end if;
  select pg_catalog.min(o.granted_at) into v_since
    from private.operators o where o.user_id = p_decider and o.role = any (a.roles);
  if v_since is null then
    perform private.refuse(403, 'operator_role_required', pg_catalog.jsonb_build_object('roles', a.roles));
  end if;
  if v_since > p_now - interval '24 hours' then
    perform private.refuse(403, 'approval_tenure_required',
      pg_catalog.jsonb_build_object('roles', a.roles, 'eligible_at', v_since + interval '24 hours'));
  end if;
  return a;
end
$$;
comment on function private.approval_lock(uuid, uuid, timestamptz) is
  'Locks a pending approval for a decision by p_decider and refuses what may not decide it (see the refusals).';
revoke execute on function private.approval_lock(uuid, uuid, timestamptz) from public, anon, authenticated;
grant execute on function private.approval_lock(uuid, uuid, timestamptz) to service_role;

-- Approves p_id for p_decider (audited as approval.approve): the caller performs the action in the
-- same transaction, then stores what it answered with private.approval_done.
create function private.approval_take(p_id uuid, p_decider uuid, p_reason text, p_now timestamptz default now())
returns private.approvals
language plpgsql
set search_path = ''
as $$
declare
  a private.approvals;
begin
  a := private.approval_lock(p_id, p_decider, p_now);
  perform private.operator_record(p_decider, a.roles, 'approval.approve', a.target_type, a.target_id, p_reason,
    pg_catalog.jsonb_build_object('approval_id', a.id, 'action', a.action, 'requested_by', a.requested_by));
  update private.approvals x
     set status = 'approved', decided_by = p_decider, decided_at = p_now, decision_reason = p_reason
   where x.id = p_id
  returning * into a;
  return a;
end
$$;
comment on function private.approval_take(uuid, uuid, text, timestamptz) is
  'Approves a pending approval (four eyes) in the caller''s transaction, which then performs the action.';
revoke execute on function private.approval_take(uuid, uuid, text, timestamptz) from public, anon, authenticated;
grant execute on function private.approval_take(uuid, uuid, text, timestamptz) to service_role;

-- Stores the answer of the action an approval performed.
create function private.approval_done(p_id uuid, p_result jsonb)
returns void
language sql
set search_path = ''
as $$
  update private.approvals set result = p_result where id = p_id and status = 'approved';
$$;
comment on function private.approval_done(uuid, jsonb) is 'Stores what the approved action answered.';
revoke execute on function private.approval_done(uuid, jsonb) from public, anon, authenticated;
grant execute on function private.approval_done(uuid, jsonb) to service_role;

-- Rejects p_id for p_decider (the same checks as an approval; audited as approval.reject).
create function private.approval_reject(p_id uuid, p_decider uuid, p_reason text, p_now timestamptz default now())
returns private.approvals
language plpgsql
set search_path = ''
as $$
declare
  a private.approvals;
begin
  a := private.approval_lock(p_id, p_decider, p_now);
  perform private.operator_record(p_decider, a.roles, 'approval.reject', a.target_type, a.target_id, p_reason,
    pg_catalog.jsonb_build_object('approval_id', a.id, 'action', a.action, 'requested_by', a.requested_by));
  update private.approvals x
     set status = 'rejected', decided_by = p_decider, decided_at = p_now, decision_reason = p_reason
   where x.id = p_id
  returning * into a;
  return a;
end
$$;
comment on function private.approval_reject(uuid, uuid, text, timestamptz) is
  'Rejects a pending approval (four eyes): nothing is performed.';
revoke execute on function private.approval_reject(uuid, uuid, text, timestamptz) from public, anon, authenticated;
grant execute on function private.approval_reject(uuid, uuid, text, timestamptz) to service_role;
