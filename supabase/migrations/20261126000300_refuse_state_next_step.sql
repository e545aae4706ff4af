-- =============================================================================================
-- Wrong-state refusals say what comes first (issue 14, the newcomer path)
--
-- "cannot accept an escrow that is draft" left a newcomer guessing: the counterparty of an escrow
-- the initiator pays can accept it only once the initiator has funded it. The refusal now says so.
-- The other refusals are unchanged.
-- =============================================================================================

create or replace function private.refuse_state(e public.escrows, p_action text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  raise exception 'cannot % an escrow that is %', p_action,
    e.status || case when e.status = 'active' and e.funded_at is not null then ' (funded, awaiting acceptance)'
                     when e.status = 'active' then ' (accepted, awaiting funding)' else '' end
             || case when p_action = 'accept' and e.status = 'draft'
                     then ': the initiator funds it first (escrow-fund), then you can accept it' else '' end
    using errcode = 'ES409';
end
$$;
comment on function private.refuse_state(public.escrows, text) is
  'Raises ES409: the escrow''s current state does not allow the action (named in the message, with what comes first '
  'where the next step is someone else''s).';
revoke execute on function private.refuse_state(public.escrows, text) from public, anon, authenticated;
grant execute on function private.refuse_state(public.escrows, text) to service_role;
