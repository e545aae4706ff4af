-- =============================================================================================
-- Hardening (issue 8): the SMS queue learns which messages are withheld and when a queued
-- message stops being worth sending; refresh tokens remember their one grace-window sibling.
-- =============================================================================================

-- ---------------------------------------------------------------------------------------------
-- SMS queue
-- ---------------------------------------------------------------------------------------------

-- withheld: why a message is recorded but never sent (null: it is to be sent). The same row is
--   written on both sides of a decision that must not show from outside (a login code for a phone
--   without an account), and for invites over a phone's daily cap.
-- expires_at: after this a queued message is pointless (a one-time code) and is not sent.
alter table private.sms_outbox
  add column withheld text,
  add column expires_at timestamptz;
comment on column private.sms_outbox.withheld is 'Why this message is never sent (null: it is to be sent): no_account, invite_daily_cap.';
comment on column private.sms_outbox.expires_at is 'A queued message not sent by then is dropped (one-time codes).';

drop index private.sms_outbox_unsent_idx;
create index sms_outbox_unsent_idx on private.sms_outbox (id) where sent_at is null and withheld is null;

-- ---------------------------------------------------------------------------------------------
-- Refresh tokens
-- ---------------------------------------------------------------------------------------------

-- When a rotated token's one reuse inside the grace window was spent on a sibling session token.
alter table private.refresh_tokens add column grace_used_at timestamptz;
comment on column private.refresh_tokens.grace_used_at is 'Set when this rotated token''s single grace-window reuse was spent; a further reuse revokes the session.';

-- ---------------------------------------------------------------------------------------------
-- Sign-up: no password hash without a verified phone
-- ---------------------------------------------------------------------------------------------

-- A sign-up in progress holds its verified phone for a short while, so a flood of sign-ups for
-- one verified phone costs one password hash at a time, not one per request.
alter table private.phone_verifications add column claimed_until timestamptz;
comment on column private.phone_verifications.claimed_until is 'A sign-up holding this verification (hashing its password) until then.';

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

-- ---------------------------------------------------------------------------------------------
-- Refresh: at most one sibling in the grace window
-- ---------------------------------------------------------------------------------------------

-- Rotates a refresh token. Outcomes:
--   ok       the token was live: it is now rotated and p_new_hash is the session's live token
--            (the session's expiry moves to p_session_ttl_seconds from now, the new token's life)
--   grace    the token was rotated less than p_grace_seconds ago, its successor has not been used
--            yet and this is its first reuse (two tabs refreshing at once): one sibling token is
--            issued beside the successor
--   reuse    any other presentation of a rotated token (a second reuse inside the window, or any
--            reuse after it): the whole session is revoked
--   invalid  unknown token, or its session is revoked or expired
create or replace function private.rotate_refresh_token(
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
