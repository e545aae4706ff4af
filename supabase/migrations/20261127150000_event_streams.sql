-- =============================================================================================
-- Event streams: reading the log in commit order, and the tickets of browser streams
--
-- - The order a reader takes events in is (xact, id), not id alone, and only events whose writing
--   transaction is older than every transaction still running (the horizon). Every transaction
--   that will still write an event has a transaction id at or above the horizon, so the set of
--   events below it is final, and a cursor (xact, id) never passes over one that commits later.
--   Id order alone can: a transaction that took its transaction id early and its event id late
--   commits while an older event id is still uncommitted (tests/integration/events.test.ts).
-- - private.events_window reads the next events of the whole log for a set of recipients: what
--   one server's streams share (docs/events.md).
-- - private.events_replay reads one recipient's events after an event id: a stream's resume.
-- - Tickets let a browser's EventSource, which cannot send headers, open a stream: a ticket is
--   stored hashed, bound to the session that asked for it, and lives 10 minutes.
-- =============================================================================================

drop function private.events_after(uuid, bigint, integer);

-- ---- one recipient, after a position ----------------------------------------------------------

create function private.events_after(p_user uuid, p_after_xact xid8, p_after_id bigint, p_limit integer)
returns table (id bigint, xact xid8, kind text, subject_id uuid, escrow_id uuid, data jsonb, occurred_at timestamptz)
language sql
stable
set search_path = ''
as $$
  select e.id, e.xact, e.kind, e.subject_id, e.escrow_id, e.data, e.occurred_at
    from private.event_recipients r join private.events e on e.id = r.event_id
   where r.user_id = p_user
     and (e.xact, e.id) > (p_after_xact, p_after_id)
     and e.xact < (select private.events_horizon())
   order by e.xact, e.id
   limit p_limit;
$$;
comment on function private.events_after(uuid, xid8, bigint, integer) is
  'A recipient''s events after the position (xact, id), in that order, below the commit horizon.';
revoke all on function private.events_after(uuid, xid8, bigint, integer) from public;
grant execute on function private.events_after(uuid, xid8, bigint, integer) to service_role;

-- ---- a stream's resume ------------------------------------------------------------------------

create function private.events_replay(p_user uuid, p_after_id bigint, p_limit integer)
returns table (id bigint, xact xid8, kind text, subject_id uuid, escrow_id uuid, data jsonb)
language plpgsql
stable
set search_path = ''
as $$
declare
  v_horizon xid8 := private.events_horizon();
  v_xact xid8;
begin
  -- where the recipient was: one of their own events (any other id tells them nothing)
  if p_after_id is not null then
    select e.xact into v_xact
      from private.event_recipients r join private.events e on e.id = r.event_id
     where r.user_id = p_user and r.event_id = p_after_id;
  end if;
  if v_xact is not null then
    return query
    select e.id, e.xact, e.kind, e.subject_id, e.escrow_id, e.data
      from private.event_recipients r join private.events e on e.id = r.event_id
     where r.user_id = p_user and (e.xact, e.id) > (v_xact, p_after_id) and e.xact < v_horizon
     order by e.xact, e.id
     limit p_limit;
  end if;
  -- last, the horizon the replay stopped at ('horizon' when the position was found or none was
  -- given, 'unknown' when it was not), with the recipient's last event below it in commit order:
  -- where a client told to start again resumes from. Commit order differs from id order only
  -- among transactions that ran at the same time, so the last 100 by id hold it.
  return query
  select (select l.id from (select e.id, e.xact
                              from private.event_recipients r join private.events e on e.id = r.event_id
                             where r.user_id = p_user and e.xact < v_horizon
                             order by r.event_id desc limit 100) l
           order by l.xact desc, l.id desc limit 1),
         v_horizon,
         case when p_after_id is null or v_xact is not null then 'horizon' else 'unknown' end,
         null::uuid, null::uuid, null::jsonb;
end
$$;
comment on function private.events_replay(uuid, bigint, integer) is
  'A stream''s resume: the recipient''s events after one of theirs, in commit order below the horizon, then a last row with the horizon (kind horizon, or unknown when the id is not theirs) and the recipient''s last event below it.';
revoke all on function private.events_replay(uuid, bigint, integer) from public;
grant execute on function private.events_replay(uuid, bigint, integer) to service_role;

-- ---- what one server's streams share ----------------------------------------------------------

