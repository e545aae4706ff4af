-- =============================================================================================
-- Operators (docs/operators.md): the people who run the service, each with one or more roles
-- (support, finance, disputes, admin) in private.operators, and their second factor (TOTP,
-- RFC 6238) in private.operator_factors with the passes it gives in private.operator_passes.
--
-- An operator is at KYC tier 3 or more with a NIN and a BVN bound to their account
-- (private.identity_bindings), so two operators are two people: a grant below that is refused.
-- The first admin is granted by `npm run operator:grant -- <phone> <role>` (scripts/operator.ts,
-- private.operator_grant), never through the API; it replaces `npm run admin:grant`.
--
-- Today's admins (private.admins) become operators with the roles disputes and admin, keeping
-- when and by whom they were granted; private.admins and its grant functions are dropped.
-- private.is_admin and private.admin_record, which the dispute endpoints call, now read the
-- disputes role.
--
-- A pass of the second factor belongs to one session and one line of its refresh tokens: each
-- refresh token now carries a lineage, kept by a rotation and new for the sibling that the grace
-- window of private.rotate_refresh_token issues, and access tokens carry it as a claim. A pass
-- made in one tab is therefore not shared with a sibling born of a reused refresh token.
-- =============================================================================================

-- =============================================================================================
-- Roles
-- =============================================================================================

create table private.operators (
  user_id uuid not null references private.users (id) on delete cascade,
  role text not null check (role in ('support', 'finance', 'disputes', 'admin')),
  -- when the grant took effect: a role's tenure counts from here
  granted_at timestamptz not null default now(),
  -- who made the grant: the OS user running scripts/operator.ts, or later an operator's id
  granted_by text not null check (char_length(granted_by) between 1 and 200),
  primary key (user_id, role)
);
comment on table private.operators is
  'Who runs the service: one row per operator and role (support, finance, disputes, admin). Granted and revoked by '
  'scripts/operator.ts (private.operator_grant, private.operator_revoke); only service_role reaches it.';
comment on column private.operators.granted_at is 'When the grant took effect; the role''s tenure counts from here.';
alter table private.operators enable row level security;
create policy "Service role manages operators" on private.operators
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.operators to service_role;

-- today's admins: disputes (what admin-dispute-* needed) and admin (who grants roles)
insert into private.operators (user_id, role, granted_at, granted_by)
select a.user_id, r.role, a.granted_at, a.granted_by
  from private.admins a
 cross join (values ('disputes'), ('admin')) as r (role)
on conflict do nothing;

drop function private.admin_grant(text, text);
drop function private.admin_revoke(text, text);
drop function private.admin_account(text);
drop table private.admins;

-- =============================================================================================
-- Who is an operator, and the dispute endpoints' checks
-- =============================================================================================

-- The roles p_user holds now (empty: not an operator).
create function private.operator_roles(p_user uuid)
returns text[]
language sql
stable
set search_path = ''
as $$
  select coalesce(pg_catalog.array_agg(o.role order by o.role), '{}'::text[])
    from private.operators o where o.user_id = p_user
$$;
comment on function private.operator_roles(uuid) is 'The roles the user holds now, sorted; empty for a non-operator.';
revoke execute on function private.operator_roles(uuid) from public, anon, authenticated;
grant execute on function private.operator_roles(uuid) to service_role;

-- is_admin keeps its name for the dispute code that asks it (dispute-get lets an admin read any
-- dispute): now whether the user holds the disputes role.
create or replace function private.is_admin(p_user uuid)
returns boolean
language sql
stable
set search_path = ''
as $$
  select exists (select 1 from private.operators o where o.user_id = p_user and o.role = 'disputes')
$$;
comment on function private.is_admin(uuid) is
  'Whether the user holds the disputes role now (private.operators); dispute-get and the admin-dispute-* endpoints ask it.';

-- The dispute actions' record: refuses (ES404) a user without the disputes role, else appends the
-- audit row. The operator's disputes row is share-locked until the action's transaction ends, so
-- a revoke running at the same moment waits for it.
create or replace function private.admin_record(
  p_admin uuid, p_action text, p_target_type text, p_target uuid, p_details jsonb
)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  v_id bigint;
begin
  perform 1 from private.operators o where o.user_id = p_admin and o.role = 'disputes' for share;
  if not found then
    perform private.refuse(404, 'operator_not_found');
  end if;
  insert into private.admin_audit (admin_id, action, target_type, target_id, details)
  values (p_admin, p_action, p_target_type, p_target, coalesce(p_details, '{}'::jsonb))
  returning id into v_id;
  return v_id;
