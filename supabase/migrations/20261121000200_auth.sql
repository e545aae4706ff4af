-- =============================================================================================
-- Auth: phone-first accounts and their credentials, sessions and refresh tokens, one-time codes
-- (OTPs) and the phones they verified. All private: only service_role reaches them, through the
-- functions below (shared/auth/flows.ts calls them). The flows are described in docs/auth.md.
-- =============================================================================================

-- =============================================================================================
-- Accounts, sessions, refresh tokens
-- =============================================================================================

create table private.users (
  id uuid primary key default gen_random_uuid(),
  phone text not null unique check (phone ~ '^\+234[0-9]{10}$'),
  password_hash text not null,
  password_changed_at timestamptz not null default now(),
  created_at timestamptz not null default now()
);
comment on table private.users is
  'A phone-first account: the phone (E.164, +234) and the password hash. Its public face is public.profiles.';
alter table private.users enable row level security;
create policy "Service role manages users" on private.users
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.users to service_role;

create table private.sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references private.users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  refreshed_at timestamptz,
  revoked_at timestamptz,
  revoked_reason text check (revoked_reason in ('logout', 'password_reset', 'refresh_token_reuse'))
);
comment on table private.sessions is
  'A login session; live until it expires or is revoked (logout, password reset, refresh-token reuse).';
create index sessions_user_id_idx on private.sessions (user_id) where revoked_at is null;
alter table private.sessions enable row level security;
create policy "Service role manages sessions" on private.sessions
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.sessions to service_role;

-- One row per refresh token ever issued, stored as a SHA-256 hash. A token is live until it is
-- rotated; rotated_at and replaced_by tell reuse detection what happened to it, grace_used_at
-- whether its one reuse inside the grace window was spent.
create table private.refresh_tokens (
  token_hash text primary key,
  session_id uuid not null references private.sessions (id) on delete cascade,
  created_at timestamptz not null default now(),
  rotated_at timestamptz,
  replaced_by text,
  grace_used_at timestamptz
);
comment on table private.refresh_tokens is
  'Every refresh token ever issued to a session, as a SHA-256 hash, with what became of it (rotation, grace reuse).';
comment on column private.refresh_tokens.grace_used_at is
  'Set when this rotated token''s single grace-window reuse was spent; a further reuse revokes the session.';
create index refresh_tokens_session_id_idx on private.refresh_tokens (session_id);
alter table private.refresh_tokens enable row level security;
create policy "Service role manages refresh tokens" on private.refresh_tokens
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.refresh_tokens to service_role;

-- =============================================================================================
-- One-time codes and verified phones
-- =============================================================================================

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
comment on table private.otps is
  'One-time codes sent by SMS, as hashes, per phone and context (signup, login, reset).';
create index otps_phone_context_idx on private.otps (phone, context, created_at desc);
alter table private.otps enable row level security;
create policy "Service role manages otps" on private.otps
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.otps to service_role;

-- A phone proven through auth-verify (context signup) may sign up until expires_at. A sign-up in
-- progress holds its verified phone for a short while (claimed_until), so a flood of sign-ups for
-- one verified phone costs one password hash at a time, not one per request.
create table private.phone_verifications (
  phone text primary key check (phone ~ '^\+234[0-9]{10}$'),
  verified_at timestamptz not null default now(),
  expires_at timestamptz not null,
  claimed_until timestamptz
);
comment on table private.phone_verifications is
  'Phones proven by an OTP for sign-up, usable until expires_at; consumed by private.create_account.';
comment on column private.phone_verifications.claimed_until is
  'A sign-up holding this verification (hashing its password) until then.';
alter table private.phone_verifications enable row level security;
create policy "Service role manages phone verifications" on private.phone_verifications
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.phone_verifications to service_role;

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
comment on function private.otp_record_attempt(uuid, boolean, integer) is
  'Checking an OTP (auth-verify, login, password reset): records one attempt (ok, wrong or invalid) under a row lock, '
  'burning the code on success or at the limit.';
revoke execute on function private.otp_record_attempt(uuid, boolean, integer) from public, anon, authenticated;
grant execute on function private.otp_record_attempt(uuid, boolean, integer) to service_role;

