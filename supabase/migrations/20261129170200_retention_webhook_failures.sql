-- =============================================================================================
-- Retention: a provider webhook that failed is kept until it is resolved (docs/compliance.md#retention)
--
-- - private.retention_purge deleted private.webhook_failures rows 180 days after the failure
--   whatever their state, while admin-queue-list counts a failure as open until a later delivery
--   of its event was applied (a row of private.webhook_inbox for the provider and event key): an
--   open failure vanished from the operators' queue unresolved. Now only failures whose event was
--   applied are purged after the period; an unresolved one stays.
-- - The failures are purged before the inbox, and an inbox row is not purged while a failure of
--   its event is kept: a resolved failure never looks unresolved for lack of its inbox row.
-- - An index on the failures' (provider, event_key) serves that check.
-- =============================================================================================

create index webhook_failures_event_idx on private.webhook_failures (provider, event_key);

create or replace function private.retention_purge(p_now timestamptz, p_periods jsonb, p_limit integer, p_erased text)
returns table (kind text, purged integer)
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_cut timestamptz;
  v_count integer;
  v_more integer;
  v_failures integer;
begin
  if p_limit is null or p_limit < 1 then
    raise exception 'retention_purge: limit must be positive' using errcode = '22023';
  end if;
  if p_erased is null or pg_catalog.char_length(p_erased) < 10 then
    raise exception 'retention_purge: the erased text must be 10 characters or more' using errcode = '22023';
  end if;

  -- messages: content erased once the escrow ended longer ago than the period; message and escrow kept
  v_cut := private.retention_cut(p_now, p_periods, 'messages');
  update public.messages m set content = p_erased
   where m.id = any(array(
     select m2.id from public.messages m2
       join public.conversations c on c.id = m2.conversation_id
       join public.escrows e on e.id = c.escrow_id
      where m2.content <> p_erased
        and e.status in ('ended', 'cancelled', 'deleted')
        and coalesce(e.ended_at, e.cancelled_at, e.updated_at) < v_cut
      limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'messages'; purged := v_count; return next;

  -- counterparty phones masked, a merchant's metadata erased; the escrow kept
  v_cut := private.retention_cut(p_now, p_periods, 'counterparty_phones');
  update public.escrows e
     set counterparty_phone = private.mask_phone(e.counterparty_phone)
   where e.id = any(array(
     select x.id from public.escrows x
      where x.counterparty_phone ~ '^\+234[0-9]{10}$'
        and x.status in ('ended', 'cancelled', 'deleted')
        and coalesce(x.ended_at, x.cancelled_at, x.updated_at) < v_cut
      limit p_limit));
  get diagnostics v_count = row_count;
  update private.merchant_escrows me set metadata = null
   where me.escrow_id = any(array(
     select m.escrow_id from private.merchant_escrows m join public.escrows x on x.id = m.escrow_id
      where m.metadata is not null
        and x.status in ('ended', 'cancelled', 'deleted')
        and coalesce(x.ended_at, x.cancelled_at, x.updated_at) < v_cut
      limit p_limit));
  get diagnostics v_more = row_count;
  kind := 'counterparty_phones'; purged := v_count + v_more; return next;

  -- disputes: the parties' reason and the resolution note erased; outcome and amounts kept
  v_cut := private.retention_cut(p_now, p_periods, 'disputes');
  update public.disputes d
     set reason = p_erased,
         resolution = case when d.resolution is null then null else p_erased end
   where d.id = any(array(
     select x.id from public.disputes x
      where x.reason <> p_erased
        and x.status in ('resolved', 'withdrawn')
        and coalesce(x.resolved_at, x.withdrawn_at) < v_cut
      limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'disputes'; purged := v_count; return next;

  -- events and their recipients; never one the webhook feed has not read yet
  v_cut := private.retention_cut(p_now, p_periods, 'events');
  with gone as (
    delete from private.events ev
     where ev.id = any(array(
       select e.id from private.events e, private.webhook_feed f
        where f.only_row and e.occurred_at < v_cut and (e.xact, e.id) <= (f.xact, f.event_id)
        order by e.id
        limit p_limit))
    returning ev.id
  ), recipients as (
    delete from private.event_recipients r where r.event_id in (select id from gone)
  )
  select count(*)::integer into v_count from gone;
  kind := 'events'; purged := v_count; return next;

  -- the operator audit: append-only but for this (private.admin_audit_guard)
  v_cut := private.retention_cut(p_now, p_periods, 'admin_audit');
  perform pg_catalog.set_config('private.retention_audit_before', v_cut::text, true);
  delete from private.admin_audit a
   where a.id = any(array(
     select x.id from private.admin_audit x where x.created_at < v_cut order by x.id limit p_limit));
  get diagnostics v_count = row_count;
  perform pg_catalog.set_config('private.retention_audit_before', '', true);
  kind := 'admin_audit'; purged := v_count; return next;

  -- the SMS outbox, counted from queueing (a resend of a purged message loses its link)
  v_cut := private.retention_cut(p_now, p_periods, 'sms_outbox');
  delete from private.sms_outbox t
   where t.ctid = any(array(select x.ctid from private.sms_outbox x where x.created_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'sms_outbox'; purged := v_count; return next;

  -- one-time codes, counted from their expiry
  v_cut := private.retention_cut(p_now, p_periods, 'otps');
  delete from private.otps t
   where t.ctid = any(array(select x.ctid from private.otps x where x.expires_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'otps'; purged := v_count; return next;

  -- phone checks, counted from their expiry (or the end of their claim)
  v_cut := private.retention_cut(p_now, p_periods, 'phone_verifications');
  delete from private.phone_verifications t
   where t.ctid = any(array(select x.ctid from private.phone_verifications x where greatest(x.expires_at, x.claimed_until) < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'phone_verifications'; purged := v_count; return next;

  -- webhooks that failed to apply: only those a later delivery applied (the event is in the inbox);
  -- one never applied stays, counted in the operators' queue (webhooks_failed) until it is. Done
  -- before the inbox, whose row is what shows that the failure was resolved.
  v_cut := private.retention_cut(p_now, p_periods, 'webhook_failures');
  delete from private.webhook_failures t
   where t.ctid = any(array(
     select x.ctid from private.webhook_failures x
      where x.created_at < v_cut
        and exists (select 1 from private.webhook_inbox i where i.provider = x.provider and i.event_key = x.event_key)
      limit p_limit));
  get diagnostics v_failures = row_count;

  -- providers' payment webhooks; not one while a failure of its event is kept (the failure would
  -- then look unresolved)
  v_cut := private.retention_cut(p_now, p_periods, 'webhook_inbox');
  delete from private.webhook_inbox t
   where t.ctid = any(array(
     select x.ctid from private.webhook_inbox x
      where x.received_at < v_cut
        and not exists (select 1 from private.webhook_failures w
                         where w.provider = x.provider and w.event_key = x.event_key)
      limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'webhook_inbox'; purged := v_count; return next;

  -- providers' KYC webhooks
  v_cut := private.retention_cut(p_now, p_periods, 'kyc_webhook_inbox');
  delete from private.kyc_webhook_inbox t
   where t.ctid = any(array(select x.ctid from private.kyc_webhook_inbox x where x.received_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'kyc_webhook_inbox'; purged := v_count; return next;

  -- webhooks that failed to apply: purged above, before the inbox
  kind := 'webhook_failures'; purged := v_failures; return next;

  -- four-eyes approvals, counted from the decision (or the expiry of an undecided one)
  v_cut := private.retention_cut(p_now, p_periods, 'approvals');
  delete from private.approvals t
   where t.ctid = any(array(select x.ctid from private.approvals x where coalesce(x.decided_at, x.expires_at) < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'approvals'; purged := v_count; return next;

  -- freezes, counted from the unfreeze (a freeze in force stays)
  v_cut := private.retention_cut(p_now, p_periods, 'account_freezes');
  delete from private.account_freezes t
   where t.ctid = any(array(select x.ctid from private.account_freezes x where x.unfrozen_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'account_freezes'; purged := v_count; return next;

  -- operator flags, counted from their resolution (an open one stays)
  v_cut := private.retention_cut(p_now, p_periods, 'operator_flags');
  delete from private.operator_flags t
   where t.ctid = any(array(select x.ctid from private.operator_flags x where x.resolved_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'operator_flags'; purged := v_count; return next;

  -- payment flags
  v_cut := private.retention_cut(p_now, p_periods, 'payment_flags');
  delete from private.payment_flags t
   where t.ctid = any(array(select x.ctid from private.payment_flags x where x.created_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'payment_flags'; purged := v_count; return next;

  -- read notifications (unread ones stay)
  v_cut := private.retention_cut(p_now, p_periods, 'notifications');
  delete from public.notifications t
   where t.ctid = any(array(select x.ctid from public.notifications x where x.created_at < v_cut and x.is_read limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'notifications'; purged := v_count; return next;

  -- sessions, counted from their expiry; their refresh tokens, stream tickets and passes go with them
  v_cut := private.retention_cut(p_now, p_periods, 'sessions');
  delete from private.sessions t
   where t.ctid = any(array(select x.ctid from private.sessions x where x.expires_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'sessions'; purged := v_count; return next;

  -- stream tickets, counted from their expiry
  v_cut := private.retention_cut(p_now, p_periods, 'stream_tickets');
  delete from private.stream_tickets t
   where t.ctid = any(array(select x.ctid from private.stream_tickets x where x.expires_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'stream_tickets'; purged := v_count; return next;

  -- operators' second-factor passes, counted from their expiry
  v_cut := private.retention_cut(p_now, p_periods, 'operator_passes');
  delete from private.operator_passes t
   where t.ctid = any(array(select x.ctid from private.operator_passes x where x.expires_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'operator_passes'; purged := v_count; return next;

  -- rate-limit events, past the longest window
  v_cut := private.retention_cut(p_now, p_periods, 'rate_limit_events');
  delete from private.rate_limit_events t
   where t.ctid = any(array(select x.ctid from private.rate_limit_events x where x.created_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'rate_limit_events'; purged := v_count; return next;
end
$$;
comment on function private.retention_purge(timestamptz, jsonb, integer, text) is
  'The job''s retention purges: for each kind of personal data (shared/compliance/retention.ts), erases or deletes '
  'up to p_limit rows whose period (p_periods: kind -> interval) ended before p_now; one row per kind with the '
  'count. Nothing of the ledger or the transactions is touched.';
revoke all on function private.retention_purge(timestamptz, jsonb, integer, text) from public;
grant execute on function private.retention_purge(timestamptz, jsonb, integer, text) to service_role;