end
$$;
comment on function private.admin_record(uuid, text, text, uuid, jsonb) is
  'Appends a dispute action to private.admin_audit, in the caller''s transaction; ES404 when p_admin does not hold the '
  'disputes role (share-locks that role''s row, so a concurrent revoke waits). Returns the audit row id.';

-- =============================================================================================
-- Granting and revoking (scripts/operator.ts)
-- =============================================================================================

-- Makes the account with phone p_phone (E.164) an operator with p_role; p_by says who ran the
-- script. Refuses: ES422 a malformed phone, role or p_by; ES404 no account has the phone; ES409
-- the account is below KYC tier 3 or has no NIN or no BVN bound to it (the message names which).
-- Idempotent: true when it granted now (recorded as operator.grant), false when the account
-- held the role already (nothing written).
create function private.operator_grant(p_phone text, p_role text, p_by text)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  v_user uuid;
  v_tier smallint;
  v_missing text[];
begin
  if p_phone is null or p_phone !~ '^\+234[0-9]{10}$' then
    perform private.refuse(422, 'operator_argument_invalid', '{"field": "phone"}');
  end if;
  if p_role is null or p_role not in ('support', 'finance', 'disputes', 'admin') then
    perform private.refuse(422, 'operator_argument_invalid', '{"field": "role"}');
  end if;
  if p_by is null or pg_catalog.char_length(p_by) not between 1 and 200 then
    perform private.refuse(422, 'operator_argument_invalid', '{"field": "granted_by"}');
  end if;
  -- the account's row is locked: a concurrent grant of another role waits
  select u.id, u.kyc_tier into v_user, v_tier from private.users u where u.phone = p_phone for update;
  if v_user is null then
    perform private.refuse(404, 'user_not_found');
  end if;
  if v_tier < 3 then
    perform private.refuse(409, 'operator_tier_required', pg_catalog.jsonb_build_object('tier', v_tier));
  end if;
  select pg_catalog.array_agg(k order by k) into v_missing
    from unnest(array['nin', 'bvn']) as k
   where not exists (select 1 from private.identity_bindings b where b.user_id = v_user and b.kind = k);
  if v_missing is not null then
    perform private.refuse(409, 'operator_identity_unbound', pg_catalog.jsonb_build_object('missing', v_missing));
  end if;
  insert into private.operators (user_id, role, granted_by) values (v_user, p_role, p_by)
  on conflict (user_id, role) do nothing;
  if not found then
    return false;
  end if;
  insert into private.admin_audit (admin_id, action, target_type, target_id, details)
  values (v_user, 'operator.grant', 'user', v_user, pg_catalog.jsonb_build_object('role', p_role, 'by', p_by));
  return true;
end
$$;
comment on function private.operator_grant(text, text, text) is
  'npm run operator:grant: gives the account with this E.164 phone an operator role, at KYC tier 3 or more with a NIN '
  'and a BVN bound to it (ES409 otherwise); records operator.grant. Idempotent: false when the role was held already.';
revoke execute on function private.operator_grant(text, text, text) from public, anon, authenticated;
grant execute on function private.operator_grant(text, text, text) to service_role;

-- Takes p_role from the account with phone p_phone. Idempotent: true when it revoked now
-- (recorded as operator.revoke with the grant it ended), false when the role was not held.
create function private.operator_revoke(p_phone text, p_role text, p_by text)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  v_user uuid;
  v_row private.operators;
begin
  if p_phone is null or p_phone !~ '^\+234[0-9]{10}$' then
    perform private.refuse(422, 'operator_argument_invalid', '{"field": "phone"}');
  end if;
  if p_role is null or p_role not in ('support', 'finance', 'disputes', 'admin') then
    perform private.refuse(422, 'operator_argument_invalid', '{"field": "role"}');
  end if;
  if p_by is null or pg_catalog.char_length(p_by) not between 1 and 200 then
    perform private.refuse(422, 'operator_argument_invalid', '{"field": "revoked_by"}');
  end if;
  select u.id into v_user from private.users u where u.phone = p_phone;
  if v_user is null then
    perform private.refuse(404, 'user_not_found');
  end if;
  delete from private.operators o where o.user_id = v_user and o.role = p_role returning o.* into v_row;
  if not found then
    return false;
  end if;
  insert into private.admin_audit (admin_id, action, target_type, target_id, details)
  values (v_user, 'operator.revoke', 'user', v_user, pg_catalog.jsonb_build_object(
    'role', p_role, 'by', p_by, 'granted_at', v_row.granted_at, 'granted_by', v_row.granted_by));
  return true;
