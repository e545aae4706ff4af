-- =============================================================================================
-- Admins (issue 11, DESIGN.md §8.3): who may act as an admin, and the append-only record of what
-- every admin did. Private: only service_role reaches these tables, through the functions below.
--
-- An admin is a user listed in private.admins. Rights are granted and revoked only by the
-- operator's script (`npm run admin:grant -- <phone>`, `npm run admin:revoke -- <phone>`:
-- scripts/admin.ts, which calls private.admin_grant / private.admin_revoke straight in the
-- database), never through the API. The endpoint builder (shared/endpoint.ts, auth 'admin')
-- asks private.is_admin on every request, before it reads the body, and answers anyone else as
-- if the function did not exist. docs/security.md, "Admins".
--
-- Every admin action writes one row of private.admin_audit through private.admin_record, in the
-- same transaction as the action, so an action without its record (or a record without its
-- action) cannot commit. The audit is append-only, for its owner too (triggers), and
-- service_role may only read and insert it.
-- =============================================================================================

-- =============================================================================================
-- Admins
-- =============================================================================================

create table private.admins (
  user_id uuid primary key references private.users (id) on delete cascade,
  granted_at timestamptz not null default now(),
  -- who ran the grant: the operator's OS user as the script saw it, or 'script'
  granted_by text not null check (char_length(granted_by) between 1 and 200)
);
comment on table private.admins is
  'The users who may call admin endpoints, granted and revoked only by scripts/admin.ts (private.admin_grant, '
  'private.admin_revoke), never through the API.';
comment on column private.admins.granted_by is
  'Who ran the grant: the operator''s OS user as scripts/admin.ts saw it, or ''script''.';
alter table private.admins enable row level security;
create policy "Service role manages admins" on private.admins
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.admins to service_role;

-- =============================================================================================
-- The audit: append-only
-- =============================================================================================

create table private.admin_audit (
  id bigint generated always as identity primary key,
  -- no foreign key: the record outlives the account (a deleted user's rows stay, and a cascade
  -- would be refused by the triggers below anyway)
  admin_id uuid not null,
  -- '<area>.<verb>', e.g. 'admin.grant', 'admin.revoke', 'dispute.resolve'
  action text not null check (action ~ '^[a-z][a-z_]*(\.[a-z][a-z_]*)+$' and char_length(action) <= 100),
  target_type text check (target_type ~ '^[a-z][a-z_]*$' and char_length(target_type) <= 50),
  target_id uuid,
  details jsonb not null default '{}'::jsonb check (jsonb_typeof(details) = 'object'),
  created_at timestamptz not null default now()
);
comment on table private.admin_audit is
  'Every admin action (and every grant and revoke of admin rights), one row each, written by private.admin_record '
  'in the transaction of the action. Append-only: no UPDATE, DELETE or TRUNCATE, even for its owner.';
comment on column private.admin_audit.admin_id is
  'The admin who acted; for admin.grant and admin.revoke, the user whose rights changed. No foreign key: the '
  'record outlives the account.';
comment on column private.admin_audit.details is
  'What the action needs to be understood later (a JSON object): e.g. the outcome and amounts of a resolution.';
alter table private.admin_audit enable row level security;
create policy "Service role manages the admin audit" on private.admin_audit
  for all to service_role using (true) with check (true);
-- append-only, for service_role too: it reads and inserts, never updates or deletes
grant select, insert on private.admin_audit to service_role;

-- the ledger's trigger function (20261121000800_ledger.sql), now guarding the audit as well
comment on function private.forbid_change() is
  'Trigger: refuses UPDATE, DELETE and TRUNCATE on the append-only tables (ledger transfers and entries, the admin '
  'audit), even for their owner (42501).';

create trigger admin_audit_immutable before update or delete on private.admin_audit
  for each row execute function private.forbid_change();
create trigger admin_audit_no_truncate before truncate on private.admin_audit
  for each statement execute function private.forbid_change();

-- =============================================================================================
-- Checking and recording
-- =============================================================================================

-- Whether p_user is an admin now. The endpoint builder asks it on every request of an admin
-- endpoint (auth 'admin'), so a revoke takes effect at the next request.
create function private.is_admin(p_user uuid)
returns boolean
language sql
stable
set search_path = ''
as $$
  select exists (select 1 from private.admins a where a.user_id = p_user)
$$;
comment on function private.is_admin(uuid) is
  'Whether the user is an admin now (listed in private.admins); asked by every admin endpoint before anything else.';
revoke execute on function private.is_admin(uuid) from public, anon, authenticated;
grant execute on function private.is_admin(uuid) to service_role;

