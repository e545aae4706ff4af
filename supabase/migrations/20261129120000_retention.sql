-- =============================================================================================
-- Retention: the job purges each kind of personal data when its period ends
-- (docs/compliance.md#retention). The periods are not written here: shared/compliance/retention.ts
-- holds them, and the job (shared/jobs/jobs.ts) passes them in, so the docs generated from that
-- file and what the job does cannot disagree.
-- =============================================================================================
-- - private.retention_purge(now, periods, limit, erased): one step per kind (messages' content,
--   counterparty phones, disputes' text, the SMS outbox, codes, events, provider webhooks, the
--   operator audit, sessions, ...), each touching at most `limit` rows a run so that a backlog
--   is worked off over several runs instead of making one run slow. Returns one row per kind.
-- - private.cleanup_expired and private.webhook_purge, the two purges that existed, now take their
--   period too (and the first a limit).
-- - private.admin_audit stays append-only, except that private.retention_purge may delete rows
--   older than the period it is given (a transaction-local setting the trigger reads; the
--   service role still has no DELETE privilege on the table).
-- - sms_outbox.resend_of no longer keeps an old message alive: purging it clears the link.

-- ---- masked counterparty phones -------------------------------------------------------------

comment on column public.escrows.counterparty_phone is
  'The phone the counterparty was invited by (E.164); masked by private.mask_phone when that counterparty deletes their account, and five years after the escrow ended.';

-- ---- resends do not pin the message they resend ---------------------------------------------

alter table private.sms_outbox drop constraint sms_outbox_resend_of_fkey;
alter table private.sms_outbox add constraint sms_outbox_resend_of_fkey
  foreign key (resend_of) references private.sms_outbox (id) on delete set null;

-- ---- the audit: append-only, but for the retention purge ------------------------------------

create function private.admin_audit_guard()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  v_before text := pg_catalog.current_setting('private.retention_audit_before', true);
begin
  if tg_op = 'DELETE' and coalesce(v_before, '') <> '' and old.created_at < v_before::timestamptz then
    return old;
  end if;
  raise exception '% is append-only', tg_table_name using errcode = '42501';
end
$$;
comment on function private.admin_audit_guard() is
  'Trigger on private.admin_audit: refuses UPDATE and DELETE (42501), except the deletion of rows created before '
  'the transaction-local setting private.retention_audit_before, which only private.retention_purge sets.';
revoke all on function private.admin_audit_guard() from public;

drop trigger admin_audit_immutable on private.admin_audit;
create trigger admin_audit_immutable before update or delete on private.admin_audit
  for each row execute function private.admin_audit_guard();

-- ---- the two older purges take their period -------------------------------------------------

drop function private.cleanup_expired(timestamptz);
create function private.cleanup_expired(p_now timestamptz, p_keep interval, p_limit integer)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  v_removed integer;
begin
  delete from private.idempotency_keys
   where ctid = any(array(select k.ctid from private.idempotency_keys k
                           where k.created_at < p_now - p_keep
                           limit p_limit));
  get diagnostics v_removed = row_count;
  return v_removed;
end
$$;
comment on function private.cleanup_expired(timestamptz, interval, integer) is
  'The job''s housekeeping: deletes up to p_limit Idempotency-Keys created more than p_keep before p_now; how many.';
revoke all on function private.cleanup_expired(timestamptz, interval, integer) from public;
grant execute on function private.cleanup_expired(timestamptz, interval, integer) to service_role;

drop function private.webhook_purge(timestamptz, integer);
create function private.webhook_purge(p_now timestamptz, p_limit integer, p_keep interval)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  v_removed integer;
begin
  delete from private.webhook_deliveries
   where id in (select id from private.webhook_deliveries
                 where created_at < p_now - p_keep
                 order by created_at
                 limit p_limit);
  get diagnostics v_removed = row_count;
  return v_removed;
end
$$;
comment on function private.webhook_purge(timestamptz, integer, interval) is
  'Removes up to p_limit deliveries created more than p_keep before p_now, whatever their state.';
revoke all on function private.webhook_purge(timestamptz, integer, interval) from public;
grant execute on function private.webhook_purge(timestamptz, integer, interval) to service_role;

-- ---- the retention purge ----------------------------------------------------------------------

create function private.retention_purge(p_now timestamptz, p_periods jsonb, p_limit integer, p_erased text)
returns table (kind text, purged integer)
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_cut timestamptz;
  v_count integer;
  v_more integer;
begin
  if p_limit is null or p_limit < 1 then
    raise exception 'retention_purge: limit must be positive' using errcode = '22023';
  end if;
  if p_erased is null or pg_catalog.char_length(p_erased) < 10 then
    raise exception 'retention_purge: the erased text must be 10 characters or more' using errcode = '22023';
  end if;

  -- messages: content erased once the escrow ended longer ago than the period; message and escrow kept
  v_cut := p_now - private.retention_period(p_periods, 'messages');
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
  v_cut := p_now - private.retention_period(p_periods, 'counterparty_phones');
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
  v_cut := p_now - private.retention_period(p_periods, 'disputes');
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
  v_cut := p_now - private.retention_period(p_periods, 'events');
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
  v_cut := p_now - private.retention_period(p_periods, 'admin_audit');
  perform pg_catalog.set_config('private.retention_audit_before', v_cut::text, true);
  delete from private.admin_audit a
   where a.id = any(array(
     select x.id from private.admin_audit x where x.created_at < v_cut order by x.id limit p_limit));
  get diagnostics v_count = row_count;
  perform pg_catalog.set_config('private.retention_audit_before', '', true);
  kind := 'admin_audit'; purged := v_count; return next;

  -- the SMS outbox, counted from queueing (a resend of a purged message loses its link)
  v_cut := p_now - private.retention_period(p_periods, 'sms_outbox');
  delete from private.sms_outbox t
   where t.ctid = any(array(select x.ctid from private.sms_outbox x where x.created_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'sms_outbox'; purged := v_count; return next;

  -- one-time codes, counted from their expiry
  v_cut := p_now - private.retention_period(p_periods, 'otps');
  delete from private.otps t
   where t.ctid = any(array(select x.ctid from private.otps x where x.expires_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'otps'; purged := v_count; return next;

  -- phone checks, counted from their expiry (or the end of their claim)
  v_cut := p_now - private.retention_period(p_periods, 'phone_verifications');
  delete from private.phone_verifications t
   where t.ctid = any(array(select x.ctid from private.phone_verifications x where greatest(x.expires_at, x.claimed_until) < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'phone_verifications'; purged := v_count; return next;

  -- providers' payment webhooks
  v_cut := p_now - private.retention_period(p_periods, 'webhook_inbox');
  delete from private.webhook_inbox t
   where t.ctid = any(array(select x.ctid from private.webhook_inbox x where x.received_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'webhook_inbox'; purged := v_count; return next;

  -- providers' KYC webhooks
  v_cut := p_now - private.retention_period(p_periods, 'kyc_webhook_inbox');
  delete from private.kyc_webhook_inbox t
   where t.ctid = any(array(select x.ctid from private.kyc_webhook_inbox x where x.received_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'kyc_webhook_inbox'; purged := v_count; return next;

  -- webhooks that failed to apply
  v_cut := p_now - private.retention_period(p_periods, 'webhook_failures');
  delete from private.webhook_failures t
   where t.ctid = any(array(select x.ctid from private.webhook_failures x where x.created_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'webhook_failures'; purged := v_count; return next;

  -- four-eyes approvals, counted from the decision (or the expiry of an undecided one)
  v_cut := p_now - private.retention_period(p_periods, 'approvals');
  delete from private.approvals t
   where t.ctid = any(array(select x.ctid from private.approvals x where coalesce(x.decided_at, x.expires_at) < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'approvals'; purged := v_count; return next;

  -- freezes, counted from the unfreeze (a freeze in force stays)
  v_cut := p_now - private.retention_period(p_periods, 'account_freezes');
  delete from private.account_freezes t
   where t.ctid = any(array(select x.ctid from private.account_freezes x where x.unfrozen_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'account_freezes'; purged := v_count; return next;

  -- operator flags, counted from their resolution (an open one stays)
  v_cut := p_now - private.retention_period(p_periods, 'operator_flags');
  delete from private.operator_flags t
   where t.ctid = any(array(select x.ctid from private.operator_flags x where x.resolved_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'operator_flags'; purged := v_count; return next;

  -- payment flags
  v_cut := p_now - private.retention_period(p_periods, 'payment_flags');
  delete from private.payment_flags t
   where t.ctid = any(array(select x.ctid from private.payment_flags x where x.created_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'payment_flags'; purged := v_count; return next;

  -- read notifications (unread ones stay)
  v_cut := p_now - private.retention_period(p_periods, 'notifications');
  delete from public.notifications t
   where t.ctid = any(array(select x.ctid from public.notifications x where x.created_at < v_cut and x.is_read limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'notifications'; purged := v_count; return next;

  -- sessions, counted from their expiry; their refresh tokens, stream tickets and passes go with them
  v_cut := p_now - private.retention_period(p_periods, 'sessions');
  delete from private.sessions t
   where t.ctid = any(array(select x.ctid from private.sessions x where x.expires_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'sessions'; purged := v_count; return next;

  -- stream tickets, counted from their expiry
  v_cut := p_now - private.retention_period(p_periods, 'stream_tickets');
  delete from private.stream_tickets t
   where t.ctid = any(array(select x.ctid from private.stream_tickets x where x.expires_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'stream_tickets'; purged := v_count; return next;

  -- operators' second-factor passes, counted from their expiry
  v_cut := p_now - private.retention_period(p_periods, 'operator_passes');
  delete from private.operator_passes t
   where t.ctid = any(array(select x.ctid from private.operator_passes x where x.expires_at < v_cut limit p_limit));
  get diagnostics v_count = row_count;
  kind := 'operator_passes'; purged := v_count; return next;

  -- rate-limit events, past the longest window
  v_cut := p_now - private.retention_period(p_periods, 'rate_limit_events');
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

-- The period of one kind; a job that forgot one fails rather than purging everything or nothing.
create function private.retention_period(p_periods jsonb, p_kind text)
returns interval
language plpgsql
stable
set search_path = ''
as $$
declare
  v text := p_periods ->> p_kind;
begin
  if v is null then
    raise exception 'retention_purge: no period for %', p_kind using errcode = '22023';
  end if;
  if v::interval <= interval '0' then
    raise exception 'retention_purge: the period for % must be positive', p_kind using errcode = '22023';
  end if;
  return v::interval;
end
$$;
comment on function private.retention_period(jsonb, text) is
  'The period given for one kind of private.retention_purge, as an interval; fails for a missing or non-positive one.';
revoke all on function private.retention_period(jsonb, text) from public;

-- ---- indexes: each step finds its rows by a range scan, so a run with nothing due costs little ---

create index sms_outbox_created_idx on private.sms_outbox (created_at);
create index otps_expires_idx on private.otps (expires_at);
create index webhook_inbox_received_idx on private.webhook_inbox (received_at);
create index kyc_webhook_inbox_received_idx on private.kyc_webhook_inbox (received_at);
create index webhook_failures_created_idx on private.webhook_failures (created_at);
create index admin_audit_created_idx on private.admin_audit (created_at);
create index notifications_read_created_idx on public.notifications (created_at) where is_read;
create index sessions_expires_idx on private.sessions (expires_at);
create index stream_tickets_expires_idx on private.stream_tickets (expires_at);
create index operator_passes_expires_idx on private.operator_passes (expires_at);
create index rate_limit_events_created_idx on private.rate_limit_events (created_at);
create index events_occurred_idx on private.events (occurred_at);
-- escrows that ended, by when (messages), and those whose phone is still whole (masking)
create index escrows_ended_idx on public.escrows (coalesce(ended_at, cancelled_at, updated_at))
  where status in ('ended', 'cancelled', 'deleted');
create index escrows_ended_phone_whole_idx on public.escrows (coalesce(ended_at, cancelled_at, updated_at))
  where status in ('ended', 'cancelled', 'deleted') and counterparty_phone ~ '^\+234[0-9]{10}$';
create index disputes_closed_idx on public.disputes (coalesce(resolved_at, withdrawn_at))
  where status in ('resolved', 'withdrawn');
