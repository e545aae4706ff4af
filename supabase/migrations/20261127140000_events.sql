-- =============================================================================================
-- The event log
--
-- One append-only log of what happened, for everything that tells someone about it later: the
-- live stream of an app, and outbound webhooks (docs/events.md). An event is written in the
-- same transaction as its effect, so nothing is ever told that was not committed, and nothing
-- committed is left untold.
--
-- - Written by triggers on the rows the transitions write: a notification, a message, an escrow
--   whose status changed, a wallet whose balance changed. Every SQL function that writes those rows
--   writes the event with them, including ones added later.
-- - Facts only: ids, statuses and amounts. Names, phones and text are read from their rows when
--   an event is delivered, so erasing a person never rewrites the log.
-- - Its audience is written beside it, one row per recipient (private.event_recipients), for a
--   recipient's events in id order from an index.
-- - Commit order. Ids are taken when the row is inserted, not when its transaction commits, so a
--   reader takes events in id order only below the horizon: events whose transaction id is lower
--   than that of every transaction still running (private.events_after). An event whose
--   transaction commits late is held back until it has, and is then delivered once, in its place.
-- =============================================================================================

create table private.events (
  id bigint generated always as identity primary key,
  -- the writing transaction (xid8: never wraps around), for the horizon
  xact xid8 not null default pg_catalog.pg_current_xact_id(),
  occurred_at timestamptz not null default now(),
  -- what the event carries when delivered: the REST object of that name, as its recipient reads it
  kind text not null check (kind in ('message', 'notification', 'escrow', 'wallet')),
  -- the message, the notification, the escrow, or the user whose wallet it is
  subject_id uuid not null,
  escrow_id uuid,
  -- facts only: a status, an amount in kobo
  data jsonb not null default '{}'::jsonb check (pg_catalog.jsonb_typeof(data) = 'object')
);
comment on table private.events is
  'The event log: what happened, written with its effect by triggers; read below the commit horizon (private.events_after).';
alter table private.events enable row level security;
create policy "Service role manages events" on private.events for all to service_role using (true) with check (true);
grant select, insert on private.events to service_role;

-- No foreign keys: with them (a check for each recipient of each event) and the event and its
-- recipients written in two statements, the story load made 12% fewer money operations; without
-- them, in one statement, 2% fewer (docs/events.md). The writers take the ids from rows that
-- exist; erasing an account must remove its rows (nothing erases accounts yet).
create table private.event_recipients (
  user_id uuid not null,
  event_id bigint not null,
  primary key (user_id, event_id)
);
comment on table private.event_recipients is 'Who an event is for: one row per recipient.';
alter table private.event_recipients enable row level security;
create policy "Service role manages event recipients" on private.event_recipients
  for all to service_role using (true) with check (true);
grant select, insert on private.event_recipients to service_role;

-- ---- writing ----------------------------------------------------------------------------------

create function private.event_write(
  p_kind text, p_subject uuid, p_escrow uuid, p_recipients uuid[], p_data jsonb default '{}'::jsonb
)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  with e as (
    insert into private.events (kind, subject_id, escrow_id, data)
    values (p_kind, p_subject, p_escrow, coalesce(p_data, '{}'::jsonb))
    returning id)
  insert into private.event_recipients (user_id, event_id)
  select distinct r, e.id from e, pg_catalog.unnest(p_recipients) r where r is not null;
end
$$;
comment on function private.event_write(text, uuid, uuid, uuid[], jsonb) is
  'Writes one event and its recipients (the nulls among them left out), in the caller''s transaction.';
revoke all on function private.event_write(text, uuid, uuid, uuid[], jsonb) from public;

create function private.event_on_notification()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.event_write('notification', new.id, new.escrow_id, array[new.user_id]);
  return null;
end
$$;
revoke all on function private.event_on_notification() from public;
create trigger notifications_event after insert on public.notifications
  for each row execute function private.event_on_notification();

create function private.event_on_message()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  e record;
begin
  select x.id, x.initiator_id, x.counterparty_id into e
    from public.conversations c join public.escrows x on x.id = c.escrow_id
   where c.id = new.conversation_id;
  perform private.event_write('message', new.id, e.id, array[e.initiator_id, e.counterparty_id]);
  return null;
end
$$;
revoke all on function private.event_on_message() from public;
create trigger messages_event after insert on public.messages
  for each row execute function private.event_on_message();

create function private.event_on_escrow()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.event_write('escrow', new.id, new.id, array[new.initiator_id, new.counterparty_id],
                              pg_catalog.jsonb_build_object('status', new.status));
  return null;
end
$$;
revoke all on function private.event_on_escrow() from public;
create trigger escrows_event_created after insert on public.escrows
  for each row execute function private.event_on_escrow();
create trigger escrows_event_changed after update on public.escrows
  for each row when (old.status is distinct from new.status or old.counterparty_id is distinct from new.counterparty_id
                     or old.released_amount is distinct from new.released_amount)
  execute function private.event_on_escrow();

create function private.event_on_wallet()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.event_write('wallet', new.owner_id, null, array[new.owner_id],
                              pg_catalog.jsonb_build_object('balance', new.balance));
  return null;
end
$$;
revoke all on function private.event_on_wallet() from public;
create trigger ledger_accounts_wallet_event after update of balance on private.ledger_accounts
  for each row when (new.kind = 'user_wallet' and old.balance is distinct from new.balance)
  execute function private.event_on_wallet();

-- ---- reading ----------------------------------------------------------------------------------

create function private.events_horizon()
returns xid8
language sql
stable
set search_path = ''
as $$
  select pg_catalog.pg_snapshot_xmin(pg_catalog.pg_current_snapshot());
$$;
comment on function private.events_horizon() is
  'The oldest transaction still running: an event written by an older one is committed or gone, and every event with a lower id is too.';
revoke all on function private.events_horizon() from public;
grant execute on function private.events_horizon() to service_role;

create function private.events_after(p_user uuid, p_after bigint, p_limit integer)
returns table (id bigint, kind text, subject_id uuid, escrow_id uuid, data jsonb, occurred_at timestamptz)
language plpgsql
stable
set search_path = ''
as $$
declare
  v_horizon xid8 := private.events_horizon();
  v_stop bigint;
begin
  -- the first event not yet deliverable (its transaction began after the oldest one running):
  -- nothing from it on, so that a lower id committing late is never passed over
  select min(e.id) into v_stop
    from private.events e
   where e.id > p_after and e.xact >= v_horizon;
  return query
  select e.id, e.kind, e.subject_id, e.escrow_id, e.data, e.occurred_at
    from private.event_recipients r join private.events e on e.id = r.event_id
   where r.user_id = p_user and r.event_id > p_after and (v_stop is null or r.event_id < v_stop)
   order by r.event_id
   limit p_limit;
end
$$;
comment on function private.events_after(uuid, bigint, integer) is
  'A recipient''s events after an id, in id order, below the commit horizon: what a stream delivers next.';
revoke all on function private.events_after(uuid, bigint, integer) from public;
grant execute on function private.events_after(uuid, bigint, integer) to service_role;
