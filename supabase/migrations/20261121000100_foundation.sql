-- Foundation: the private schema for internals, phone-first accounts, sessions, OTPs, the SMS
-- outbox, rate limits, profiles and next of kin. Row-level security on every table.

-- Internals live in a schema the API never exposes. Only service_role (our functions' server
-- side) may use it; the API roles cannot even see its objects.
create schema if not exists private;
revoke all on schema private from public;
grant usage on schema private to service_role;

-- Functions are executable only where granted one by one. Postgres lets PUBLIC execute every new
-- function by default, and a per-schema default cannot take that away, so the revoke is global
-- (for functions this role creates); each migration also ends by revoking EXECUTE from PUBLIC on
-- what it created, which holds even where the default was never changed.
alter default privileges revoke execute on functions from public;
alter default privileges in schema public revoke execute on functions from anon, authenticated;

-- ---------------------------------------------------------------------------------------------
-- Accounts and sessions (private)
-- ---------------------------------------------------------------------------------------------

create table private.users (
  id uuid primary key default gen_random_uuid(),
  phone text not null unique check (phone ~ '^\+234[0-9]{10}$'),
  password_hash text not null,
  password_changed_at timestamptz not null default now(),
  created_at timestamptz not null default now()
);
alter table private.users enable row level security;

create table private.sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references private.users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  refreshed_at timestamptz,
  revoked_at timestamptz,
  revoked_reason text check (revoked_reason in ('logout', 'password_reset', 'refresh_token_reuse'))
);
create index sessions_user_id_idx on private.sessions (user_id) where revoked_at is null;
alter table private.sessions enable row level security;

-- One row per refresh token ever issued, stored as a SHA-256 hash. A token is live until it is
-- rotated; rotated_at and replaced_by tell reuse detection what happened to it.
create table private.refresh_tokens (
  token_hash text primary key,
  session_id uuid not null references private.sessions (id) on delete cascade,
  created_at timestamptz not null default now(),
  rotated_at timestamptz,
  replaced_by text
);
create index refresh_tokens_session_id_idx on private.refresh_tokens (session_id);
alter table private.refresh_tokens enable row level security;

-- ---------------------------------------------------------------------------------------------
-- OTPs, verified phones, SMS outbox, rate limits (private)
-- ---------------------------------------------------------------------------------------------

create table private.otps (
  id uuid primary key default gen_random_uuid(),
  phone text not null check (phone ~ '^\+234[0-9]{10}$'),
  context text not null check (context in ('signup', 'login', 'reset')),
  code_hash text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  attempts integer not null default 0 check (attempts >= 0),
  consumed_at timestamptz
);
create index otps_phone_context_idx on private.otps (phone, context, created_at desc);
alter table private.otps enable row level security;

-- A phone proven through auth-verify (context signup) may sign up until expires_at.
create table private.phone_verifications (
  phone text primary key check (phone ~ '^\+234[0-9]{10}$'),
  verified_at timestamptz not null default now(),
  expires_at timestamptz not null
);
alter table private.phone_verifications enable row level security;

create table private.sms_outbox (
  id bigint generated always as identity primary key,
  phone text not null,
  body text not null,
  created_at timestamptz not null default now()
);
create index sms_outbox_phone_idx on private.sms_outbox (phone, id desc);
alter table private.sms_outbox enable row level security;

-- Sliding-window rate limits: one row per counted event.
create table private.rate_limit_events (
  id bigint generated always as identity primary key,
  key text not null,
  created_at timestamptz not null default now()
);
create index rate_limit_events_key_idx on private.rate_limit_events (key, created_at desc);
alter table private.rate_limit_events enable row level security;

-- Takes one unit from every rule, or none of them. p_rules is a JSON array of
-- {key, limit, window_seconds}. Returns 0 when allowed (and records the event under every key),
-- otherwise the number of seconds until every rule would allow it. Concurrent callers on the
-- same keys are serialised by transaction-scoped advisory locks taken in a fixed (sorted) order.
-- The clock is read after the locks are held (unless p_now is given): now() is the start of the
-- transaction, which for a caller that waited on the lock is earlier than the events the previous
-- holder just recorded, and would overstate the wait and backdate this caller's own event.
create function private.rate_limit_take(p_rules jsonb, p_now timestamptz default null)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  r record;
  wait_s integer := 0;
  oldest timestamptz;
  v_now timestamptz;