end
$$;
comment on function private.operator_revoke(text, text, text) is
  'npm run operator:revoke: takes an operator role from the account with this E.164 phone and records operator.revoke. '
  'Idempotent: false, and nothing written, when the role was not held.';
revoke execute on function private.operator_revoke(text, text, text) from public, anon, authenticated;
grant execute on function private.operator_revoke(text, text, text) to service_role;

-- =============================================================================================
-- Refresh-token lineages
-- =============================================================================================

-- null: the session's first line, whose lineage is the session's id
alter table private.refresh_tokens add column lineage uuid;
comment on column private.refresh_tokens.lineage is
  'The line of rotations this token belongs to: kept by a rotation, new for a grace-window sibling; null is the '
  'session''s first line (its lineage is the session id). Access tokens carry it; a second-factor pass is bound to it.';

drop function private.rotate_refresh_token(text, text, integer, integer);

-- Rotates a refresh token, as before (20261121000200_auth.sql), and answers the new token's
-- lineage: a rotation keeps the presented token's, the grace-window sibling gets a new one.
create function private.rotate_refresh_token(
  p_token_hash text, p_new_hash text, p_grace_seconds integer, p_session_ttl_seconds integer
) returns table (outcome text, user_id uuid, session_id uuid, phone text, lineage uuid)
language plpgsql
set search_path = ''
as $$
declare
  t private.refresh_tokens%rowtype;
  s private.sessions%rowtype;
  successor private.refresh_tokens%rowtype;
  v_phone text;
  v_lineage uuid;
begin
  select * into t from private.refresh_tokens where token_hash = p_token_hash;
  if not found then
    return query select 'invalid'::text, null::uuid, null::uuid, null::text, null::uuid;
    return;
  end if;
  -- lock the session: every rotation of one session is serialised
  select * into s from private.sessions where id = t.session_id for update;
  select * into t from private.refresh_tokens where token_hash = p_token_hash;
  if s.revoked_at is not null or s.expires_at <= now() then
    return query select 'invalid'::text, null::uuid, null::uuid, null::text, null::uuid;
    return;
  end if;
  select u.phone into v_phone from private.users u where u.id = s.user_id;

  if t.rotated_at is null then
    update private.refresh_tokens set rotated_at = now(), replaced_by = p_new_hash where token_hash = t.token_hash;
    insert into private.refresh_tokens (token_hash, session_id, lineage) values (p_new_hash, s.id, t.lineage);
    -- a refresh token lives 30 days from its issue, so the session lasts as long as its newest token
    update private.sessions
       set refreshed_at = now(), expires_at = now() + pg_catalog.make_interval(secs => p_session_ttl_seconds)
     where id = s.id;
    return query select 'ok'::text, s.user_id, s.id, v_phone, coalesce(t.lineage, s.id);
    return;
  end if;

  select * into successor from private.refresh_tokens where token_hash = t.replaced_by;
  if t.grace_used_at is null
     and t.rotated_at > now() - pg_catalog.make_interval(secs => p_grace_seconds)
     and successor.rotated_at is null then
    -- The one sibling of the successor: both stay live (two tabs that refreshed at once). The
    -- sibling starts a line of its own, so a second-factor pass of the successor's line is not its.
    update private.refresh_tokens set grace_used_at = now() where token_hash = t.token_hash;
    v_lineage := gen_random_uuid();
    insert into private.refresh_tokens (token_hash, session_id, lineage) values (p_new_hash, s.id, v_lineage);
    update private.sessions
       set refreshed_at = now(), expires_at = now() + pg_catalog.make_interval(secs => p_session_ttl_seconds)
     where id = s.id;
    return query select 'grace'::text, s.user_id, s.id, v_phone, v_lineage;
    return;
  end if;

  perform private.end_session(s.id, 'refresh_token_reuse');
  return query select 'reuse'::text, s.user_id, s.id, v_phone, null::uuid;
end
$$;
comment on function private.rotate_refresh_token(text, text, integer, integer) is
  'Rotates a refresh token: ok, grace (one sibling inside the grace window, on a lineage of its own), reuse (session '
  'revoked) or invalid; answers the new token''s lineage.';
