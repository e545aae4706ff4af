-- =============================================================================================
-- SMS outbox: every SMS is first a row here, written in the transaction that decided to send it,
-- and dispatched after the commit (shared/background.ts; the job retries what is left). Rows the
-- OTP flow writes in outbox mode are delivered as they are written (sent_at defaults to now);
-- rows that transitions queue start unsent (private.queue_sms).
--
-- A row records what to say as a message ({kind, ...params}); shared/messages.ts writes the text
-- when the row is dispatched, and the row keeps the body it sent. The OTP flow writes its body at
-- once (the code is kept in the body only, never in the message).
-- =============================================================================================

-- =============================================================================================
-- The outbox
-- =============================================================================================

-- withheld: why a message is recorded but never sent (null: it is to be sent). The same row is
--   written on both sides of a decision that must not show from outside (a login code for a phone
--   without an account), and for invites over a phone's daily cap.
-- expires_at: after this a queued message is pointless (a one-time code) and is not sent.
create table private.sms_outbox (
  id bigint generated always as identity primary key,
  phone text not null,
  message jsonb not null check (pg_catalog.jsonb_typeof(message) = 'object' and message ? 'kind'),
  body text,
  created_at timestamptz not null default now(),
  sent_at timestamptz default now(),
  attempts integer not null default 0,
  last_error text,
  withheld text,
  expires_at timestamptz
);
comment on table private.sms_outbox is
  'Every SMS, written in the transaction that decided to send it and dispatched after the commit.';
comment on column private.sms_outbox.message is
  'What to say: {kind, ...params}, rendered by shared/messages.ts (one-time codes: without the code).';
comment on column private.sms_outbox.body is
  'The text, written when the row is dispatched (one-time codes: when queued); null until then.';
comment on column private.sms_outbox.withheld is
  'Why this message is never sent (null: it is to be sent): no_account, invite_daily_cap.';
comment on column private.sms_outbox.expires_at is
  'A queued message not sent by then is dropped (one-time codes).';
create index sms_outbox_phone_idx on private.sms_outbox (phone, id desc);
create index sms_outbox_unsent_idx on private.sms_outbox (id) where sent_at is null and withheld is null;
alter table private.sms_outbox enable row level security;
create policy "Service role manages sms outbox" on private.sms_outbox
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.sms_outbox to service_role;

-- =============================================================================================
-- Queueing
-- =============================================================================================

create function private.queue_sms(p_phone text, p_message jsonb)
returns void
language sql
set search_path = ''
as $$
  insert into private.sms_outbox (phone, message, sent_at) values (p_phone, p_message, null);
$$;
comment on function private.queue_sms(text, jsonb) is
  'Queues an SMS (a message, rendered when sent) in the outbox, unsent: it is dispatched after the transaction '
  'commits (and retried by the job).';
revoke execute on function private.queue_sms(text, jsonb) from public, anon, authenticated;
grant execute on function private.queue_sms(text, jsonb) to service_role;
