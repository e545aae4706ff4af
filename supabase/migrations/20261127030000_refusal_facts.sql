-- =============================================================================================
-- Refusals as facts (docs/errors.md#refusals-raised-in-sql)
--
-- A SQL function refuses with SQLSTATE ES<http status> and, in DETAIL, the facts of the refusal
-- as JSON: {code, ...facts} (ids, amounts in kobo, statuses, counts; never sentences). The
-- endpoint that called it words the refusal from its code (shared/refusals/catalog.ts). The
-- exception's message is the code alone. private.refuse is the one way to raise one; later
-- migrations redefine the functions that still raise English.
-- =============================================================================================

create function private.refuse(p_status integer, p_code text, p_facts jsonb default '{}'::jsonb)
returns void
language plpgsql
set search_path = ''
as $$
begin
  if p_status not between 400 and 499 or p_code !~ '^[a-z][a-z0-9_]*$' then
    raise exception 'private.refuse: bad status % or code %', p_status, p_code;
  end if;
  raise exception '%', p_code
    using errcode = 'ES' || p_status::text,
          detail = (coalesce(p_facts, '{}'::jsonb) || pg_catalog.jsonb_build_object('code', p_code))::text;
end
$$;
comment on function private.refuse(p_status integer, p_code text, p_facts jsonb) is
  'Raises a refusal: SQLSTATE ES<status>, the code as the message, and {code, ...facts} as JSON in DETAIL, for the API to word.';
revoke all on function private.refuse(p_status integer, p_code text, p_facts jsonb) from public;
grant execute on function private.refuse(p_status integer, p_code text, p_facts jsonb) to service_role;