create function private.events_window(p_users uuid[], p_after_xact xid8, p_after_id bigint, p_limit integer)
returns table (id bigint, xact xid8, recipient uuid, kind text, subject_id uuid, escrow_id uuid, data jsonb)
language sql
stable
set search_path = ''
as $$
  -- the next p_limit events of the whole log below the horizon, each with those of its recipients
  -- that are in p_users (one row with a null recipient when none is): the caller's position moves
  -- past every event of the window, whoever it was for
  with w as (
    select e.id, e.xact, e.kind, e.subject_id, e.escrow_id, e.data
      from private.events e
     where (e.xact, e.id) > (p_after_xact, p_after_id) and e.xact < (select private.events_horizon())
     order by e.xact, e.id
     limit p_limit)
  select w.id, w.xact, r.user_id, w.kind, w.subject_id, w.escrow_id, w.data
    from w left join private.event_recipients r on r.event_id = w.id and r.user_id = any(p_users)
   order by w.xact, w.id;
$$;
comment on function private.events_window(uuid[], xid8, bigint, integer) is
  'The next events of the log after (xact, id) below the commit horizon, with their recipients among p_users (null when none).';
revoke all on function private.events_window(uuid[], xid8, bigint, integer) from public;
grant execute on function private.events_window(uuid[], xid8, bigint, integer) to service_role;

-- ---- live sessions, for the heartbeat ---------------------------------------------------------

create function private.sessions_live(p_sessions uuid[])
returns setof uuid
language sql
stable
set search_path = ''
as $$
  select s.id from private.sessions s
   where s.id = any(p_sessions) and s.revoked_at is null and s.expires_at > now();
$$;
comment on function private.sessions_live(uuid[]) is 'Those of the sessions that are still live: a stream''s heartbeat check, for all streams of a server at once.';
revoke all on function private.sessions_live(uuid[]) from public;
grant execute on function private.sessions_live(uuid[]) to service_role;

-- =============================================================================================
-- Stream tickets
-- =============================================================================================

create table private.stream_tickets (
  -- SHA-256 of the ticket; the ticket itself is only ever in the answer that made it
  hash bytea primary key check (octet_length(hash) = 32),
  session_id uuid not null references private.sessions (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
comment on table private.stream_tickets is
  'Tickets for ?ticket= on events-stream (browsers'' EventSource sends no headers): hashed, bound to a session, 10 minutes.';
create index stream_tickets_session_idx on private.stream_tickets (session_id, created_at);
alter table private.stream_tickets enable row level security;
create policy "Service role manages stream tickets" on private.stream_tickets
  for all to service_role using (true) with check (true);
grant select, insert, delete on private.stream_tickets to service_role;

create function private.stream_ticket_create(p_session uuid, p_user uuid, p_hash bytea, p_seconds integer,
                                             p_max_live integer)
returns timestamptz
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_expires timestamptz := now() + pg_catalog.make_interval(secs => p_seconds);
begin
  perform private.session_assert(p_session, p_user);
  -- the session's expired tickets go, and its oldest live ones beyond p_max_live - 1
  delete from private.stream_tickets t
   where t.session_id = p_session
     and (t.expires_at <= now()
          or t.hash in (select o.hash from private.stream_tickets o
                         where o.session_id = p_session and o.expires_at > now()
                         order by o.created_at desc offset greatest(p_max_live - 1, 0)));
  insert into private.stream_tickets (hash, session_id, expires_at) values (p_hash, p_session, v_expires);
  return v_expires;
end
$$;
comment on function private.stream_ticket_create(uuid, uuid, bytea, integer, integer) is
  'Stores a ticket''s hash for a live session (ES401 otherwise), keeping at most p_max_live live tickets per session; answers when it expires.';
revoke all on function private.stream_ticket_create(uuid, uuid, bytea, integer, integer) from public;
grant execute on function private.stream_ticket_create(uuid, uuid, bytea, integer, integer) to service_role;

create function private.stream_ticket_session(p_hash bytea)
returns table (user_id uuid, session_id uuid, phone text)
language sql
stable
security definer
set search_path = ''
as $$
  select s.user_id, s.id, u.phone
    from private.stream_tickets t
    join private.sessions s on s.id = t.session_id
    join private.users u on u.id = s.user_id
   where t.hash = p_hash and t.expires_at > now()
     and s.revoked_at is null and s.expires_at > now();
$$;
comment on function private.stream_ticket_session(bytea) is
  'The live session a ticket was made for, while the ticket has not expired; no row otherwise.';
revoke all on function private.stream_ticket_session(bytea) from public;
grant execute on function private.stream_ticket_session(bytea) to service_role;