begin
  for r in
    select distinct rule ->> 'key' as key
    from jsonb_array_elements(p_rules) as rule
    order by 1
  loop
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('rate:' || r.key, 0));
  end loop;
  v_now := coalesce(p_now, pg_catalog.clock_timestamp());

  for r in
    select rule ->> 'key' as key,
           (rule ->> 'limit')::integer as lim,
           (rule ->> 'window_seconds')::integer as win
    from jsonb_array_elements(p_rules) as rule
  loop
    -- the lim-th most recent event inside the window decides when a slot frees up
    select e.created_at into oldest
    from private.rate_limit_events e
    where e.key = r.key and e.created_at > v_now - pg_catalog.make_interval(secs => r.win)
    order by e.created_at desc
    offset r.lim - 1 limit 1;
    if found then
      wait_s := greatest(wait_s, ceil(extract(epoch from (oldest + pg_catalog.make_interval(secs => r.win) - v_now)))::integer, 1);
    end if;
    -- events that have left the window no longer count for anything: drop them (the key is locked)
    delete from private.rate_limit_events e
     where e.key = r.key and e.created_at <= v_now - pg_catalog.make_interval(secs => r.win);
  end loop;

  if wait_s > 0 then
    return wait_s;
  end if;

  insert into private.rate_limit_events (key, created_at)
  select distinct rule ->> 'key', v_now from jsonb_array_elements(p_rules) as rule;
  return 0;
end
$$;

-- Checks a code against the newest live OTP for (phone, context) and burns it on success or
-- after too many failures, all under a row lock so concurrent guesses cannot exceed the limit.
-- The code hash is compared in TypeScript in constant time; this function only does the
-- bookkeeping: p_matches says whether the caller's comparison succeeded.
create function private.otp_record_attempt(p_otp_id uuid, p_matches boolean, p_max_attempts integer)
returns text
language plpgsql
set search_path = ''
as $$
declare
  o private.otps%rowtype;
begin
  select * into o from private.otps where id = p_otp_id for update;
  if not found or o.consumed_at is not null or o.expires_at <= now() or o.attempts >= p_max_attempts then
    return 'invalid';
  end if;
  if p_matches then
    update private.otps set consumed_at = now(), attempts = attempts + 1 where id = p_otp_id;
    return 'ok';
  end if;
  update private.otps
     set attempts = attempts + 1,
         consumed_at = case when attempts + 1 >= p_max_attempts then now() else null end
   where id = p_otp_id;
  return 'wrong';
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Profiles and next of kin (public, behind RLS)
-- ---------------------------------------------------------------------------------------------

create type public.marital_status as enum ('single', 'married', 'divorced', 'widowed');

