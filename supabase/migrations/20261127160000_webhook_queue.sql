-- =============================================================================================
-- Outbound webhooks: the delivery queue (docs/webhooks.md#the-delivery-queue)
--
-- An endpoint (private.webhook_endpoints) belongs to a recipient of the event log (a user now, a
-- merchant later, by its own id) and asks for some escrow event types, or all of them. Each escrow
-- event of the log that its owner receives becomes one delivery row (private.webhook_deliveries),
-- at most one per endpoint and event, which the service sends and tries again on its schedule
-- (shared/webhooks/queue.ts).
--
-- - Reading the log. private.webhook_enqueue takes events in (xact, id) order, only those whose
--   transaction is older than every transaction still running (private.events_horizon()): those
--   are all committed or gone, and every event written from now on has a transaction id at least
--   the horizon. Its cursor is the pair (xact, id) of the last event it took, in a one-row table
--   locked for the call, so two callers never take the same events twice and never skip one.
-- - Types. Only escrow events are delivered (never messages, notifications or wallet events). The
--   escrow trigger now writes the status before the change beside the status, and
--   private.webhook_event_type names the event from the two; the list is the one of
--   shared/webhooks/types.ts, and tests/integration/webhook-queue.clock.test.ts compares them.
-- - Sending. private.webhook_claim leases due deliveries (for update skip locked, then a lease id
--   and a next_attempt_at pushed past the attempt's deadline, committed at once): no transaction
--   stays open while a receiver answers, which would hold the horizon back for every reader of the
--   log. private.webhook_record writes the outcome under that lease only.
-- - Endpoints that keep failing: failing_since is the first failure of an unbroken run; a failure
--   more than 5 days after it disables the endpoint. private.webhook_endpoint_enable turns it back
--   on and makes its pending deliveries due at once. private.webhook_delivery_retry starts a failed
--   (or pending) delivery over; private.webhook_purge removes deliveries 30 days old.
-- =============================================================================================

-- ---- endpoints --------------------------------------------------------------------------------

create table private.webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  -- a recipient id of private.event_recipients: a user now, a merchant later (no foreign key, as there)
  owner_id uuid not null,
  url text not null check (pg_catalog.length(url) between 1 and 2048),
  -- the event types asked for (escrow.funded ...); null: all of them
  event_types text[] check (event_types is null or pg_catalog.cardinality(event_types) > 0),
  -- the whsec_ secret, encrypted under WEBHOOK_SECRET_KEY (shared/webhooks/secrets.ts: v1:<iv>:<ciphertext>)
  secret_encrypted text not null,
  -- after a rotation: the secret it replaced, which still signs until previous_secret_until (24 h)
  previous_secret_encrypted text,
  previous_secret_until timestamptz,
  enabled boolean not null default true,
  disabled_at timestamptz,
  -- the first failure of an unbroken run of failed attempts; null after a success
  failing_since timestamptz,
  created_at timestamptz not null default now(),
  constraint webhook_endpoints_previous_secret check ((previous_secret_encrypted is null) = (previous_secret_until is null)),
  constraint webhook_endpoints_disabled check (enabled = (disabled_at is null))
);
comment on table private.webhook_endpoints is
  'Where a recipient of the event log wants its escrow events sent, and with which secret they are signed.';
create index webhook_endpoints_owner_idx on private.webhook_endpoints (owner_id) where enabled;
alter table private.webhook_endpoints enable row level security;
create policy "Service role manages webhook endpoints" on private.webhook_endpoints
  for all to service_role using (true) with check (true);
revoke all on private.webhook_endpoints from public;
grant select, insert, update, delete on private.webhook_endpoints to service_role;

-- ---- deliveries -------------------------------------------------------------------------------

create table private.webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  endpoint_id uuid not null references private.webhook_endpoints (id) on delete cascade,
  event_id bigint not null references private.events (id),
  -- escrow.created, escrow.funded ... (private.webhook_event_type)
  type text not null,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  -- attempts of the current series (a manual retry starts a new one from 0)
  attempts integer not null default 0 check (attempts >= 0),
  -- when a pending delivery is next due (pushed past the deadline while an attempt holds its lease)
  next_attempt_at timestamptz,
  -- the claim an attempt runs under: only it may record the outcome
  lease_id uuid,
  last_attempt_at timestamptz,
  last_status_code integer,
  -- a reason code of shared/webhooks/deliver.ts, or gone (the escrow is no longer the owner's to see)
  last_reason text,
  -- at most the first 4 KiB of the receiver's answer (shared/webhooks/deliver.ts reads no more)
  response_excerpt text,
  duration_ms integer,
  created_at timestamptz not null default now(),
  delivered_at timestamptz,
  constraint webhook_deliveries_once unique (endpoint_id, event_id),
  constraint webhook_deliveries_due check ((status = 'pending') = (next_attempt_at is not null))
);
comment on table private.webhook_deliveries is
  'One escrow event to one endpoint: its state, when it is next tried, and the last attempt''s outcome.';
create index webhook_deliveries_due_idx on private.webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_created_idx on private.webhook_deliveries (created_at);
create index webhook_deliveries_event_idx on private.webhook_deliveries (event_id);
alter table private.webhook_deliveries enable row level security;
create policy "Service role manages webhook deliveries" on private.webhook_deliveries
  for all to service_role using (true) with check (true);
revoke all on private.webhook_deliveries from public;
grant select, insert, update, delete on private.webhook_deliveries to service_role;

-- ---- the feed's cursor ------------------------------------------------------------------------

-- The last event the queue took, as the pair it reads the log in: (xact, id).
create table private.webhook_feed (
  only_row boolean primary key default true check (only_row),
  xact xid8 not null default '0'::xid8,
  event_id bigint not null default 0,
  updated_at timestamptz not null default now()
);
comment on table private.webhook_feed is
  'The webhook queue''s place in the event log: the (xact, id) of the last event it took. One row.';
insert into private.webhook_feed default values;
alter table private.webhook_feed enable row level security;
create policy "Service role manages the webhook feed" on private.webhook_feed
  for all to service_role using (true) with check (true);
revoke all on private.webhook_feed from public;
grant select, update on private.webhook_feed to service_role;

-- the log in the order it is read in: (xact, id)
create index events_xact_id_idx on private.events (xact, id);

-- ---- event types ------------------------------------------------------------------------------

-- The escrow event now carries the status before the change (null on insert), so that the type of
-- an event is known from its facts alone.
create or replace function private.event_on_escrow()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.event_write('escrow', new.id, new.id, array[new.initiator_id, new.counterparty_id],
                              pg_catalog.jsonb_build_object(
                                'status', new.status,
                                'previous_status', case when tg_op = 'UPDATE' then old.status end));
  return null;
end
$$;
revoke all on function private.event_on_escrow() from public;

-- The webhook type of an event, from its kind and facts; null when it is not delivered. The list is
-- shared/webhooks/types.ts's (ESCROW_WEBHOOK_TYPES), compared with this one by the queue's suite.
create function private.webhook_event_type(p_kind text, p_data jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
  select case
    when p_kind <> 'escrow' or not (p_data ? 'previous_status') then null
    when p_data ->> 'previous_status' is null then 'escrow.created'
    when p_data ->> 'status' = p_data ->> 'previous_status' then null
    when p_data ->> 'status' in ('funded', 'released', 'refunded', 'cancelled', 'disputed')
      then 'escrow.' || (p_data ->> 'status')
  end;
$$;
comment on function private.webhook_event_type(text, jsonb) is
  'The webhook type of an event (escrow.created, escrow.funded ...), or null when it is not delivered.';
revoke all on function private.webhook_event_type(text, jsonb) from public;
grant execute on function private.webhook_event_type(text, jsonb) to service_role;

-- ---- enqueueing -------------------------------------------------------------------------------

create function private.webhook_enqueue(p_now timestamptz, p_limit integer)
returns table (scanned integer, enqueued integer)
language plpgsql
set search_path = ''
as $$
declare
  -- taken before the cursor's lock: still true after waiting for it (nothing below it can appear)
  v_horizon xid8 := private.events_horizon();
  c private.webhook_feed;
  v_last record;
  v_scanned integer;
  v_min bigint;
  v_max bigint;
  v_enqueued integer;
begin
  -- one caller at a time: the next one reads the cursor this one leaves
  select * into c from private.webhook_feed where only_row for update;
  select pg_catalog.count(*)::integer, pg_catalog.min(b.id), pg_catalog.max(b.id)
    into v_scanned, v_min, v_max
    from (select e.id from private.events e
           where (e.xact, e.id) > (c.xact, c.event_id) and e.xact < v_horizon
           order by e.xact, e.id limit p_limit) b;
  if v_scanned = 0 then
    return query select 0, 0;
    return;
  end if;
  select e.xact, e.id into v_last
    from private.events e
   where (e.xact, e.id) > (c.xact, c.event_id) and e.xact < v_horizon
   order by e.xact, e.id offset v_scanned - 1 limit 1;

  -- below the horizon the range (cursor, last] is settled: the same events as the batch above
  insert into private.webhook_deliveries (endpoint_id, event_id, type, next_attempt_at)
  select w.id, e.id, t.type, p_now
    from private.events e
    cross join lateral (select private.webhook_event_type(e.kind, e.data) as type) t
    join private.event_recipients r on r.event_id = e.id and r.event_id between v_min and v_max
    join private.webhook_endpoints w on w.owner_id = r.user_id
   where (e.xact, e.id) > (c.xact, c.event_id) and (e.xact, e.id) <= (v_last.xact, v_last.id)
     and e.kind = 'escrow' and t.type is not null
     and w.enabled and (w.event_types is null or t.type = any (w.event_types))
     and w.created_at <= e.occurred_at
  order by e.xact, e.id
  on conflict (endpoint_id, event_id) do nothing;
  get diagnostics v_enqueued = row_count;

  update private.webhook_feed set xact = v_last.xact, event_id = v_last.id, updated_at = now() where only_row;
  return query select v_scanned, v_enqueued;
end
$$;
comment on function private.webhook_enqueue(timestamptz, integer) is
  'Takes up to p_limit events of the log after the cursor and below the horizon, in (xact, id) order, enqueues a '
  'delivery for each escrow event and enabled endpoint of a recipient that asks for its type, and moves the cursor.';
revoke all on function private.webhook_enqueue(timestamptz, integer) from public;
grant execute on function private.webhook_enqueue(timestamptz, integer) to service_role;

-- ---- attempts ---------------------------------------------------------------------------------

create function private.webhook_claim(p_now timestamptz, p_limit integer, p_lease interval)
returns table (
  id uuid, lease_id uuid, endpoint_id uuid, event_id bigint, type text, attempts integer, url text, owner_id uuid,
  secret_encrypted text, previous_secret_encrypted text, previous_secret_until timestamptz, escrow_id uuid,
  occurred_at timestamptz
)
language plpgsql
set search_path = ''
as $$
declare
  v_lease uuid := gen_random_uuid();
begin
  return query
  with due as (
    select d.id
      from private.webhook_deliveries d join private.webhook_endpoints w on w.id = d.endpoint_id
     where d.status = 'pending' and d.next_attempt_at <= p_now and w.enabled
     order by d.next_attempt_at
     limit p_limit
       for update of d skip locked
  ), claimed as (
    update private.webhook_deliveries d
       set next_attempt_at = p_now + p_lease, lease_id = v_lease
      from due
     where d.id = due.id
    returning d.id, d.endpoint_id, d.event_id, d.type, d.attempts
  )
  select c.id, v_lease, c.endpoint_id, c.event_id, c.type, c.attempts, w.url, w.owner_id, w.secret_encrypted,
         w.previous_secret_encrypted, w.previous_secret_until, e.escrow_id, e.occurred_at
    from claimed c
    join private.webhook_endpoints w on w.id = c.endpoint_id
    join private.events e on e.id = c.event_id;
end
$$;
comment on function private.webhook_claim(timestamptz, integer, interval) is
  'Leases up to p_limit due deliveries of enabled endpoints (skipping those another caller holds): each is pushed '
  'p_lease past p_now and marked with this claim''s lease id, which webhook_record requires.';
revoke all on function private.webhook_claim(timestamptz, integer, interval) from public;
grant execute on function private.webhook_claim(timestamptz, integer, interval) to service_role;

-- The outcome of one attempt. p_next_attempt_at: when to try again (the schedule of
-- shared/webhooks/schedule.ts), null when that was the last attempt. p_endpoint_fault: whether the
-- failure was the receiver's (it counts toward disabling the endpoint); gone is not.
create function private.webhook_record(
  p_delivery uuid, p_lease uuid, p_now timestamptz, p_ok boolean, p_status_code integer, p_reason text,
  p_excerpt text, p_duration_ms integer, p_next_attempt_at timestamptz, p_endpoint_fault boolean
)
returns table (status text, endpoint_disabled boolean, owner_id uuid, failing_since timestamptz)
language plpgsql
set search_path = ''
as $$
declare
  d private.webhook_deliveries;
  w private.webhook_endpoints;
  v_status text;
  v_disabled boolean := false;
  v_owner uuid;
  v_since timestamptz;
begin
  select * into d from private.webhook_deliveries x
   where x.id = p_delivery and x.lease_id = p_lease and x.status = 'pending'
     for update;
  if not found then
    -- the lease was lost (it ran out and another attempt claimed it, or the delivery was retried)
    return;
  end if;
  v_status := case when p_ok then 'succeeded' when p_next_attempt_at is null then 'failed' else 'pending' end;
  update private.webhook_deliveries x
     set status = v_status,
         attempts = x.attempts + 1,
         next_attempt_at = case when v_status = 'pending' then p_next_attempt_at end,
         lease_id = null,
         last_attempt_at = p_now,
         last_status_code = p_status_code,
         last_reason = p_reason,
         response_excerpt = p_excerpt,
         duration_ms = p_duration_ms,
         delivered_at = case when p_ok then p_now else x.delivered_at end
   where x.id = d.id;

  if p_ok then
    update private.webhook_endpoints x set failing_since = null
     where x.id = d.endpoint_id and x.failing_since is not null;
  elsif p_endpoint_fault then
    update private.webhook_endpoints x set failing_since = coalesce(x.failing_since, p_now)
     where x.id = d.endpoint_id
    returning * into w;
    if w.enabled and w.failing_since < p_now - interval '5 days' then
      update private.webhook_endpoints x set enabled = false, disabled_at = p_now where x.id = w.id;
      v_disabled := true;
    end if;
  end if;
  select x.owner_id, x.failing_since into v_owner, v_since
    from private.webhook_endpoints x where x.id = d.endpoint_id;
  return query select v_status, v_disabled, v_owner, v_since;
end
$$;
comment on function private.webhook_record(uuid, uuid, timestamptz, boolean, integer, text, text, integer, timestamptz,
                                           boolean) is
  'Records an attempt under its lease: succeeded, pending again at p_next_attempt_at, or failed; keeps the endpoint''s '
  'failing_since, and disables an endpoint failing for more than 5 days. Nothing when the lease was lost.';
revoke all on function private.webhook_record(uuid, uuid, timestamptz, boolean, integer, text, text, integer,
                                              timestamptz, boolean) from public;
grant execute on function private.webhook_record(uuid, uuid, timestamptz, boolean, integer, text, text, integer,
                                                 timestamptz, boolean) to service_role;

-- ---- endpoints turned back on, deliveries started over, old ones removed ------------------------

create function private.webhook_endpoint_enable(p_endpoint uuid, p_now timestamptz)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  v_due integer;
begin
  update private.webhook_endpoints
     set enabled = true, disabled_at = null, failing_since = null
   where id = p_endpoint;
  if not found then
    return null;
  end if;
  update private.webhook_deliveries
     set next_attempt_at = p_now, lease_id = null
   where endpoint_id = p_endpoint and status = 'pending';
  get diagnostics v_due = row_count;
  return v_due;
end
$$;
comment on function private.webhook_endpoint_enable(uuid, timestamptz) is
  'Turns an endpoint back on, clears its failing_since and makes its pending deliveries due at p_now; answers how many '
  '(null: no such endpoint).';
revoke all on function private.webhook_endpoint_enable(uuid, timestamptz) from public;
grant execute on function private.webhook_endpoint_enable(uuid, timestamptz) to service_role;

create function private.webhook_delivery_retry(p_delivery uuid, p_now timestamptz)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  update private.webhook_deliveries
     set status = 'pending', attempts = 0, next_attempt_at = p_now, lease_id = null
   where id = p_delivery and status in ('failed', 'pending');
  return found;
end
$$;
comment on function private.webhook_delivery_retry(uuid, timestamptz) is
  'A failed or pending delivery starts a new series of attempts, due at p_now; false for a succeeded or unknown one.';
revoke all on function private.webhook_delivery_retry(uuid, timestamptz) from public;
grant execute on function private.webhook_delivery_retry(uuid, timestamptz) to service_role;

create function private.webhook_purge(p_now timestamptz, p_limit integer)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  v_removed integer;
begin
  delete from private.webhook_deliveries
   where id in (select id from private.webhook_deliveries
                 where created_at < p_now - interval '30 days'
                 order by created_at
                 limit p_limit);
  get diagnostics v_removed = row_count;
  return v_removed;
end
$$;
comment on function private.webhook_purge(timestamptz, integer) is
  'Removes up to p_limit deliveries created more than 30 days before p_now, whatever their state.';
revoke all on function private.webhook_purge(timestamptz, integer) from public;
grant execute on function private.webhook_purge(timestamptz, integer) to service_role;
