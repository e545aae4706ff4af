-- =============================================================================================
-- The KYC records of deleted accounts (docs/compliance.md#retention)
--
-- - private.kyc_records_purge: the job's purge of the customer-due-diligence records of an account
--   deleted longer ago than their period (5 years, shared/compliance/retention.ts): its KYC check
--   records and any identity request left are deleted, at most p_limit rows of each table a run.
--   A live account's records are never touched; the account row stays (the ledger names it).
-- =============================================================================================

create function private.kyc_records_purge(p_now timestamptz, p_keep interval, p_limit integer)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_cut timestamptz;
  v_checks integer;
  v_requests integer;
begin
  if p_limit is null or p_limit < 1 then
    raise exception 'kyc_records_purge: limit must be positive' using errcode = '22023';
  end if;
  if p_keep is null or p_keep < interval '5 years' then
    raise exception 'kyc_records_purge: KYC records are kept 5 years at least' using errcode = '22023';
  end if;
  v_cut := p_now - p_keep;
  delete from private.kyc_checks t
   where t.ctid = any(array(
     select c.ctid from private.kyc_checks c join private.users u on u.id = c.user_id
      where u.deleted_at < v_cut
      limit p_limit));
  get diagnostics v_checks = row_count;
  delete from private.identity_requests t
   where t.ctid = any(array(
     select r.ctid from private.identity_requests r join private.users u on u.id = r.user_id
      where u.deleted_at < v_cut
      limit p_limit));
  get diagnostics v_requests = row_count;
  return v_checks + v_requests;
end
$$;
comment on function private.kyc_records_purge(timestamptz, interval, integer) is
  'The job''s purge of KYC records (kyc_checks, identity_requests) of accounts deleted more than p_keep (5 years at '
  'least) before p_now: up to p_limit rows of each table; answers how many were deleted.';
revoke all on function private.kyc_records_purge(timestamptz, interval, integer) from public;
grant execute on function private.kyc_records_purge(timestamptz, interval, integer) to service_role;
