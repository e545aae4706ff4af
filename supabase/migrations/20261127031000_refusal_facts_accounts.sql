-- =============================================================================================
-- Refusals as facts: accounts, profiles, conversations and notifications
--
-- The functions of these areas that refuse now raise their refusal with private.refuse (a code
-- and its facts; the API words it: shared/conversations/refusals.ts, and core's unauthenticated
-- for an ended session).
-- =============================================================================================

create or replace function private.message_send(p_conversation uuid, p_sender uuid, p_type text, p_content text, p_now timestamp with time zone)
returns public.messages
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows;
  m public.messages;
begin
  select es.* into e from public.conversations c join public.escrows es on es.id = c.escrow_id
   where c.id = p_conversation for share of es;
  if not found or e.status = 'deleted'
     or (p_sender is distinct from e.initiator_id and p_sender is distinct from e.counterparty_id) then
    perform private.refuse(404, 'conversation_not_found', pg_catalog.jsonb_build_object('conversation_id', p_conversation));
  end if;
  if not private.conversation_writable(e, p_now) then
    perform private.refuse(409, 'conversation_read_only', pg_catalog.jsonb_build_object(
      'conversation_id', p_conversation, 'escrow_status', e.status));
  end if;
  insert into public.messages (conversation_id, sender_id, message_type, content)
  values (p_conversation, p_sender, p_type, p_content)
  returning * into m;
  return m;
end
$$;
comment on function private.message_send(p_conversation uuid, p_sender uuid, p_type text, p_content text, p_now timestamp with time zone) is 'message-send: a party writes in the escrow''s conversation (conversation_not_found, 404, to anyone else or once deleted; conversation_read_only, 409, 30 days after the deal closed).';
revoke all on function private.message_send(p_conversation uuid, p_sender uuid, p_type text, p_content text, p_now timestamp with time zone) from public;
grant execute on function private.message_send(p_conversation uuid, p_sender uuid, p_type text, p_content text, p_now timestamp with time zone) to service_role;

create or replace function private.session_assert(p_session_id uuid, p_user_id uuid)
returns boolean
language plpgsql
stable security definer
set search_path = ''
as $$
begin
  if not exists (
    select 1 from private.sessions
     where id = p_session_id and user_id = p_user_id
       and revoked_at is null and expires_at > now()
  ) then
    perform private.refuse(401, 'unauthenticated', pg_catalog.jsonb_build_object('reason', 'ended'));
  end if;
  return true;
end
$$;
comment on function private.session_assert(p_session_id uuid, p_user_id uuid) is 'True when the session is live for this user; otherwise ES401 (unauthenticated, reason ended), which aborts the transaction whose first statement asked (shared/db.ts). Runs as its owner: the statement also switches the role to authenticated.';
revoke all on function private.session_assert(p_session_id uuid, p_user_id uuid) from public;
grant execute on function private.session_assert(p_session_id uuid, p_user_id uuid) to service_role;
