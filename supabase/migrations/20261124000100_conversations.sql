-- =============================================================================================
-- Conversations: the messages the two parties of an escrow send each other, and the order of the
-- message feed (DESIGN §8.1, docs/conversations.md).
--
-- A conversation's feed, as one party reads it, is its messages and that party's notifications of
-- the escrow, merged by created_at. The `before` and `after` cursors are a bare timestamp, so they
-- are exact only if no two items of one feed share a created_at, and a client polling with `after`
-- misses nothing only if items become visible in the order of their created_at. Both follow from
-- one rule: every message and notification of a conversation takes its created_at under the
-- conversation's row lock, later than the conversation's previous item (last_item_at), and
-- commits before the next item can take one. Notifications are also strictly increasing per user
-- (notification-list pages across escrows), as before.
--
-- Lock order, so that nothing new can deadlock: the escrow (transitions: FOR UPDATE; message-send:
-- FOR SHARE), then the conversation, then the user's notification series. A message takes no lock
-- after the conversation's.
-- =============================================================================================

-- =============================================================================================
-- The feed's clock
-- =============================================================================================

alter table public.conversations add column last_item_at timestamptz;
comment on column public.conversations.last_item_at is
  'created_at of the conversation''s newest item (message or notification, any party): the next item is later.';
update public.conversations c
   set last_item_at = (select max(n.created_at) from public.notifications n where n.conversation_id = c.id);

-- Trigger (before insert) on public.messages and public.notifications: gives the new item a
-- created_at later than every earlier item of its conversation and, for a notification, of its
-- user, and records it as the conversation's newest.
create function private.feed_item_created_at()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  v_last timestamptz;
begin
  select c.last_item_at into v_last from public.conversations c where c.id = new.conversation_id for update;
  if v_last is not null and new.created_at <= v_last then
    new.created_at := v_last + interval '1 microsecond';
  end if;
  if tg_table_name = 'notifications' then
    -- the same lock key as private.strictly_increasing_created_at('user_id'), which this replaces
    perform pg_catalog.pg_advisory_xact_lock(
      pg_catalog.hashtextextended('public.notifications:' || new.user_id::text, 0));
    select max(n.created_at) into v_last from public.notifications n where n.user_id = new.user_id;
    if v_last is not null and new.created_at <= v_last then
      new.created_at := v_last + interval '1 microsecond';
    end if;
  end if;
  update public.conversations set last_item_at = new.created_at where id = new.conversation_id;
  return new;
end
$$;
comment on function private.feed_item_created_at() is
  'Trigger (before insert) on messages and notifications: created_at later than the conversation''s previous item '
  '(and the user''s previous notification), under the conversation''s row lock, so feed cursors are exact.';
revoke execute on function private.feed_item_created_at() from public, anon, authenticated;

drop trigger notifications_created_at_increasing on public.notifications;
create trigger notifications_feed_created_at before insert on public.notifications
  for each row execute function private.feed_item_created_at();

-- the feed reads one user's notifications of one conversation, newest first
drop index public.notifications_conversation_idx;
create index notifications_conversation_user_idx on public.notifications (conversation_id, user_id, created_at desc);

-- =============================================================================================
-- Messages
-- =============================================================================================

create table public.messages (
  id uuid primary key default gen_random_uuid(),
  conversation_id uuid not null references public.conversations (id) on delete cascade,
  sender_id uuid not null references private.users (id) on delete cascade,
  -- the list of shared/enums.ts (MESSAGE_TYPES); the enums test compares them
  message_type text not null default 'text' check (message_type in ('text')),
  -- trimmed by the API; 1-4000 characters (NUL cannot be stored in text at all)
  content text not null check (char_length(content) between 1 and 4000 and content = pg_catalog.btrim(content)),
  created_at timestamptz not null default now()
);
comment on table public.messages is
  'What the parties of an escrow write each other in its conversation. Parties read them; message-send writes them.';
-- unique: one conversation's messages never share a created_at (the trigger makes them increasing)
create unique index messages_conversation_created_key on public.messages (conversation_id, created_at desc);
-- a sender's recent messages: the rate limit (private.message_rate_wait) and the sender foreign key
create index messages_sender_created_idx on public.messages (sender_id, created_at desc);
create trigger messages_feed_created_at before insert on public.messages
  for each row execute function private.feed_item_created_at();
alter table public.messages enable row level security;

-- Parties read the messages of their escrows' conversations, unless the escrow was deleted; no
-- API role writes them directly (private.message_send does, with the state checks).
revoke all on public.messages from anon, authenticated;
grant select on public.messages to authenticated;
grant select, insert, update, delete on public.messages to service_role;

