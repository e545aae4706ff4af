-- =============================================================================================
-- Request path: the live-session check inside a request's first statement (docs/performance.md)
--
-- A bearer request's access token names its session; logout, a password reset and refresh-token
-- reuse end the session at once. The check used to be a statement of its own before anything
-- else; it now rides in the statement that opens the request's first transaction, next to the
-- role and the claims, and aborts that transaction when the session has ended.
-- =============================================================================================

create or replace function private.session_assert(p_session_id uuid, p_user_id uuid)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if not exists (
    select 1 from private.sessions
     where id = p_session_id and user_id = p_user_id
       and revoked_at is null and expires_at > now()
  ) then
    raise exception 'Session has ended, log in again' using errcode = 'ES401';
  end if;
  return true;
end
$$;
comment on function private.session_assert(uuid, uuid) is
  'True when the session is live for this user; otherwise ES401, which aborts the transaction whose first '
  'statement asked (shared/db.ts). Runs as its owner: the statement also switches the role to authenticated.';
revoke all on function private.session_assert(uuid, uuid) from public, anon, authenticated;
grant execute on function private.session_assert(uuid, uuid) to service_role;