revoke execute on function private.rotate_refresh_token(text, text, integer, integer) from public, anon, authenticated;
grant execute on function private.rotate_refresh_token(text, text, integer, integer) to service_role;

-- =============================================================================================
-- The second factor
-- =============================================================================================

create table private.operator_factors (
  user_id uuid primary key references private.users (id) on delete cascade,
  -- the TOTP secret, AES-256-GCM under TOTP_ENCRYPTION_KEY (`v1:<iv>:<ciphertext>`); null after a reset
  secret_enc text,
  -- none: no factor (never enrolled, or reset); pending: enrolled, not yet verified; active
  status text not null default 'none' check (status in ('none', 'pending', 'active')),
  enrolled_at timestamptz,
  activated_at timestamptz,
  -- the last time step whose code was accepted: no code of that step or an earlier one passes again
  last_step bigint,
  failures integer not null default 0 check (failures >= 0),
  locked_until timestamptz,
  -- when the factor was last reset: enrolment is open for 24 hours from it (or from a grant)
  reset_at timestamptz,
  check ((status = 'none') = (secret_enc is null))
);
comment on table private.operator_factors is
  'Each operator''s TOTP factor (RFC 6238): the secret encrypted under TOTP_ENCRYPTION_KEY, its state, the last '
  'accepted time step (no code reused) and the lockout after five wrong codes.';
alter table private.operator_factors enable row level security;
create policy "Service role manages operator factors" on private.operator_factors
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.operator_factors to service_role;

create table private.operator_passes (
  session_id uuid not null references private.sessions (id) on delete cascade,
  lineage uuid not null,
  user_id uuid not null references private.users (id) on delete cascade,
  passed_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (session_id, lineage)
);
comment on table private.operator_passes is
  'A second-factor pass: the session and refresh-token lineage that passed admin-totp-verify, until expires_at (12 hours).';
create index operator_passes_user_idx on private.operator_passes (user_id);
alter table private.operator_passes enable row level security;
create policy "Service role manages operator passes" on private.operator_passes
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.operator_passes to service_role;

-- The operator auth mode's one question, asked on every request of an operator endpoint: the
-- caller's roles (empty: not an operator), whether this session and lineage hold a live pass,
-- and whether the session itself is live.
create function private.operator_gate(p_user uuid, p_session uuid, p_lineage uuid)
returns table (roles text[], passed boolean, live boolean)
language sql
stable
set search_path = ''
as $$
  select private.operator_roles(p_user),
         exists (select 1 from private.operator_passes p
                  where p.session_id = p_session and p.lineage = p_lineage and p.user_id = p_user
                    and p.expires_at > now()),
         exists (select 1 from private.sessions s
                  where s.id = p_session and s.user_id = p_user and s.revoked_at is null and s.expires_at > now())
$$;
comment on function private.operator_gate(uuid, uuid, uuid) is
  'The operator auth mode''s check: the caller''s roles, whether this session and lineage hold a live second-factor '
  'pass, and whether the session is live.';
revoke execute on function private.operator_gate(uuid, uuid, uuid) from public, anon, authenticated;
grant execute on function private.operator_gate(uuid, uuid, uuid) to service_role;

-- admin-totp-enrol: stores a new pending secret for an operator with no active factor, within 24
-- hours of their latest grant or of the factor's reset. Outcomes: ok; active (a factor is active
-- already); closed (the window has passed; the factor must be reset).
create function private.operator_totp_enrol(p_user uuid, p_secret_enc text, p_now timestamptz default now())
returns text
language plpgsql
set search_path = ''
as $$
declare
  f private.operator_factors;
  v_opened timestamptz;
begin
  insert into private.operator_factors (user_id) values (p_user) on conflict (user_id) do nothing;
  select * into f from private.operator_factors where user_id = p_user for update;
  if f.status = 'active' then
    return 'active';
  end if;
  select pg_catalog.max(o.granted_at) into v_opened from private.operators o where o.user_id = p_user;
  v_opened := greatest(v_opened, f.reset_at);
  if v_opened is null or v_opened + interval '24 hours' <= p_now then
    return 'closed';
  end if;
  -- a pending secret never verified is replaced: only the newest one shown can activate the factor
  update private.operator_factors
     set secret_enc = p_secret_enc, status = 'pending', enrolled_at = p_now, activated_at = null,
         last_step = null, failures = 0, locked_until = null
   where user_id = p_user;
  return 'ok';
