-- =============================================================================================
-- Notifications: what the parties of an escrow are told in the app, one row per user and event,
-- written by the escrow transitions in their own transaction (private.notify). A user reads their
-- own and may mark them read; nothing else.
-- =============================================================================================

create table public.notifications (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references private.users (id) on delete cascade,
  escrow_id uuid not null references public.escrows (id) on delete cascade,
  conversation_id uuid not null references public.conversations (id) on delete cascade,
  -- the lists of shared/enums.ts (NOTIFICATION_EVENT_TYPES, ENTITY_TYPES, ACTION_LABELS); the enums test compares them
  event_type text not null check (event_type in (
    'escrow_created', 'invite_received', 'funded', 'funding_shortfall', 'active', 'payment_requested', 'declined',
    'cancelled', 'delivered', 'released', 'refunded', 'payout_succeeded', 'payout_failed', 'milestone_proposed',
    'milestone_updated', 'milestone_accepted', 'milestone_completed', 'milestone_released'
  )),
  message jsonb not null check (pg_catalog.jsonb_typeof(message) = 'object' and message ? 'kind'),
  entity_type text not null check (entity_type in ('escrow', 'transaction', 'milestone')),
  entity_id uuid not null,
  -- null: the notification offers no action
  action_label text check (action_label in (
    'View escrow', 'Review invitation', 'Fund escrow', 'Inspect delivery', 'Release funds', 'Leave a review',
    'View transaction', 'Review milestone', 'View milestone', 'Release milestone'
  )),
  is_read boolean not null default false,
  created_at timestamptz not null default now()
);
comment on table public.notifications is
  'What a party of an escrow is told in the app. Users read theirs and may mark them read.';
comment on column public.notifications.message is
  'What the notification says, as {kind, ...params}: rendered into its content by shared/messages.ts when read.';
create unique index notifications_user_created_key on public.notifications (user_id, created_at desc);
create index notifications_escrow_idx on public.notifications (escrow_id, created_at);
create index notifications_conversation_idx on public.notifications (conversation_id);
create trigger notifications_created_at_increasing before insert on public.notifications
  for each row execute function private.strictly_increasing_created_at('user_id');
alter table public.notifications enable row level security;

revoke all on public.notifications from anon, authenticated;
grant select on public.notifications to authenticated;
-- marking read is the one change a user makes to a notification (column privilege: is_read only)
grant update (is_read) on public.notifications to authenticated;
grant select, insert, update, delete on public.notifications to service_role;

create policy "Users can read their own notifications"
  on public.notifications for select to authenticated
  using (user_id = (select auth.uid()));
create policy "Users can mark their own notifications read"
  on public.notifications for update to authenticated
  using (user_id = (select auth.uid()))
  with check (user_id = (select auth.uid()));
create policy "Service role manages notifications" on public.notifications
  for all to service_role using (true) with check (true);

-- =============================================================================================
-- Writing one
-- =============================================================================================

-- A notification for p_user about escrow p_escrow, in its conversation (none when p_user is null:
-- an invited counterparty without an account yet). p_message is what it says, {kind, ...params}
-- (shared/messages.ts renders it when it is read).
create function private.notify(
  p_user uuid, p_escrow uuid, p_event text, p_message jsonb, p_entity_type text, p_entity uuid, p_action text
) returns void
language sql
set search_path = ''
as $$
  insert into public.notifications (user_id, escrow_id, conversation_id, event_type, message, entity_type, entity_id,
                                    action_label)
  select p_user, p_escrow, c.id, p_event, p_message, p_entity_type, p_entity, p_action
    from public.conversations c where c.escrow_id = p_escrow and p_user is not null;
$$;
comment on function private.notify(uuid, uuid, text, jsonb, text, uuid, text) is
  'Writes a notification (event type and message) for a user about an escrow, in the escrow''s conversation; nothing '
  'when the user is null.';
revoke execute on function private.notify(uuid, uuid, text, jsonb, text, uuid, text) from public, anon, authenticated;
grant execute on function private.notify(uuid, uuid, text, jsonb, text, uuid, text) to service_role;