-- Before auth-signup spends a password hash: 'claimed' when the phone has a live verification
-- that no other sign-up holds (it is now held for p_hold_seconds), 'busy' when another sign-up
-- holds it, 'unverified' otherwise. private.create_account consumes the verification.
create function private.claim_phone_verification(p_phone text, p_hold_seconds integer)
returns text
language plpgsql
set search_path = ''
as $$
declare
  v private.phone_verifications%rowtype;
begin
  select * into v from private.phone_verifications
   where phone = p_phone and expires_at > now()
   for update;
  if not found then
    return 'unverified';
  end if;
  if v.claimed_until is not null and v.claimed_until > now() then
    return 'busy';
  end if;
  update private.phone_verifications
     set claimed_until = now() + pg_catalog.make_interval(secs => p_hold_seconds)
   where phone = p_phone;
  return 'claimed';
end
$$;
comment on function private.claim_phone_verification(text, integer) is
  'Holds a live phone verification for one sign-up before its password is hashed: claimed, busy or unverified.';
revoke execute on function private.claim_phone_verification(text, integer) from public, anon, authenticated;
grant execute on function private.claim_phone_verification(text, integer) to service_role;

-- =============================================================================================
-- Sign-up, login, refresh, logout, password reset
-- =============================================================================================

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
comment on function private.end_session(uuid, text) is
  'Ends a session (logout, password reset, refresh-token reuse) and deletes its refresh-token hashes; false when it '
  'had already ended.';
revoke execute on function private.end_session(uuid, text) from public, anon, authenticated;
grant execute on function private.end_session(uuid, text) to service_role;

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
comment on function private.create_account(text, text, text, text, text, integer) is
  'auth-signup: creates the user, profile, first session and refresh token, consuming the phone verification; no row '
  'when the phone is not verified.';
revoke execute on function private.create_account(text, text, text, text, text, integer)
  from public, anon, authenticated;
grant execute on function private.create_account(text, text, text, text, text, integer) to service_role;

-- Rotates a refresh token. Outcomes:
--   ok       the token was live: it is now rotated and p_new_hash is the session's live token
--            (the session's expiry moves to p_session_ttl_seconds from now, the new token's life)
--   grace    the token was rotated less than p_grace_seconds ago, its successor has not been used
--            yet and this is its first reuse (two tabs refreshing at once): one sibling token is
--            issued beside the successor
--   reuse    any other presentation of a rotated token (a second reuse inside the window, or any
--            reuse after it): the whole session is revoked
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
  if t.grace_used_at is null
     and t.rotated_at > now() - pg_catalog.make_interval(secs => p_grace_seconds)
     and successor.rotated_at is null then
    -- The one sibling of the successor: both stay live, so two tabs that refreshed with the same
    -- token at once each keep a working token (retiring the successor would log the first tab
    -- out). The grace is spent: a third presentation is treated as theft.
    update private.refresh_tokens set grace_used_at = now() where token_hash = t.token_hash;
    insert into private.refresh_tokens (token_hash, session_id) values (p_new_hash, s.id);
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
comment on function private.rotate_refresh_token(text, text, integer, integer) is
  'Rotates a refresh token: ok, grace (one sibling inside the grace window), reuse (session revoked) or invalid.';
revoke execute on function private.rotate_refresh_token(text, text, integer, integer) from public, anon, authenticated;
grant execute on function private.rotate_refresh_token(text, text, integer, integer) to service_role;

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
comment on function private.create_session(uuid, text, integer) is
  'Login: a new session for an existing user with its first refresh token; returns the session id.';
revoke execute on function private.create_session(uuid, text, integer) from public, anon, authenticated;
grant execute on function private.create_session(uuid, text, integer) to service_role;

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
comment on function private.reset_password(text, text) is
  'Password reset: sets the new password hash and ends every live session of the user; null when no account has that '
  'phone.';
revoke execute on function private.reset_password(text, text) from public, anon, authenticated;
grant execute on function private.reset_password(text, text) to service_role;
