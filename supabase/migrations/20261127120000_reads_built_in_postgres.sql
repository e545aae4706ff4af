-- =============================================================================================
-- Reads answered as Postgres builds them
--
-- The five most frequent reads (profile-get, wallet-get, escrow-list, transaction-list and
-- message-feed) each call one function of the `reads` schema, which returns the answer's `data`
-- as JSON text; the handler puts that text into the envelope without parsing it
-- (docs/performance.md, "Reads built by Postgres"). conversation-list reads its page of
-- conversations from one too (reads.conversation_page).
--
-- - Who reads what. Every function is executable by `authenticated` only and reads the caller
--   of the request's claims (auth.uid(), set by the request's setup statement). `reads` is not among
--   the schemas the Data API exposes.
--   - profile and transaction_list run as the caller (security invoker): row-level security and
--     column privileges apply exactly as they did to the queries they replace.
--   - wallet, escrow_list, message_feed and conversation_page run as their owner (security
--     definer) with the caller's rows chosen in their own WHERE clauses, the same conditions as the policies they
--     stand in for: the wallet is the caller's own; an escrow is the caller's when they are its
--     initiator or counterparty; a conversation when its escrow is, and not deleted; a
--     notification when it is addressed to them. Evaluated by the policies, those conditions were
--     checked again for every row, nested through each table a policy reads (a message's policy
--     reads conversations, whose policy reads escrows): that was most of these reads' time. And
--     the balance (private) and the senders' names (profiles are their owners') no longer need a
--     statement of their own as service_role.
--     tests/integration/reads-built.test.ts holds them to the policies: a stranger, the invited
--     counterparty, a deleted escrow.
-- - PL/pgSQL keeps the plan of each statement for the life of the connection, where a statement
--   sent as text is planned on every request: planning was most of Postgres's time in a read.
-- - The text is byte for byte what JSON.stringify wrote for the same rows
--   (tests/integration/reads-built.test.ts compares both): numbers as float8 prints them (the
--   shortest form that reads back, as JavaScript prints them), timestamps in UTC with their
--   microseconds, trailing zeros dropped, and a Z; strings through to_json.
-- - Words are never written here. Where an answer carries a sentence (a transaction's
--   description, a notification's content) or a figure TypeScript converts (a transaction's
--   metadata), the text holds a marker, one control character per kind (chr(1), chr(2), ...;
--   to_json escapes every control character, so a marker is never part of a value), and `slots`
--   lists each kind's values in the order of its markers as a JSON array of arrays. The handler
--   fills them (shared/core/json-text.ts).
-- =============================================================================================

create schema if not exists reads;
revoke all on schema reads from public;
grant usage on schema reads to authenticated;

-- ---- profile-get ------------------------------------------------------------------------------

create function reads.profile()
returns text
language plpgsql
stable
set search_path = ''
as $$
declare
  v_json text;
begin
  select '{"id":' || to_json(p.id)::text
      || ',"first_name":' || to_json(p.first_name)::text
      || ',"last_name":' || to_json(p.last_name)::text
      || ',"username":' || coalesce(to_json(p.username)::text, 'null')
      || ',"phone_number":' || to_json(p.phone_number)::text
      || ',"address":' || coalesce(to_json(p.address)::text, 'null')
      || ',"marital_status":' || coalesce(to_json(p.marital_status)::text, 'null')
      || ',"bio":' || coalesce(to_json(p.bio)::text, 'null')
      || ',"avatar":' || case when coalesce(p.avatar_url, '') = '' then 'null'
                              else '{"avatar_url":' || to_json(p.avatar_url)::text
                                || ',"storage_path":' || coalesce(to_json(p.avatar_storage_path)::text, 'null')
                                || ',"status":' || to_json(coalesce(p.avatar_status, 'active'))::text || '}' end
      || ',"next_of_kin":' || coalesce((
           select '{"id":' || to_json(n.id)::text
               || ',"first_name":' || to_json(n.first_name)::text
               || ',"last_name":' || to_json(n.last_name)::text
               || ',"phone":' || to_json(n.phone)::text
               || ',"address":' || to_json(n.address)::text
               || ',"relationship":' || to_json(n.relationship)::text
               || ',"created_at":"' || replace((n.created_at at time zone 'UTC')::text, ' ', 'T') || 'Z"}'
             from public.next_of_kin n where n.user_id = (select auth.uid())), 'null')
      || ',"created_at":"' || replace((p.created_at at time zone 'UTC')::text, ' ', 'T') || 'Z"'
      || ',"updated_at":"' || replace((p.updated_at at time zone 'UTC')::text, ' ', 'T') || 'Z"}'
    into v_json
    from public.profiles p
   where p.id = (select auth.uid());
  return v_json;
