-- =============================================================================================
-- The job (jobs-run, every minute: pg_cron in production, scripts/start.ts locally): the
-- time-driven transitions and housekeeping, with "now" as an argument so tests can drive time.
-- =============================================================================================

-- Inspection periods that ended without a dispute are released; escrows released or refunded 14
-- days ago are ended. Returns one row per escrow acted on (with the payout to start, if any).
create function private.run_jobs(p_now timestamptz)
returns table (job text, escrow_id uuid, payout_tx uuid)
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
  v_payout uuid;
begin
  -- inspection periods that ended without a dispute: release. Each escrow is taken under its row
  -- lock and only while still due: overlapping runs share the work instead of one of them failing
  -- on an escrow the other just released, and an escrow some operation holds right now (a refund,
  -- a dispute) is left to the next run, which sees what that operation did.
  for v_id in
    select e.id from public.escrows e where e.status = 'inspection' and e.inspection_ends_at <= p_now
     order by e.inspection_ends_at
       for update skip locked
  loop
    select r.payout_tx into v_payout from private.escrow_release(v_id, null, p_now) r;
    return query select 'inspection_release'::text, v_id, v_payout;
  end loop;
  -- released or refunded 14 days ago: ended
  for v_id in
    update public.escrows e set status = 'ended', ended_at = p_now, updated_at = now()
     where e.status in ('released', 'refunded') and coalesce(e.released_at, e.refunded_at) <= p_now - interval '14 days'
    returning e.id
  loop
    return query select 'ended'::text, v_id, null::uuid;
  end loop;
end
$$;
comment on function private.run_jobs(timestamptz) is
  'The job: releases escrows whose inspection period ended and ends those closed 14 days ago; one row per escrow '
  'acted on.';
revoke execute on function private.run_jobs(timestamptz) from public, anon, authenticated;
grant execute on function private.run_jobs(timestamptz) to service_role;

-- Housekeeping for the job: Idempotency-Keys live 24 hours. (Rate-limit events are pruned as they
-- are counted, in private.rate_limit_take.) Returns the number of keys removed.
create function private.cleanup_expired(p_now timestamptz)
returns integer
language sql
set search_path = ''
as $$
  with gone as (
    delete from private.idempotency_keys where created_at < p_now - interval '24 hours' returning 1
  )
  select count(*)::integer from gone;
$$;
comment on function private.cleanup_expired(timestamptz) is
  'The job''s housekeeping: deletes Idempotency-Keys older than 24 hours; returns how many.';
revoke execute on function private.cleanup_expired(timestamptz) from public, anon, authenticated;
grant execute on function private.cleanup_expired(timestamptz) to service_role;