create table public.profiles (
  id uuid primary key references private.users (id) on delete cascade,
  first_name text not null check (char_length(first_name) between 1 and 100),
  last_name text not null check (char_length(last_name) between 1 and 100),
  username text check (username ~ '^[a-zA-Z0-9_]{3,30}$'),
  phone_number text not null unique check (phone_number ~ '^\+234[0-9]{10}$'),
  address text check (char_length(address) <= 500),
  marital_status public.marital_status,
  bio text check (char_length(bio) <= 300),
  avatar_url text,
  avatar_storage_path text,
  avatar_status text check (avatar_status in ('active')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index profiles_username_key on public.profiles (lower(username));
alter table public.profiles enable row level security;

create table public.next_of_kin (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null unique references public.profiles (id) on delete cascade,
  first_name text not null check (char_length(first_name) between 1 and 100),
  last_name text not null check (char_length(last_name) between 1 and 100),
  phone text not null check (char_length(phone) between 1 and 20),
  address text not null check (char_length(address) between 1 and 500),
  relationship text not null check (char_length(relationship) between 1 and 100),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
alter table public.next_of_kin enable row level security;

-- What the API roles may touch at all; policies then narrow it to the caller's own rows.
revoke all on public.profiles, public.next_of_kin from anon, authenticated;
grant select on public.profiles to authenticated;
grant update (first_name, last_name, username, address, marital_status, bio, avatar_url,
              avatar_storage_path, avatar_status, updated_at)
  on public.profiles to authenticated;
grant select, insert, update on public.next_of_kin to authenticated;
grant select, insert, update, delete on public.profiles, public.next_of_kin to service_role;

create policy "Users can read their own profile"
  on public.profiles for select to authenticated
  using (id = (select auth.uid()));

create policy "Users can update their own profile"
  on public.profiles for update to authenticated
  using (id = (select auth.uid()))
  with check (id = (select auth.uid()));

create policy "Users can read their own next of kin"
  on public.next_of_kin for select to authenticated
  using (user_id = (select auth.uid()));

create policy "Users can add their own next of kin"
  on public.next_of_kin for insert to authenticated
  with check (user_id = (select auth.uid()));

create policy "Users can update their own next of kin"
  on public.next_of_kin for update to authenticated
  using (user_id = (select auth.uid()))
  with check (user_id = (select auth.uid()));

-- Ends a session: marks it revoked and deletes its refresh-token hashes (a dead session's tokens
-- have nothing left to protect). Returns false when it was already ended.
create function private.end_session(p_session_id uuid, p_reason text)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  update private.sessions set revoked_at = now(), revoked_reason = p_reason
   where id = p_session_id and revoked_at is null;
  if not found then
    return false;
  end if;
  delete from private.refresh_tokens where session_id = p_session_id;
  return true;
end
$$;

-- Creating an account is one transaction: credentials, profile, first session and its refresh
-- token, and the phone verification consumed. Returns null when the phone was not verified
-- (or the verification expired); raises unique_violation when the phone already has an account.
create function private.create_account(
  p_phone text, p_password_hash text, p_first_name text, p_last_name text,
  p_refresh_hash text, p_session_ttl_seconds integer
) returns table (user_id uuid, session_id uuid)
language plpgsql
set search_path = ''
as $$
declare
  v_user uuid;
  v_session uuid;
begin
  delete from private.phone_verifications
   where phone = p_phone and expires_at > now();
  if not found then
    return;
  end if;
  insert into private.users (phone, password_hash) values (p_phone, p_password_hash)
  returning id into v_user;
  insert into public.profiles (id, first_name, last_name, phone_number)
  values (v_user, p_first_name, p_last_name, p_phone);
  insert into private.sessions (user_id, expires_at)
  values (v_user, now() + pg_catalog.make_interval(secs => p_session_ttl_seconds))
  returning id into v_session;
  insert into private.refresh_tokens (token_hash, session_id) values (p_refresh_hash, v_session);
  return query select v_user, v_session;
end
$$;

-- Rotates a refresh token. Outcomes:
--   ok       the token was live: it is now rotated and p_new_hash is the session's live token
--            (the session's expiry moves to p_session_ttl_seconds from now, the new token's life)
--   grace    the token was rotated less than p_grace_seconds ago and its successor has not been
--            used yet (two tabs refreshing at once): a new token is issued beside the successor
--   reuse    an older rotated token came back: the whole session is revoked
--   invalid  unknown token, or its session is revoked or expired
create function private.rotate_refresh_token(
  p_token_hash text, p_new_hash text, p_grace_seconds integer, p_session_ttl_seconds integer
) returns table (outcome text, user_id uuid, session_id uuid, phone text)
language plpgsql
set search_path = ''
as $$
declare
  t private.refresh_tokens%rowtype;
  s private.sessions%rowtype;
  successor private.refresh_tokens%rowtype;
  v_phone text;
begin
  select * into t from private.refresh_tokens where token_hash = p_token_hash;
  if not found then
    return query select 'invalid'::text, null::uuid, null::uuid, null::text;
    return;
  end if;
  -- lock the session: every rotation of one session is serialised
  select * into s from private.sessions where id = t.session_id for update;
  select * into t from private.refresh_tokens where token_hash = p_token_hash;
  if s.revoked_at is not null or s.expires_at <= now() then
    return query select 'invalid'::text, null::uuid, null::uuid, null::text;
    return;
  end if;
  select u.phone into v_phone from private.users u where u.id = s.user_id;

  if t.rotated_at is null then
    update private.refresh_tokens set rotated_at = now(), replaced_by = p_new_hash where token_hash = t.token_hash;
    insert into private.refresh_tokens (token_hash, session_id) values (p_new_hash, s.id);
    -- a refresh token lives 30 days from its issue, so the session lasts as long as its newest token
    update private.sessions
       set refreshed_at = now(), expires_at = now() + pg_catalog.make_interval(secs => p_session_ttl_seconds)
     where id = s.id;
    return query select 'ok'::text, s.user_id, s.id, v_phone;
    return;
  end if;

  select * into successor from private.refresh_tokens where token_hash = t.replaced_by;
  if t.rotated_at > now() - pg_catalog.make_interval(secs => p_grace_seconds)
     and successor.rotated_at is null then
    -- A sibling of the successor: both stay live, so two tabs that refreshed with the same token
    -- at once each keep a working token (retiring the successor would log the first tab out).
    insert into private.refresh_tokens (token_hash, session_id) values (p_new_hash, s.id);
    -- a refresh token lives 30 days from its issue, so the session lasts as long as its newest token
    update private.sessions
       set refreshed_at = now(), expires_at = now() + pg_catalog.make_interval(secs => p_session_ttl_seconds)
     where id = s.id;
    return query select 'grace'::text, s.user_id, s.id, v_phone;
    return;
  end if;

  perform private.end_session(s.id, 'refresh_token_reuse');
  return query select 'reuse'::text, s.user_id, s.id, v_phone;
end
$$;

-- Creates a session for an existing user (login). Returns the session id.
create function private.create_session(p_user_id uuid, p_refresh_hash text, p_session_ttl_seconds integer)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_session uuid;
begin
  insert into private.sessions (user_id, expires_at)
  values (p_user_id, now() + pg_catalog.make_interval(secs => p_session_ttl_seconds))
  returning id into v_session;
  insert into private.refresh_tokens (token_hash, session_id) values (p_refresh_hash, v_session);
  return v_session;
end
$$;

-- Sets a new password and revokes every live session of the user, in one transaction.
create function private.reset_password(p_phone text, p_password_hash text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_user uuid;
begin
  update private.users set password_hash = p_password_hash, password_changed_at = now()
   where phone = p_phone
  returning id into v_user;
  if v_user is null then
    return null;
  end if;
  perform private.end_session(id, 'password_reset')
     from private.sessions where user_id = v_user and revoked_at is null;
  return v_user;
end
$$;


-- Internals are reached only by service_role (our functions' server side). RLS is on for every
-- table all the same, with the one policy that says so.
create policy "Service role manages users" on private.users for all to service_role using (true) with check (true);
create policy "Service role manages sessions" on private.sessions for all to service_role using (true) with check (true);
create policy "Service role manages refresh tokens" on private.refresh_tokens for all to service_role using (true) with check (true);
create policy "Service role manages otps" on private.otps for all to service_role using (true) with check (true);
create policy "Service role manages phone verifications" on private.phone_verifications for all to service_role using (true) with check (true);
create policy "Service role manages sms outbox" on private.sms_outbox for all to service_role using (true) with check (true);
create policy "Service role manages rate limit events" on private.rate_limit_events for all to service_role using (true) with check (true);

grant select, insert, update, delete on all tables in schema private to service_role;
grant execute on function
  private.rate_limit_take(jsonb, timestamptz),
  private.otp_record_attempt(uuid, boolean, integer),
  private.create_account(text, text, text, text, text, integer),
  private.rotate_refresh_token(text, text, integer, integer),
  private.create_session(uuid, text, integer),
  private.reset_password(text, text),
  private.end_session(uuid, text)
  to service_role;

revoke execute on all functions in schema private from public;
revoke execute on all functions in schema public from public, anon, authenticated;