end
$$;
comment on function reads.profile() is
  'profile-get: the caller''s profile and next of kin as the answer''s JSON text; null without a profile.';
revoke all on function reads.profile() from public;
grant execute on function reads.profile() to authenticated;

-- ---- wallet-get -------------------------------------------------------------------------------

create function reads.wallet()
returns text
language plpgsql
stable security definer
set search_path = ''
as $$
declare
  v_me uuid := (select auth.uid());
  v_json text;
begin
  if v_me is null then
    return null;
  end if;
  select '{"balance":' || (private.wallet_balance(v_me)::float8 / 100)::text
      || ',"pending_deposits":'
      || (coalesce(sum(t.amount) filter (where t.category = 'deposit'), 0)::float8 / 100)::text
      || ',"pending_withdrawals":'
      || (coalesce(sum(t.amount) filter (where t.category = 'withdrawal'), 0)::float8 / 100)::text
      || ',"currency":"NGN","virtual_account":' || coalesce((
           select '{"status":' || to_json(v.status)::text
               || ',"account_number":' || coalesce(to_json(v.account_number)::text, 'null')
               || ',"account_name":' || coalesce(to_json(v.account_name)::text, 'null')
               || ',"bank_name":' || coalesce(to_json(v.bank_name)::text, 'null')
               || ',"failure_reason":'
               || case when v.status = 'inactive' then coalesce(to_json(v.failure_reason)::text, 'null') else 'null' end
               || ',"updated_at":"' || replace((v.updated_at at time zone 'UTC')::text, ' ', 'T') || 'Z"}'
             from public.virtual_accounts v where v.user_id = v_me), 'null')
      || '}'
    into v_json
    from public.transactions t
   where t.user_id = v_me and t.status = 'pending';
  return v_json;
end
$$;
comment on function reads.wallet() is
  'wallet-get: the caller''s balance, pending sums and virtual account as the answer''s JSON text (the caller''s own rows only).';
revoke all on function reads.wallet() from public;
grant execute on function reads.wallet() to authenticated;

-- ---- escrow-list ------------------------------------------------------------------------------

create function reads.escrow_list(p_status text, p_before timestamptz, p_limit integer)
returns text
language plpgsql
stable security definer
set search_path = ''
as $$
declare
  v_me uuid := (select auth.uid());
  v_json text;
