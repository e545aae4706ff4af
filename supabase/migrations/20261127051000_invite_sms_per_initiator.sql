-- =============================================================================================
-- Invite SMS per initiator (docs/escrow.md#invitations-and-their-limits, docs/security.md#invite-sms-per-initiator)
--
-- Escrows the counterparty pays were limited per initiator (20 an hour, 100 a day), but an escrow
-- the initiator pays sends its invite SMS when it is funded, and nothing limited those: 40 escrows
-- of NGN 0.01 to 40 phones, funded from the wallet and cancelled at once, sent 40 SMS in 0.8 s for
-- the price of 40 refunded kobo. Now every invite SMS takes a unit of its initiator's daily cap
-- too (INVITE_SMS_MAX_PER_INITIATOR_PER_DAY, 20 by default, in any 24 hours), as well as one of
-- the phone's (INVITE_SMS_MAX_PER_PHONE_PER_DAY), both or neither, where the SMS is queued
-- (private.queue_invite_sms). Over the initiator's cap:
--
--   * a funding is never refused: the escrow is funded, the counterparty is invited in the app
--     only, and the SMS row is recorded withheld ('invite_initiator_cap') and never sent;
--   * escrow-create of an escrow the counterparty pays (whose whole point is the invitation) is
--     429 with Retry-After before anything is created, the path of its hourly and daily limits:
--     private.invite_sms_initiator_wait answers the wait under the key's lock.
-- =============================================================================================

create function private.invite_sms_initiator_cap()
returns integer
language sql
stable
set search_path = ''
as $$
  select coalesce(nullif(pg_catalog.current_setting('escrow.invite_sms_max_per_initiator_per_day', true), '')::integer, 20);
$$;
comment on function private.invite_sms_initiator_cap() is
  'Invite SMS one initiator''s escrows may send in 24 hours: the transaction''s escrow.invite_sms_max_per_initiator_per_day (INVITE_SMS_MAX_PER_INITIATOR_PER_DAY), else 20.';
revoke all on function private.invite_sms_initiator_cap() from public;
grant execute on function private.invite_sms_initiator_cap() to service_role;

create function private.invite_sms_initiator_wait(p_initiator uuid, p_now timestamptz default null)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  v_cap integer := private.invite_sms_initiator_cap();
  v_key text := 'invite_sms_from:' || p_initiator::text;
  v_now timestamptz;
  v_oldest timestamptz;
begin
  if v_cap <= 0 then
    -- no invite SMS at all: invitations are in the app only, nothing to wait for
    return 0;
  end if;
  -- the lock private.rate_limit_take takes on this key, held to the end of the transaction: the
  -- invite this creation queues takes the slot this answer saw free
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('rate:' || v_key, 0));
  v_now := coalesce(p_now, pg_catalog.clock_timestamp());
  select e.created_at into v_oldest
    from private.rate_limit_events e
   where e.key = v_key and e.created_at > v_now - interval '1 day'
   order by e.created_at desc
  offset v_cap - 1 limit 1;
  if not found then
    return 0;
  end if;
  return greatest(ceil(extract(epoch from (v_oldest + interval '1 day' - v_now)))::integer, 1);
end
$$;
comment on function private.invite_sms_initiator_wait(p_initiator uuid, p_now timestamptz) is
  'Seconds until the initiator may send another invite SMS (0: now, or never any when the cap is 0), without taking a unit; locks the key until commit. escrow-create of a counterparty-paid escrow answers 429 with it.';
revoke all on function private.invite_sms_initiator_wait(p_initiator uuid, p_now timestamptz) from public;
grant execute on function private.invite_sms_initiator_wait(p_initiator uuid, p_now timestamptz) to service_role;

create or replace function private.queue_invite_sms(e public.escrows)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  v_name text;
  v_cap integer := private.invite_sms_cap();
  v_initiator_cap integer := private.invite_sms_initiator_cap();
  v_from text := 'invite_sms_from:' || e.initiator_id::text;
  v_withheld text;
begin
  select private.sms_first_name(first_name) into v_name from public.profiles where id = e.initiator_id;
  if v_cap <= 0 then
    v_withheld := 'invite_daily_cap';
  elsif v_initiator_cap <= 0 then
    v_withheld := 'invite_initiator_cap';
  elsif private.rate_limit_take(pg_catalog.jsonb_build_array(
          pg_catalog.jsonb_build_object('key', 'invite_sms:' || e.counterparty_phone, 'limit', v_cap,
                                        'window_seconds', 86400),
          pg_catalog.jsonb_build_object('key', v_from, 'limit', v_initiator_cap, 'window_seconds', 86400))) > 0 then
    -- neither unit was taken; the initiator's cap is named first when both are full (both keys are
    -- locked by rate_limit_take until commit, so the count is the one it saw)
    v_withheld := case when (select count(*) from private.rate_limit_events r
                               where r.key = v_from and r.created_at > pg_catalog.clock_timestamp() - interval '1 day')
                            >= v_initiator_cap
                       then 'invite_initiator_cap' else 'invite_daily_cap' end;
  end if;
  insert into private.sms_outbox (phone, message, sent_at, withheld)
  values (e.counterparty_phone,
          pg_catalog.jsonb_build_object(
            'kind', case when e.payer_role = 'counterparty' then 'escrow_invite' else 'escrow_invite_funded' end,
            'inviter', v_name, 'category', e.category, 'amount', e.amount),
          null, v_withheld);
  return v_withheld is null;
end
$$;
comment on function private.queue_invite_sms(public.escrows) is
  'Queues an escrow''s invite SMS (no user-written text but a safe first name), taking a unit of the phone''s daily cap and one of the initiator''s, both or neither; withheld (invite_daily_cap, invite_initiator_cap) over either, never refused. True when it is to be sent.';
revoke execute on function private.queue_invite_sms(public.escrows) from public, anon, authenticated;
grant execute on function private.queue_invite_sms(public.escrows) to service_role;

comment on column private.sms_outbox.withheld is
  'Why this message is never sent (null: it is to be sent): no_account, invite_daily_cap (the phone''s daily invite SMS), invite_initiator_cap (the initiator''s).';
