-- =============================================================================================
-- Granting and revoking roles through the operator API, and resetting a factor
-- (docs/operators.md#granting-and-revoking-roles, docs/operators.md#resetting-a-factor)
-- =============================================================================================
-- admin-role-grant is a four-eyes action: private.operator_grant_check refuses, when it is asked
-- for and again when it is approved, a grant the script would refuse (a user below KYC tier 3, or
-- without a NIN and a BVN bound), and private.operator_grant_to performs it when a second admin
-- approves, with granted_by the approving operator's id and granted_at now (tenure counts from
-- the moment the grant took effect). admin-role-revoke is direct: private.operator_revoke_from
-- refuses a role not held and the revoke of the last admin, so the service always has one.
-- The audit rows (role.grant, role.revoke, factor.reset) are written through
-- private.operator_record, in the transaction of the change.

-- The checks of a grant of p_role to p_user, with the user's row locked (a grant or revoke of
-- the same user at the same moment waits): 404 user_not_found, 409 operator_role_held, 409
-- operator_tier_required, 409 operator_identity_unbound.
create function private.operator_grant_check(p_user uuid, p_role text)
returns void
language plpgsql
set search_path = ''
as $$
declare
  v_tier smallint;
  v_missing text[];
begin
  if p_role is null or p_role not in ('support', 'finance', 'disputes', 'admin') then
    perform private.refuse(422, 'operator_argument_invalid', '{"field": "role"}');
  end if;
  select u.kyc_tier into v_tier from private.users u where u.id = p_user for update;
  if not found then
    perform private.refuse(404, 'user_not_found');
  end if;
  if exists (select 1 from private.operators o where o.user_id = p_user and o.role = p_role) then
    perform private.refuse(409, 'operator_role_held', pg_catalog.jsonb_build_object('role', p_role));
  end if;
  if v_tier < 3 then
    perform private.refuse(409, 'operator_tier_required', pg_catalog.jsonb_build_object('tier', v_tier));
  end if;
  select pg_catalog.array_agg(k order by k) into v_missing
    from unnest(array['nin', 'bvn']) as k
   where not exists (select 1 from private.identity_bindings b where b.user_id = p_user and b.kind = k);
  if v_missing is not null then
    perform private.refuse(409, 'operator_identity_unbound', pg_catalog.jsonb_build_object('missing', v_missing));
  end if;
end
$$;
comment on function private.operator_grant_check(uuid, text) is
  'The checks of a grant (admin-role-grant, when asked for and when approved): the user exists, does not hold the '
  'role, is at KYC tier 3 or more and has a NIN and a BVN bound; locks the user''s row.';
revoke execute on function private.operator_grant_check(uuid, text) from public, anon, authenticated;
grant execute on function private.operator_grant_check(uuid, text) to service_role;

-- Grants p_role to p_user, made by operator p_by (the approving admin), effective p_now: the
-- checks of private.operator_grant_check first. Returns the new row.
create function private.operator_grant_to(p_user uuid, p_role text, p_by uuid, p_now timestamptz default now())
returns private.operators
language plpgsql
set search_path = ''
as $$
declare
  r private.operators;
begin
  perform private.operator_grant_check(p_user, p_role);
  insert into private.operators (user_id, role, granted_at, granted_by)
  values (p_user, p_role, p_now, p_by::text)
  returning * into r;
  return r;
end
$$;
comment on function private.operator_grant_to(uuid, text, uuid, timestamptz) is
  'admin-role-grant, approved: gives p_user the role (granted_by the approving operator, granted_at now) after the '
  'checks of private.operator_grant_check.';
revoke execute on function private.operator_grant_to(uuid, text, uuid, timestamptz) from public, anon, authenticated;
grant execute on function private.operator_grant_to(uuid, text, uuid, timestamptz) to service_role;

-- Takes p_role from p_user for operator p_by (admin-role-revoke), recording role.revoke with
-- p_reason and the grant it ended: 404 user_not_found, 409 operator_role_not_held, 409 last_admin
-- (the only admin's admin role), 404 operator_not_found (p_by no longer an admin). For the admin
-- role, every admin row is locked first, in one order, so two revokes of the last two admins at
-- once cannot both pass, and the revoker's own row is among them (an admin may give the role up
-- while another holds it). The deleted row waits for an action of that operator in flight (its
-- share lock, private.operator_record). Returns the ended grant.
create function private.operator_revoke_from(p_user uuid, p_role text, p_by uuid, p_reason text)
returns private.operators
language plpgsql
set search_path = ''
as $$
declare
  r private.operators;
  v_admins integer;
begin
  if p_role is null or p_role not in ('support', 'finance', 'disputes', 'admin') then
    perform private.refuse(422, 'operator_argument_invalid', '{"field": "role"}');
  end if;
  if p_role = 'admin' then
    select pg_catalog.count(*) into v_admins
      from (select 1 from private.operators o where o.role = 'admin' order by o.user_id for update) x;
  end if;
  if not exists (select 1 from private.users u where u.id = p_user) then
    perform private.refuse(404, 'user_not_found');
  end if;
  select * into r from private.operators o where o.user_id = p_user and o.role = p_role for update;
  if r.user_id is null then
    perform private.refuse(409, 'operator_role_not_held', pg_catalog.jsonb_build_object('role', p_role));
  end if;
  if p_role = 'admin' and v_admins <= 1 then
    perform private.refuse(409, 'last_admin');
  end if;
  perform private.operator_record(p_by, array['admin'], 'role.revoke', 'user', p_user, p_reason,
    pg_catalog.jsonb_build_object('role', p_role, 'granted_at', r.granted_at, 'granted_by', r.granted_by));
  delete from private.operators o where o.user_id = p_user and o.role = p_role;
  return r;
end
$$;
comment on function private.operator_revoke_from(uuid, text, uuid, text) is
  'admin-role-revoke: takes the role from the user and records role.revoke for p_by (409 operator_role_not_held when '
  'not held, 409 last_admin for the only admin); returns the grant it ended.';
revoke execute on function private.operator_revoke_from(uuid, text, uuid, text) from public, anon, authenticated;
grant execute on function private.operator_revoke_from(uuid, text, uuid, text) to service_role;
