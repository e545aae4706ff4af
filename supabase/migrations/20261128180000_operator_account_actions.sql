-- =============================================================================================
-- Operator account actions: ending a user's sessions, resending an SMS
-- (docs/operators.md#ending-a-users-sessions, docs/operators.md#resending-an-sms)
-- =============================================================================================
-- - private.user_sessions_end: admin-session-revoke ends every live session of a user (as a
--   password reset does), with the reason 'operator'; the next request with an access token of
--   one of them is 401 (its session is checked on every request), and their refresh tokens are gone.
-- - private.sms_resend: admin-sms-resend queues one message of private.sms_outbox again, to the
--   phone it was for (copied from the row, never given by the operator), as a new row that names
--   the first in resend_of. Refused for one-time codes and sign-up notices (the user asks for a
--   new code), for a message withheld by policy (no account, a daily cap), for a message more than
--   24 hours old, and after 3 resends of one message. The first row is locked, so concurrent
--   resends of one message count one after the other.
-- Both are for the service role; the endpoints write the audit row in the same transaction.

-- ---- sessions ended by an operator ------------------------------------------------------------

alter table private.sessions drop constraint sessions_revoked_reason_check;
alter table private.sessions add constraint sessions_revoked_reason_check
  check (revoked_reason in ('logout', 'password_reset', 'refresh_token_reuse', 'operator'));
comment on column private.sessions.revoked_reason is
  'Why the session ended: logout, password_reset, refresh_token_reuse, or operator (admin-session-revoke).';

create function private.user_sessions_end(p_user uuid)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  v_count integer;
begin
  if not exists (select 1 from private.users where id = p_user) then
    perform private.refuse(404, 'user_not_found', '{}'::jsonb);
  end if;
  select count(*)::integer into v_count
    from (select private.end_session(s.id, 'operator') as ended
            from private.sessions s
           where s.user_id = p_user and s.revoked_at is null and s.expires_at > pg_catalog.now()) x
   where x.ended;
  return v_count;
end
$$;
comment on function private.user_sessions_end(p_user uuid) is
  'admin-session-revoke: ends every live session of the user (reason operator) and deletes their refresh tokens; '
  'returns how many it ended; 404 user_not_found.';
revoke all on function private.user_sessions_end(p_user uuid) from public, anon, authenticated;
grant execute on function private.user_sessions_end(p_user uuid) to service_role;

-- ---- SMS resent by an operator ----------------------------------------------------------------

alter table private.sms_outbox add column resend_of bigint references private.sms_outbox (id);
comment on column private.sms_outbox.resend_of is
  'The message this row resends (admin-sms-resend), to the same phone; null for a first send.';
create index sms_outbox_resend_of_idx on private.sms_outbox (resend_of) where resend_of is not null;

create function private.sms_resend(p_sms bigint, p_now timestamptz default now())
returns table (sms_id bigint, resend_of bigint, kind text, resends integer)
language plpgsql
set search_path = ''
as $$
declare
  o private.sms_outbox;
  v_count integer;
  v_id bigint;
begin
  select * into o from private.sms_outbox s where s.id = p_sms;
  if not found then
    perform private.refuse(404, 'sms_not_found', '{}'::jsonb);
  end if;
  if o.resend_of is not null then
    -- a resend of a resend is a resend of the first message: one count for all of them
    select * into o from private.sms_outbox s where s.id = o.resend_of;
  end if;
  -- the first message's row, locked: resends of one message count one after the other
  perform 1 from private.sms_outbox s where s.id = o.id for update;
  if o.message ->> 'kind' in ('otp_code', 'account_exists') then
    perform private.refuse(409, 'sms_one_time_code', pg_catalog.jsonb_build_object('kind', o.message ->> 'kind'));
  end if;
  if o.withheld is not null then
    perform private.refuse(409, 'sms_withheld', pg_catalog.jsonb_build_object('withheld', o.withheld));
  end if;
  if o.created_at < p_now - interval '24 hours' then
    perform private.refuse(409, 'sms_too_old', pg_catalog.jsonb_build_object('hours', 24));
  end if;
  select count(*)::integer into v_count from private.sms_outbox s where s.resend_of = o.id;
  if v_count >= 3 then
    perform private.refuse(409, 'sms_resend_limit', pg_catalog.jsonb_build_object('resends', v_count));
  end if;
  -- the same phone and message; the text it was sent with when it has one (else rendered when sent)
  insert into private.sms_outbox (phone, message, body, sent_at, resend_of)
  values (o.phone, o.message, o.body, null, o.id)
  returning id into v_id;
  return query select v_id, o.id, o.message ->> 'kind', v_count + 1;
end
$$;
comment on function private.sms_resend(p_sms bigint, p_now timestamptz) is
  'admin-sms-resend: queues the message again to the phone it was for (a new row, resend_of the first); refuses '
  'sms_not_found, sms_one_time_code, sms_withheld, sms_too_old (over 24 hours) and sms_resend_limit (3 resends).';
revoke all on function private.sms_resend(p_sms bigint, p_now timestamptz) from public, anon, authenticated;
grant execute on function private.sms_resend(p_sms bigint, p_now timestamptz) to service_role;
