-- =============================================================================================
-- The masked phone: one definition of the form a phone number takes where it must not be shown
-- whole: escrow reads to anyone but the initiator, the account export, an escrow whose counterparty
-- deleted their account, and the retention purge of old escrows. '+234', the first digit, seven
-- asterisks and the last two digits: +2348*******78.
-- =============================================================================================

create function private.mask_phone(p_phone text)
returns text
language sql
immutable
set search_path = ''
as $$
  select case when p_phone ~ '^\+234[0-9]{10}$'
              then pg_catalog.substr(p_phone, 1, 5) || '*******' || pg_catalog.right(p_phone, 2)
              else p_phone end;
$$;
comment on function private.mask_phone(p_phone text) is 'A phone as shown to anyone but the escrow''s initiator: the first 4 digits and the last 2, the 7 between as *.';
revoke all on function private.mask_phone(p_phone text) from public;
grant execute on function private.mask_phone(p_phone text) to service_role;
