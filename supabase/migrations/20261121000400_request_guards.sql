-- =============================================================================================
-- Request guards: sliding-window rate limits (OTPs, sign-up, login, invites) and the store of
-- Idempotency-Keys that lets a client retry a request without doing it twice
-- (shared/endpoint.ts). Both private; the job prunes expired keys (private.cleanup_expired).
-- =============================================================================================

-- =============================================================================================
-- Rate limits
-- =============================================================================================

-- Sliding-window rate limits: one row per counted event.
create table private.rate_limit_events (
  id bigint generated always as identity primary key,
  key text not null,
  created_at timestamptz not null default now()
);
comment on table private.rate_limit_events is
  'One row per event counted by a sliding-window rate limit (private.rate_limit_take prunes them).';
create index rate_limit_events_key_idx on private.rate_limit_events (key, created_at desc);
alter table private.rate_limit_events enable row level security;
create policy "Service role manages rate limit events" on private.rate_limit_events
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.rate_limit_events to service_role;

-- Takes one unit from every rule, or none of them. p_rules is a JSON array of
-- {key, limit, window_seconds}. Returns 0 when allowed (and records the event under every key),
-- otherwise the number of seconds until every rule would allow it. Concurrent callers on the
-- same keys are serialised by transaction-scoped advisory locks taken in a fixed (sorted) order.
-- The clock is read after the locks are held (unless p_now is given): now() is the start of the
-- transaction, which for a caller that waited on the lock is earlier than the events the previous
-- holder just recorded, and would overstate the wait and backdate this caller's own event.
create function private.rate_limit_take(p_rules jsonb, p_now timestamptz default null)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  r record;
  wait_s integer := 0;
  oldest timestamptz;
  v_now timestamptz;
begin
  for r in
    select distinct rule ->> 'key' as key
    from jsonb_array_elements(p_rules) as rule
    order by 1
  loop
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('rate:' || r.key, 0));
  end loop;
  v_now := coalesce(p_now, pg_catalog.clock_timestamp());

  for r in
    select rule ->> 'key' as key,
           (rule ->> 'limit')::integer as lim,
           (rule ->> 'window_seconds')::integer as win
    from jsonb_array_elements(p_rules) as rule
  loop
    -- the lim-th most recent event inside the window decides when a slot frees up
    select e.created_at into oldest
    from private.rate_limit_events e
    where e.key = r.key and e.created_at > v_now - pg_catalog.make_interval(secs => r.win)
    order by e.created_at desc
    offset r.lim - 1 limit 1;
    if found then
      wait_s := greatest(wait_s, ceil(extract(epoch from (oldest + pg_catalog.make_interval(secs => r.win) - v_now)))::integer, 1);
    end if;
    -- events that have left the window no longer count for anything: drop them (the key is locked)
    delete from private.rate_limit_events e
     where e.key = r.key and e.created_at <= v_now - pg_catalog.make_interval(secs => r.win);
  end loop;

  if wait_s > 0 then
    return wait_s;
  end if;

  insert into private.rate_limit_events (key, created_at)
  select distinct rule ->> 'key', v_now from jsonb_array_elements(p_rules) as rule;
  return 0;
end
$$;
comment on function private.rate_limit_take(jsonb, timestamptz) is
  'Takes one unit from every sliding-window rule or none: 0 when allowed (recorded), else the seconds to wait. '
  'Serialised per key.';
revoke execute on function private.rate_limit_take(jsonb, timestamptz) from public, anon, authenticated;
grant execute on function private.rate_limit_take(jsonb, timestamptz) to service_role;

-- =============================================================================================
-- Idempotency keys
-- =============================================================================================

create table private.idempotency_keys (
  user_id uuid not null references private.users (id) on delete cascade,
  operation text not null,
  key text not null check (char_length(key) between 1 and 255),
  request_hash text not null,
  response_status integer,
  response_body text, -- the JSON exactly as first sent, replayed byte for byte
  created_at timestamptz not null default now(),
  primary key (user_id, operation, key)
);
comment on table private.idempotency_keys is
  'Idempotency-Keys of a user''s requests with the first answer, replayed byte for byte; kept 24 hours.';
create index idempotency_keys_created_at_idx on private.idempotency_keys (created_at);
alter table private.idempotency_keys enable row level security;
create policy "Service role manages idempotency keys" on private.idempotency_keys
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.idempotency_keys to service_role;