end
$$;
comment on function private.operator_totp_enrol(uuid, text, timestamptz) is
  'admin-totp-enrol: stores a pending TOTP secret (ok), unless a factor is active (active) or 24 hours have passed '
  'since the latest grant or reset (closed).';
revoke execute on function private.operator_totp_enrol(uuid, text, timestamptz) from public, anon, authenticated;
grant execute on function private.operator_totp_enrol(uuid, text, timestamptz) to service_role;

-- admin-totp-verify's record of one try, under the factor's row lock. p_step: the time step the
-- code matched, null when it matched none. A step after the last accepted one passes: the factor
-- becomes active, the failures are cleared and this session's lineage gets a pass of
-- p_pass_seconds. Anything else (no match, a step already used) is a failure; the fifth in a row
-- locks the factor for 15 minutes. Outcomes: ok (expires_at: the pass's end), invalid, locked
-- (wait: seconds left), none (no factor to verify).
create function private.operator_totp_try(
  p_user uuid, p_session uuid, p_lineage uuid, p_step bigint, p_pass_seconds integer,
  p_now timestamptz default now()
)
returns table (outcome text, wait integer, expires_at timestamptz)
language plpgsql
set search_path = ''
as $$
declare
  f private.operator_factors;
begin
  select * into f from private.operator_factors where user_id = p_user for update;
  if not found or f.status = 'none' then
    return query select 'none'::text, 0, null::timestamptz;
    return;
  end if;
  if f.locked_until is not null and f.locked_until > p_now then
    return query select 'locked'::text,
      greatest(1, pg_catalog.ceil(extract(epoch from f.locked_until - p_now))::integer), null::timestamptz;
    return;
  end if;
  if p_step is not null and (f.last_step is null or p_step > f.last_step) then
    update private.operator_factors
       set status = 'active', activated_at = coalesce(activated_at, p_now), last_step = p_step, failures = 0,
           locked_until = null
     where user_id = p_user;
    insert into private.operator_passes (session_id, lineage, user_id, passed_at, expires_at)
    values (p_session, p_lineage, p_user, p_now, p_now + pg_catalog.make_interval(secs => p_pass_seconds))
    on conflict (session_id, lineage) do update set passed_at = excluded.passed_at, expires_at = excluded.expires_at;
    return query select 'ok'::text, 0, p_now + pg_catalog.make_interval(secs => p_pass_seconds);
    return;
  end if;
  if f.failures + 1 >= 5 then
    update private.operator_factors
       set failures = 0, locked_until = p_now + interval '15 minutes'
     where user_id = p_user;
    return query select 'locked'::text, 900, null::timestamptz;
    return;
  end if;
  update private.operator_factors set failures = f.failures + 1 where user_id = p_user;
  return query select 'invalid'::text, 0, null::timestamptz;
end
$$;
comment on function private.operator_totp_try(uuid, uuid, uuid, bigint, integer, timestamptz) is
  'admin-totp-verify: records one try of a code (the step it matched, or null) under the factor''s lock: ok (a pass '
  'for the session''s lineage), invalid, locked (the fifth failure locks 15 minutes) or none.';
revoke execute on function private.operator_totp_try(uuid, uuid, uuid, bigint, integer, timestamptz)
  from public, anon, authenticated;
grant execute on function private.operator_totp_try(uuid, uuid, uuid, bigint, integer, timestamptz) to service_role;

-- A factor reset (for the four-eyes action to come, and the tests): the secret is forgotten,
-- every pass of the operator ends, and enrolment is open again for 24 hours.
create function private.operator_factor_reset(p_user uuid, p_now timestamptz default now())
returns void
language plpgsql
set search_path = ''
as $$
begin
  insert into private.operator_factors (user_id, reset_at) values (p_user, p_now)
  on conflict (user_id) do update
    set secret_enc = null, status = 'none', enrolled_at = null, activated_at = null, last_step = null,
        failures = 0, locked_until = null, reset_at = p_now;
  delete from private.operator_passes p where p.user_id = p_user;
end
$$;
comment on function private.operator_factor_reset(uuid, timestamptz) is
  'Forgets the operator''s TOTP factor and ends their passes; enrolment is open again for 24 hours.';
revoke execute on function private.operator_factor_reset(uuid, timestamptz) from public, anon, authenticated;
grant execute on function private.operator_factor_reset(uuid, timestamptz) to service_role;
