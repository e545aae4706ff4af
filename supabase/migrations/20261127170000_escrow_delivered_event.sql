-- =============================================================================================
-- escrow.delivered
--
-- Marking an escrow delivered moves it to `inspection` only in a category with an inspection
-- period; otherwise it sets delivered_at and keeps its status, and wrote no event. The escrow's
-- event is now also written when delivered_at is first set, with `delivered: true` in its facts,
-- and that event is the webhook type escrow.delivered (shared/webhooks/types.ts holds the list;
-- tests/integration/webhook-queue.clock.test.ts compares the two).
-- =============================================================================================

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
                                'previous_status', case when tg_op = 'UPDATE' then old.status end,
                                'delivered', tg_op = 'UPDATE' and old.delivered_at is null
                                             and new.delivered_at is not null));
  return null;
end
$$;
revoke all on function private.event_on_escrow() from public;

drop trigger escrows_event_changed on public.escrows;
create trigger escrows_event_changed after update on public.escrows
  for each row when (old.status is distinct from new.status or old.counterparty_id is distinct from new.counterparty_id
                     or old.released_amount is distinct from new.released_amount
                     or old.delivered_at is distinct from new.delivered_at)
  execute function private.event_on_escrow();

create or replace function private.webhook_event_type(p_kind text, p_data jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
  select case
    when p_kind <> 'escrow' or not (p_data ? 'previous_status') then null
    when p_data ->> 'previous_status' is null then 'escrow.created'
    when coalesce((p_data ->> 'delivered')::boolean, false) then 'escrow.delivered'
    when p_data ->> 'status' = p_data ->> 'previous_status' then null
    when p_data ->> 'status' in ('funded', 'released', 'refunded', 'cancelled', 'disputed')
      then 'escrow.' || (p_data ->> 'status')
  end;
$$;
comment on function private.webhook_event_type(text, jsonb) is
  'The webhook type of an event (escrow.created, escrow.delivered, escrow.funded ...), or null when it is not delivered.';