begin
  -- the caller's escrows on either side (what the escrows' policy lets them read), newest first;
  -- a status, or every one but the deleted
  select '[' || coalesce(string_agg(
         '{"id":' || to_json(e.id)::text
      || ',"initiator_id":' || to_json(e.initiator_id)::text
      -- to the initiator, the counterparty once they accepted or declined; to the counterparty, themselves
      || ',"counterparty_id":' || case when e.initiator_id = v_me then coalesce(to_json(e.revealed_counterparty_id)::text, 'null')
                                      else to_json(v_me)::text end
      || ',"category":' || to_json(e.category)::text
      || ',"payer_role":' || to_json(e.payer_role)::text
      || ',"title":' || to_json(e.title)::text
      || ',"description":' || to_json(e.description)::text
      || ',"counterparty_phone":' || to_json(e.counterparty_phone)::text
      || ',"transaction_type":' || to_json(e.transaction_type)::text
      || ',"release_type":' || to_json(e.release_type)::text
      || ',"amount":' || (e.amount::float8 / 100)::text
      || ',"currency":' || to_json(e.currency)::text
      || ',"status":' || to_json(e.status)::text
      || ',"inspection_period_days":' || e.inspection_period_days::text
      || ',"created_at":"' || replace((e.created_at at time zone 'UTC')::text, ' ', 'T') || 'Z"'
      || ',"funded_at":' || coalesce('"' || replace((e.funded_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"released_at":' || coalesce('"' || replace((e.released_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"fee_breakdown":{"escrow_amount":' || (e.amount::float8 / 100)::text
      || ',"payer_fee":' || (e.payer_fee::float8 / 100)::text
      || ',"vat":' || (e.vat::float8 / 100)::text
      || ',"total_charge":' || (e.total_charge::float8 / 100)::text
      || ',"seller_fee":' || (e.seller_fee::float8 / 100)::text
      || ',"seller_payout":' || (e.seller_payout::float8 / 100)::text || '}'
      || ',"released_amount":' || (e.released_amount::float8 / 100)::text
      || ',"accepted_at":' || coalesce('"' || replace((e.accepted_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"delivered_at":' || coalesce('"' || replace((e.delivered_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"inspection_ends_at":'
      || coalesce('"' || replace((e.inspection_ends_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"refunded_at":' || coalesce('"' || replace((e.refunded_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"cancelled_at":' || coalesce('"' || replace((e.cancelled_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"declined_at":' || coalesce('"' || replace((e.declined_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"updated_at":"' || replace((e.updated_at at time zone 'UTC')::text, ' ', 'T') || 'Z"'
      || ',"conversation_id":' || to_json(e.conversation_id)::text || '}',
         ',' order by e.created_at desc), '') || ']'
    into v_json
    from (select e.id, e.initiator_id, e.revealed_counterparty_id, e.category, e.payer_role, e.title, e.description,
                 e.counterparty_phone, e.transaction_type, e.release_type, e.amount, e.currency, e.status,
                 e.inspection_period_days, e.created_at, e.funded_at, e.released_at, e.payer_fee, e.vat,
                 e.total_charge, e.seller_fee, e.seller_payout, e.released_amount, e.accepted_at, e.delivered_at,
                 e.inspection_ends_at, e.refunded_at, e.cancelled_at, e.declined_at, e.updated_at,
                 c.id as conversation_id
            from public.escrows e join public.conversations c on c.escrow_id = e.id
           where (e.initiator_id = v_me or e.counterparty_id = v_me)
             and case when p_status is null then e.status <> 'deleted' else e.status = p_status end
             and e.created_at < coalesce(p_before, 'infinity'::timestamptz)
           order by e.created_at desc
           limit p_limit) e;
  return v_json;
end
$$;
comment on function reads.escrow_list(text, timestamptz, integer) is
  'escrow-list: a page of the caller''s escrows, newest first, as the answer''s JSON text.';
revoke all on function reads.escrow_list(text, timestamptz, integer) from public;
grant execute on function reads.escrow_list(text, timestamptz, integer) to authenticated;

-- ---- transaction-list -------------------------------------------------------------------------

create function reads.transaction_list(
  p_category public.transaction_category,
  p_escrow_id uuid,
  p_status public.transaction_status,
  p_before timestamptz,
  p_limit integer,
  out body text,
  out slots text
)
language plpgsql
stable
set search_path = ''
as $$
begin
  -- the description (chr(1), from the stored message) and the metadata (chr(2), its kobo figures
  -- in naira) are filled by the handler
  select '{"data":[' || coalesce(string_agg(
         '{"id":' || to_json(t.id)::text
      || ',"type":' || to_json(t.type)::text
      || ',"category":' || to_json(t.category)::text
      || ',"description":' || chr(1)
      || ',"amount":' || (t.amount::float8 / 100)::text
      || ',"currency":' || to_json(t.currency)::text
      || ',"direction":' || to_json(t.direction)::text
      || ',"status":' || to_json(t.status)::text
      || ',"escrow_id":' || coalesce(to_json(t.escrow_id)::text, 'null')
      || ',"milestone_id":' || coalesce(to_json(t.milestone_id)::text, 'null')
      || ',"provider":' || to_json(t.provider)::text
      || ',"provider_charge_id":' || coalesce(to_json(t.provider_charge_id)::text, 'null')
      || ',"provider_transfer_id":' || coalesce(to_json(t.provider_transfer_id)::text, 'null')
      || ',"provider_refund_id":' || coalesce(to_json(t.provider_refund_id)::text, 'null')
      || ',"metadata":' || chr(2)
      || ',"created_at":"' || replace((t.created_at at time zone 'UTC')::text, ' ', 'T') || 'Z"'
      || ',"completed_at":'
      || coalesce('"' || replace((t.completed_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null') || '}',
         ',' order by t.created_at desc), '')
      || '],"next_cursor":'
      || coalesce('"' || replace((min(t.created_at) at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null') || '}',
         '[[' || coalesce(string_agg(coalesce(t.message::text, 'null'), ',' order by t.created_at desc), '')
      || '],[' || coalesce(string_agg(t.metadata::text, ',' order by t.created_at desc), '') || ']]'
    into body, slots
    from (select t.id, t.type, t.category, t.message, t.amount, t.currency, t.direction, t.status, t.escrow_id,
                 t.milestone_id, t.provider, t.provider_charge_id, t.provider_transfer_id, t.provider_refund_id,
                 t.metadata, t.created_at, t.completed_at
            from public.transactions t
           where t.user_id = (select auth.uid())
             and (p_category is null or t.category = p_category)
             and (p_escrow_id is null or t.escrow_id = p_escrow_id)
             and (p_status is null or t.status = p_status)
             and t.created_at < coalesce(p_before, 'infinity'::timestamptz)
           order by t.created_at desc
           limit p_limit) t;
end
$$;
comment on function reads.transaction_list(public.transaction_category, uuid, public.transaction_status, timestamptz, integer) is
  'transaction-list: a page of the caller''s transactions, newest first, and the cursor, as the answer''s JSON text with markers for descriptions (chr(1)) and metadata (chr(2)).';
revoke all on function reads.transaction_list(public.transaction_category, uuid, public.transaction_status, timestamptz, integer) from public;
grant execute on function reads.transaction_list(public.transaction_category, uuid, public.transaction_status, timestamptz, integer) to authenticated;

-- ---- message-feed -----------------------------------------------------------------------------

create function reads.message_feed(
  p_conversation uuid,
  p_before timestamptz,
  p_after timestamptz,
  p_limit integer,
  out body text,
  out slots text
)
language plpgsql
stable security definer
set search_path = ''
as $$
declare
  v_me uuid := (select auth.uid());
begin
  -- a conversation whose escrow is not the caller's, or was deleted: nulls (what the policies on
  -- conversations and messages hide)
  if not exists (select 1 from public.conversations c join public.escrows e on e.id = c.escrow_id
                  where c.id = p_conversation and e.status <> 'deleted'
                    and (e.initiator_id = v_me or e.counterparty_id = v_me)) then
    return;
  end if;
  -- The page: `after` gives the oldest `limit` items newer than it, otherwise the newest `limit`
  -- older than `before` (or of all); each source cut to `limit` on its own index (the branch of the
  -- other direction is skipped when the statement runs). Either way the items go out oldest
  -- first: the conversation's messages, with their senders' names, and the caller's own
  -- notifications in it. A notification's content (chr(1), from its message) is filled by the
  -- handler.
  with items as (
    (select m.id, 'message' as source, m.created_at, c.escrow_id, m.content, null::jsonb as message, m.sender_id,
            m.message_type, null::text as event_type, null::text as entity_type, null::uuid as entity_id,
            null::text as action_label, null::boolean as is_read
       from public.messages m join public.conversations c on c.id = m.conversation_id
      where p_after is not null and m.conversation_id = p_conversation and m.created_at > p_after
      order by m.created_at asc limit p_limit)
    union all
    (select m.id, 'message', m.created_at, c.escrow_id, m.content, null, m.sender_id, m.message_type, null, null,
            null, null, null
       from public.messages m join public.conversations c on c.id = m.conversation_id
      where p_after is null and m.conversation_id = p_conversation
        and m.created_at < coalesce(p_before, 'infinity'::timestamptz)
      order by m.created_at desc limit p_limit)
    union all
    (select n.id, 'notification', n.created_at, n.escrow_id, null, n.message, null, null, n.event_type,
            n.entity_type, n.entity_id, n.action_label, n.is_read
       from public.notifications n
      where p_after is not null and n.conversation_id = p_conversation and n.user_id = v_me
        and n.created_at > p_after
      order by n.created_at asc limit p_limit)
    union all
    (select n.id, 'notification', n.created_at, n.escrow_id, null, n.message, null, null, n.event_type,
            n.entity_type, n.entity_id, n.action_label, n.is_read
       from public.notifications n
      where p_after is null and n.conversation_id = p_conversation and n.user_id = v_me
        and n.created_at < coalesce(p_before, 'infinity'::timestamptz)
      order by n.created_at desc limit p_limit)
  ), page as (
    (select * from items where p_after is not null order by created_at asc limit p_limit)
    union all
    (select * from items where p_after is null order by created_at desc limit p_limit)
  )
  select '[' || coalesce(string_agg(
         '{"id":' || to_json(i.id)::text
      || ',"source":' || to_json(i.source)::text
      || ',"created_at":"' || replace((i.created_at at time zone 'UTC')::text, ' ', 'T') || 'Z"'
      || ',"content":' || case when i.source = 'message' then to_json(coalesce(i.content, ''))::text else chr(1) end
      || ',"event_type":' || coalesce(to_json(i.event_type)::text, 'null')
      || ',"escrow_id":' || coalesce(to_json(i.escrow_id)::text, 'null')
      || ',"sender_id":' || coalesce(to_json(i.sender_id)::text, 'null')
      || ',"message_type":' || coalesce(to_json(i.message_type)::text, 'null')
      || ',"sender_first_name":' || coalesce(to_json(p.first_name)::text, 'null')
      || ',"sender_last_name":' || coalesce(to_json(p.last_name)::text, 'null')
      || ',"sender_avatar_url":' || coalesce(to_json(p.avatar_url)::text, 'null')
      || ',"entity_type":' || coalesce(to_json(i.entity_type)::text, 'null')
      || ',"entity_id":' || coalesce(to_json(i.entity_id)::text, 'null')
      || ',"action_label":' || coalesce(to_json(i.action_label)::text, 'null')
      || ',"is_read":' || coalesce(to_json(i.is_read)::text, 'null') || '}',
         ',' order by i.created_at asc), '') || ']',
         '[[' || coalesce(string_agg(i.message::text, ',' order by i.created_at asc)
                            filter (where i.source = 'notification'), '') || ']]'
    into body, slots
    from page i left join public.profiles p on p.id = i.sender_id;
end
$$;
comment on function reads.message_feed(uuid, timestamptz, timestamptz, integer) is
  'message-feed: a page of a conversation of the caller''s escrow, oldest first, as the answer''s JSON text with markers for notification contents (chr(1)); nulls when the escrow is not the caller''s or was deleted.';
revoke all on function reads.message_feed(uuid, timestamptz, timestamptz, integer) from public;
grant execute on function reads.message_feed(uuid, timestamptz, timestamptz, integer) to authenticated;

-- ---- conversation-list (the page's conversations) ---------------------------------------------

create function reads.conversation_page(p_before timestamptz, p_limit integer)
returns table (
  conversation_id uuid,
  escrow_id uuid,
  escrow_title text,
  escrow_status text,
  counterparty_id uuid,
  unread_count integer,
  last_activity_at timestamptz
)
language plpgsql
stable security definer
set search_path = ''
as $$
declare
  v_me uuid := (select auth.uid());
begin
  -- Every conversation of the caller's escrows (not deleted) with the time of its newest item in
  -- the caller's view (the messages and the caller's own notifications), newest activity first.
  -- Under the policies, each of the subqueries below was checked again through the messages',
  -- conversations' and escrows' policies for every conversation of the caller.
  return query
  select * from (
    select c.id, e.id, e.title, e.status,
           -- the other party as the caller may know them: an initiator learns who holds the
           -- invited phone when they accept or decline, or write in the conversation
           case when e.initiator_id = v_me
                then coalesce(e.revealed_counterparty_id,
                              (select m.sender_id from public.messages m
                                where m.conversation_id = c.id and m.sender_id <> v_me limit 1))
                else e.initiator_id end,
           (select count(*)::int from public.notifications n
             where n.conversation_id = c.id and n.user_id = v_me and not n.is_read),
           greatest(
             c.created_at,
             (select max(m.created_at) from public.messages m where m.conversation_id = c.id),
             (select max(n.created_at) from public.notifications n
               where n.conversation_id = c.id and n.user_id = v_me)
           ) as last_activity_at
      from public.conversations c join public.escrows e on e.id = c.escrow_id
     where (e.initiator_id = v_me or e.counterparty_id = v_me) and e.status <> 'deleted'
  ) mine (conversation_id, escrow_id, escrow_title, escrow_status, counterparty_id, unread_count, last_activity_at)
   where mine.last_activity_at < coalesce(p_before, 'infinity'::timestamptz)
   order by mine.last_activity_at desc, mine.conversation_id desc
   limit p_limit;
end
$$;
comment on function reads.conversation_page(timestamptz, integer) is
  'conversation-list: the conversations of the caller''s escrows, newest activity first, a page of them.';
revoke all on function reads.conversation_page(timestamptz, integer) from public;
grant execute on function reads.conversation_page(timestamptz, integer) to authenticated;