-- The one way an admin action is recorded: refuses (ES404, as admin endpoints answer a non-admin)
-- when p_admin is not an admin, else appends the audit row and returns its id. Call it in the
-- transaction of the action: the admin's row is share-locked until that transaction ends, so a
-- revoke running at the same moment waits for it, and an action recorded after a revoke committed
-- is refused.
create function private.admin_record(
  p_admin uuid, p_action text, p_target_type text, p_target uuid, p_details jsonb
)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  v_id bigint;
begin
  perform 1 from private.admins a where a.user_id = p_admin for share;
  if not found then
    raise exception 'not an admin' using errcode = 'ES404';
  end if;
  insert into private.admin_audit (admin_id, action, target_type, target_id, details)
  values (p_admin, p_action, p_target_type, p_target, coalesce(p_details, '{}'::jsonb))
  returning id into v_id;
  return v_id;
end
$$;
comment on function private.admin_record(uuid, text, text, uuid, jsonb) is
  'Appends an admin action to private.admin_audit, in the caller''s transaction; ES404 when p_admin is not an admin '
  '(share-locks the admin''s row, so a concurrent revoke waits). Returns the audit row id.';
revoke execute on function private.admin_record(uuid, text, text, uuid, jsonb) from public, anon, authenticated;
grant execute on function private.admin_record(uuid, text, text, uuid, jsonb) to service_role;

-- =============================================================================================
-- Granting and revoking (scripts/admin.ts only)
-- =============================================================================================

-- The account with phone p_phone (E.164), for the two functions below: ES422 for a phone that is
-- not E.164, ES404 when no account has it.
create function private.admin_account(p_phone text)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
declare
  v_user uuid;
begin
  if p_phone is null or p_phone !~ '^\+234[0-9]{10}$' then
    raise exception 'phone must be +234 followed by 10 digits' using errcode = 'ES422';
  end if;
  select u.id into v_user from private.users u where u.phone = p_phone;
  if v_user is null then
    raise exception 'no account has the phone %', p_phone using errcode = 'ES404';
  end if;
  return v_user;
end
$$;
comment on function private.admin_account(text) is
  'The user id of the account with this E.164 phone, for admin_grant and admin_revoke; ES422 for a malformed phone, '
  'ES404 when no account has it.';
revoke execute on function private.admin_account(text) from public, anon, authenticated;
grant execute on function private.admin_account(text) to service_role;

-- Makes the account with phone p_phone an admin; p_by says who ran the script (1-200 characters).
-- Idempotent: true when it granted the right now (and recorded 'admin.grant'), false when the
-- account was an admin already (nothing is written).
create function private.admin_grant(p_phone text, p_by text)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  v_user uuid := private.admin_account(p_phone);
begin
  if p_by is null or pg_catalog.char_length(p_by) not between 1 and 200 then
    raise exception 'granted_by must be 1 to 200 characters' using errcode = 'ES422';
  end if;
  insert into private.admins (user_id, granted_by) values (v_user, p_by)
  on conflict (user_id) do nothing;
  if not found then
    return false;
  end if;
  insert into private.admin_audit (admin_id, action, target_type, target_id, details)
  values (v_user, 'admin.grant', 'user', v_user, pg_catalog.jsonb_build_object('by', p_by));
  return true;
end
$$;
comment on function private.admin_grant(text, text) is
  'npm run admin:grant: makes the account with this E.164 phone an admin and records admin.grant (who ran it in '
  'details.by). Idempotent: false, and nothing written, when it was one already. ES404 when no account has the phone.';
revoke execute on function private.admin_grant(text, text) from public, anon, authenticated;
grant execute on function private.admin_grant(text, text) to service_role;

-- Takes the admin right from the account with phone p_phone. Idempotent: true when it revoked the
-- right now (and recorded 'admin.revoke', with when and by whom it had been granted), false when
-- the account was not an admin (nothing is written). An admin action in flight holds the admin's
-- row (admin_record) and is finished before the revoke.
create function private.admin_revoke(p_phone text, p_by text)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  v_user uuid := private.admin_account(p_phone);
  v_row private.admins;
begin
  if p_by is null or pg_catalog.char_length(p_by) not between 1 and 200 then
    raise exception 'revoked_by must be 1 to 200 characters' using errcode = 'ES422';
  end if;
  delete from private.admins a where a.user_id = v_user returning a.* into v_row;
  if not found then
    return false;
  end if;
  insert into private.admin_audit (admin_id, action, target_type, target_id, details)
  values (v_user, 'admin.revoke', 'user', v_user, pg_catalog.jsonb_build_object(
    'by', p_by, 'granted_at', v_row.granted_at, 'granted_by', v_row.granted_by));
  return true;
end
$$;
comment on function private.admin_revoke(text, text) is
  'npm run admin:revoke: takes the admin right from the account with this E.164 phone and records admin.revoke '
  '(who ran it, and the grant it ends, in details). Idempotent: false, and nothing written, when it was not an admin. '
  'ES404 when no account has the phone.';
revoke execute on function private.admin_revoke(text, text) from public, anon, authenticated;
grant execute on function private.admin_revoke(text, text) to service_role;