-- The subquery reads public.conversations and public.escrows under their own policies, so it
-- finds only the caller's escrows.
create policy "Parties can read their conversations' messages"
  on public.messages for select to authenticated
  using (exists (
    select 1 from public.conversations c join public.escrows e on e.id = c.escrow_id
     where c.id = conversation_id and e.status <> 'deleted'
  ));
create policy "Service role manages messages" on public.messages
  for all to service_role using (true) with check (true);

-- =============================================================================================
-- Sending one
-- =============================================================================================

-- Whether the parties may still write in the escrow's conversation at p_now: always while the deal
-- is open; for 30 days after it closed (released, refunded or cancelled, whichever closed it; an
-- ended escrow closed when it was released or refunded); never once it was deleted.
create function private.conversation_writable(e public.escrows, p_now timestamptz) returns boolean
language sql immutable set search_path = ''
as $$
  select e.status <> 'deleted'
     and (e.status not in ('released', 'refunded', 'cancelled', 'ended')
          or coalesce(e.released_at, e.refunded_at, e.cancelled_at, e.ended_at) > p_now - interval '30 days')
$$;
comment on function private.conversation_writable(public.escrows, timestamptz) is
  'Whether an escrow''s conversation takes messages at a time: open deals always, closed ones for 30 days after '
  'closing, deleted ones never.';
revoke execute on function private.conversation_writable(public.escrows, timestamptz) from public, anon, authenticated;
grant execute on function private.conversation_writable(public.escrows, timestamptz) to service_role;

-- message-send's rate limit: 0 when p_sender may send one more message now, otherwise the seconds
-- until they may (at most p_per_minute in 60 s and p_per_hour in an hour, all conversations
-- together), counted from their messages themselves. The sender's advisory lock, held until the
-- transaction ends, makes concurrent sends of one sender count one after the other; the clock is
-- read once the lock is held (see private.rate_limit_take).
create function private.message_rate_wait(p_sender uuid, p_per_minute integer, p_per_hour integer)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  v_now timestamptz;
  v_wait integer := 0;
  v_nth timestamptz;
  w record;
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('message-rate:' || p_sender::text, 0));
  v_now := pg_catalog.clock_timestamp();
  for w in select * from (values (p_per_minute, 60), (p_per_hour, 3600)) as t(lim, secs) loop
    -- the lim-th most recent message inside the window decides when a slot frees up
    select m.created_at into v_nth from public.messages m
     where m.sender_id = p_sender and m.created_at > v_now - pg_catalog.make_interval(secs => w.secs)
     order by m.created_at desc offset w.lim - 1 limit 1;
    if found then
      v_wait := greatest(v_wait, ceil(extract(epoch from (v_nth + pg_catalog.make_interval(secs => w.secs) - v_now)))::integer, 1);
    end if;
  end loop;
  return v_wait;
end
$$;
comment on function private.message_rate_wait(uuid, integer, integer) is
  'message-send''s rate limit: 0, or the seconds until the sender may send again (per minute and per hour, counted '
  'from their messages).';
revoke execute on function private.message_rate_wait(uuid, integer, integer) from public, anon, authenticated;
grant execute on function private.message_rate_wait(uuid, integer, integer) to service_role;

-- message-send: p_sender writes p_content (trimmed by the API) in the conversation. ES404 unless
-- the sender is a party of a live (not deleted) escrow; ES409 once the conversation is read-only.
-- The escrow is share-locked, so no transition (a delete) runs between the check and the insert.
create function private.message_send(p_conversation uuid, p_sender uuid, p_type text, p_content text, p_now timestamptz)
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
    raise exception 'conversation not found' using errcode = 'ES404';
  end if;
  if not private.conversation_writable(e, p_now) then
    raise exception 'this conversation is read-only: the deal closed more than 30 days ago' using errcode = 'ES409';
  end if;
  insert into public.messages (conversation_id, sender_id, message_type, content)
  values (p_conversation, p_sender, p_type, p_content)
  returning * into m;
  return m;
end
$$;
comment on function private.message_send(uuid, uuid, text, text, timestamptz) is
  'message-send: a party writes in the escrow''s conversation (ES404 to anyone else or once deleted; ES409 30 days '
  'after the deal closed).';
revoke execute on function private.message_send(uuid, uuid, text, text, timestamptz) from public, anon, authenticated;
grant execute on function private.message_send(uuid, uuid, text, text, timestamptz) to service_role;
