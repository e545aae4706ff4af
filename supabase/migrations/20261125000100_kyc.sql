-- =============================================================================================
-- KYC tiers and limits (DESIGN §8.4, docs/kyc.md)
--
-- A user's tier is the highest tier whose checks, and every lower tier's, have passed. Checks
-- pass or fail only by a provider's result (webhook-kyc from Sumsub for tiers 1-2,
-- webhook-identity for NIN, BVN and the business checks), recorded by private.kyc_record, which
-- re-evaluates the tier in the same transaction. The tier's limits are enforced when money is
-- asked to move into or out of the service (top-up, escrow funding, withdrawal), inside the SQL
-- function that creates the movement, under a per-user lock, so concurrent requests cannot
-- together pass a daily limit. Money a provider confirms is never refused.
-- =============================================================================================

-- =============================================================================================
-- Tiers and their limits
-- =============================================================================================

create table private.kyc_tiers (
  tier smallint primary key check (tier between 0 and 4),
  -- one top-up, escrow funding (its total charge) or withdrawal, in kobo
  single_limit bigint not null check (single_limit > 0),
  -- money moved into and out of the service since 00:00 Africa/Lagos, in kobo
  daily_limit bigint not null check (daily_limit > 0),
  -- the wallet after a top-up, in kobo; null: no limit
  balance_limit bigint check (balance_limit > 0),
  -- the checks this tier adds to the lower tiers' (shared/kyc.ts KYC_TIERS; a test compares them)
  checks text[] not null
);
comment on table private.kyc_tiers is
  'KYC tiers 0-4: the checks each adds and its limits in kobo (single, daily since 00:00 Africa/Lagos, wallet balance; null = none). Operators may change the limits; shared/kyc.ts holds the defaults.';
alter table private.kyc_tiers enable row level security;
create policy "Service role manages KYC tiers" on private.kyc_tiers
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.kyc_tiers to service_role;

insert into private.kyc_tiers (tier, single_limit, daily_limit, balance_limit, checks) values
  (0, 2000000, 5000000, 10000000, '{}'),
  (1, 5000000, 30000000, 30000000, '{kyc_basic}'),
  (2, 20000000, 50000000, 50000000, '{kyc_address}'),
  (3, 500000000, 500000000, null, '{nin,bvn}'),
  (4, 5000000000, 5000000000, null, '{cac,tin,director_match,bank_account}');

alter table private.users add column kyc_tier smallint not null default 0 check (kyc_tier between 0 and 4);
comment on column private.users.kyc_tier is
  'The KYC tier reached (private.kyc_tier_of over the passed checks), kept by private.kyc_record.';

-- =============================================================================================
-- Checks, identity requests and the KYC webhook inbox
-- =============================================================================================

create table private.kyc_checks (
  user_id uuid not null references private.users (id) on delete cascade,
  -- shared/enums.ts KYC_CHECK_TYPES; the enums test compares them
  check_type text not null check (check_type in (
    'kyc_basic', 'kyc_address', 'nin', 'bvn', 'cac', 'tin', 'director_match', 'bank_account'
  )),
  -- shared/enums.ts KYC_CHECK_STATUSES
  status text not null check (status in ('pending', 'passed', 'failed')),
  reject_labels text[] not null default '{}',
  -- a failure: RETRY (the user may try again) or FINAL (not)
  reject_type text check (reject_type in ('RETRY', 'FINAL')),
  -- the provider that answered last: sumsub, sandbox, an identity provider, or test
  provider text not null,
  -- the identity request (identity-verify) or the Sumsub applicant of the latest result
  reference text,
  -- identity checks: the last 4 characters of the number checked (the number itself is never kept)
  id_last4 text,
  -- the provider's time of the latest result applied: an older result arriving late is ignored
  result_at timestamptz,
  passed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (user_id, check_type),
  constraint kyc_checks_failure_type check ((status = 'failed') = (reject_type is not null))
);
comment on table private.kyc_checks is
  'Each KYC check of a user and its latest state (pending, passed, failed with labels and RETRY/FINAL); written only by private.kyc_record and private.identity_request_create.';
alter table private.kyc_checks enable row level security;
create policy "Service role manages KYC checks" on private.kyc_checks
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.kyc_checks to service_role;

create table private.identity_requests (
  -- ours, sent to the identity provider and echoed in its webhook
  reference text primary key check (reference ~ '^idv_[0-9a-f]{32}$'),
  user_id uuid not null references private.users (id) on delete cascade,
  check_type text not null check (check_type in ('nin', 'bvn', 'cac', 'tin', 'director_match', 'bank_account')),
  -- HMAC-SHA256 of the number under IDENTITY_HASH_KEY, and its last 4 characters: never the number
  id_hash text not null check (id_hash ~ '^[0-9a-f]{64}$'),
  id_last4 text not null check (char_length(id_last4) between 1 and 4),
  bank_code text,
  rc_number text,
  provider text not null,
  status text not null default 'pending' check (status in ('pending', 'passed', 'failed', 'not_sent')),
  created_at timestamptz not null default now(),
  completed_at timestamptz
);
comment on table private.identity_requests is
  'identity-verify''s requests to the identity provider (reference, check, keyed hash and last 4 of the number) and their outcome.';
create index identity_requests_user_idx on private.identity_requests (user_id, created_at desc);
alter table private.identity_requests enable row level security;
create policy "Service role manages identity requests" on private.identity_requests
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.identity_requests to service_role;

create table private.kyc_webhook_inbox (
  -- sumsub:<sha256 of the raw body> (Sumsub's events carry no id); identity:<reference>
  key text primary key,
  source text not null check (source in ('sumsub', 'identity')),
  event_type text not null,
  user_id uuid references private.users (id) on delete set null,
  outcome text not null,
  payload jsonb not null,
  received_at timestamptz not null default now()
);
comment on table private.kyc_webhook_inbox is
  'Every KYC and identity webhook taken (the key makes a redelivery a no-op) and what it did; unknown users and references are kept here and applied to nobody.';
create index kyc_webhook_inbox_user_idx on private.kyc_webhook_inbox (user_id) where user_id is not null;
alter table private.kyc_webhook_inbox enable row level security;
create policy "Service role manages the KYC inbox" on private.kyc_webhook_inbox
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on private.kyc_webhook_inbox to service_role;

-- =============================================================================================
-- Notifications about the account itself (no escrow)
-- =============================================================================================

-- A tier change, a failed check and "verify to hold more" concern the account, not an escrow: they
-- carry no escrow or conversation (docs/decisions.md, issue 12), entity_type 'account' and the
-- user's own id as entity_id.
alter table public.notifications alter column escrow_id drop not null;
alter table public.notifications alter column conversation_id drop not null;
alter table public.notifications add constraint notifications_escrow_or_account
  check ((entity_type = 'account') = (escrow_id is null) and (escrow_id is null) = (conversation_id is null)) not valid;
alter table public.notifications validate constraint notifications_escrow_or_account;

alter table public.notifications drop constraint notifications_event_type_check;
alter table public.notifications add constraint notifications_event_type_check check (event_type in (
  'escrow_created', 'invite_received', 'funded', 'funding_shortfall', 'active', 'payment_requested', 'declined',
  'cancelled', 'delivered', 'released', 'refunded', 'payout_succeeded', 'payout_failed', 'milestone_proposed',
  'milestone_updated', 'milestone_accepted', 'milestone_completed', 'milestone_released', 'review_received',
  'dispute_raised', 'dispute_proposal', 'dispute_proposal_rejected', 'dispute_withdrawn', 'dispute_deadline_soon',
  'dispute_escalated', 'dispute_resolved', 'kyc_tier_changed', 'verification_failed', 'verification_needed'
)) not valid;
alter table public.notifications validate constraint notifications_event_type_check;

alter table public.notifications drop constraint notifications_entity_type_check;
alter table public.notifications add constraint notifications_entity_type_check
  check (entity_type in ('escrow', 'transaction', 'milestone', 'review', 'dispute', 'account')) not valid;
alter table public.notifications validate constraint notifications_entity_type_check;

alter table public.notifications drop constraint notifications_action_label_check;
alter table public.notifications add constraint notifications_action_label_check check (action_label in (
  'View escrow', 'Review invitation', 'Fund escrow', 'Inspect delivery', 'Release funds', 'Leave a review',
  'View transaction', 'Review milestone', 'View milestone', 'Release milestone', 'View dispute',
  'Respond to proposal', 'Verify identity'
)) not valid;
alter table public.notifications validate constraint notifications_action_label_check;

create function private.notify_account(p_user uuid, p_event text, p_message jsonb, p_action text)
returns void
language sql
set search_path = ''
as $$
  insert into public.notifications (user_id, escrow_id, conversation_id, event_type, message, entity_type, entity_id,
                                    action_label)
  values (p_user, null, null, p_event, p_message, 'account', p_user, p_action);
$$;
comment on function private.notify_account(p_user uuid, p_event text, p_message jsonb, p_action text) is
  'Writes a notification about the user''s own account (no escrow or conversation; entity_type account).';
revoke all on function private.notify_account(p_user uuid, p_event text, p_message jsonb, p_action text) from public;
grant execute on function private.notify_account(p_user uuid, p_event text, p_message jsonb, p_action text) to service_role;

-- =============================================================================================
-- The tier
-- =============================================================================================

create function private.kyc_tier_of(p_user uuid)
returns smallint
language sql
stable
set search_path = ''
as $$
  select coalesce(max(t.tier), 0)::smallint
    from private.kyc_tiers t
   where not exists (
     select 1
       from private.kyc_tiers lower_tier
       cross join lateral pg_catalog.unnest(lower_tier.checks) as needed(check_type)
      where lower_tier.tier <= t.tier
        and not exists (select 1 from private.kyc_checks k
                         where k.user_id = p_user and k.check_type = needed.check_type and k.status = 'passed'));
$$;
comment on function private.kyc_tier_of(p_user uuid) is
  'The highest tier whose checks, and every lower tier''s, the user has passed (0 when none).';
revoke all on function private.kyc_tier_of(p_user uuid) from public;
grant execute on function private.kyc_tier_of(p_user uuid) to service_role;

create function private.kyc_record(
  p_user uuid, p_check text, p_passed boolean, p_reject_labels text[], p_reject_type text,
  p_provider text, p_reference text, p_result_at timestamptz
)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  k private.kyc_checks%rowtype;
  v_before smallint;
  v_after smallint;
  v_phone text;
  v_outcome text;
  v_type text := case when p_passed then null else coalesce(p_reject_type, 'RETRY') end;
begin
  if p_reject_type is not null and p_reject_type not in ('RETRY', 'FINAL') then
    raise exception 'reject type must be RETRY or FINAL' using errcode = 'ES422';
  end if;
  -- one result of a user at a time: the tier read, the check written and the tier kept agree
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('kyc:' || p_user::text, 0));
  select kyc_tier, phone into v_before, v_phone from private.users where id = p_user;
  if not found then
    return pg_catalog.jsonb_build_object('outcome', 'unknown_user');
  end if;
  select * into k from private.kyc_checks where user_id = p_user and check_type = p_check;
  if found and k.result_at is not null and p_result_at is not null and p_result_at < k.result_at then
    -- an older result delivered late: the newer one already applied stands
    return pg_catalog.jsonb_build_object('outcome', 'stale', 'tier', v_before);
  end if;

  if p_passed then
    v_outcome := 'passed';
    insert into private.kyc_checks as c (user_id, check_type, status, provider, reference, result_at, passed_at)
    values (p_user, p_check, 'passed', p_provider, p_reference, p_result_at, now())
    on conflict (user_id, check_type) do update
      set status = 'passed', reject_labels = '{}', reject_type = null, provider = excluded.provider,
          reference = coalesce(excluded.reference, c.reference), result_at = excluded.result_at,
          passed_at = coalesce(c.passed_at, now()), updated_at = now();
  elsif k.status = 'passed' and v_type = 'RETRY' then
    -- a pass is withdrawn only by a FINAL rejection; a RETRY after it changes nothing
    v_outcome := 'kept_pass';
    update private.kyc_checks set result_at = p_result_at, updated_at = now()
     where user_id = p_user and check_type = p_check;
  else
    v_outcome := 'failed';
    insert into private.kyc_checks as c (user_id, check_type, status, reject_labels, reject_type, provider, reference,
                                         result_at)
    values (p_user, p_check, 'failed', coalesce(p_reject_labels, '{}'), v_type, p_provider, p_reference, p_result_at)
    on conflict (user_id, check_type) do update
      set status = 'failed', reject_labels = excluded.reject_labels, reject_type = excluded.reject_type,
          provider = excluded.provider, reference = coalesce(excluded.reference, c.reference),
          result_at = excluded.result_at, updated_at = now();
    if k.status is distinct from 'failed' or k.reject_type is distinct from v_type then
      perform private.notify_account(p_user, 'verification_failed',
        pg_catalog.jsonb_build_object('kind', 'verification_failed', 'check_type', p_check,
                                      'can_retry', v_type = 'RETRY'),
        'Verify identity');
    end if;
  end if;

  v_after := private.kyc_tier_of(p_user);
  if v_after <> v_before then
    update private.users set kyc_tier = v_after where id = p_user;
    perform private.notify_account(p_user, 'kyc_tier_changed',
      pg_catalog.jsonb_build_object('kind', case when v_after > v_before then 'kyc_tier_raised' else 'kyc_tier_lowered' end,
                                    'tier', v_after),
      'Verify identity');
    perform private.queue_sms(v_phone,
      pg_catalog.jsonb_build_object('kind', 'kyc_tier_changed', 'tier', v_after, 'raised', v_after > v_before));
  end if;
  return pg_catalog.jsonb_build_object('outcome', v_outcome, 'tier_before', v_before, 'tier', v_after);
end
$$;
comment on function private.kyc_record(p_user uuid, p_check text, p_passed boolean, p_reject_labels text[], p_reject_type text, p_provider text, p_reference text, p_result_at timestamptz) is
  'Records a provider''s result for one check (a pass; a failure with labels, RETRY or FINAL; a result older than the one applied is ignored; a RETRY never withdraws a pass) and re-evaluates the tier: each change is a notification and an SMS.';
revoke all on function private.kyc_record(p_user uuid, p_check text, p_passed boolean, p_reject_labels text[], p_reject_type text, p_provider text, p_reference text, p_result_at timestamptz) from public;
grant execute on function private.kyc_record(p_user uuid, p_check text, p_passed boolean, p_reject_labels text[], p_reject_type text, p_provider text, p_reference text, p_result_at timestamptz) to service_role;

-- =============================================================================================
-- Webhooks: each event once, its effect in the same transaction
-- =============================================================================================

create function private.kyc_sumsub_event(
  p_key text, p_type text, p_payload jsonb, p_user uuid, p_check text, p_passed boolean,
  p_reject_labels text[], p_reject_type text, p_applicant text, p_result_at timestamptz
)
returns text
language plpgsql
set search_path = ''
as $$
declare
  v_known boolean := p_user is not null and exists (select 1 from private.users where id = p_user);
  v_outcome text;
  v_result jsonb;
begin
  insert into private.kyc_webhook_inbox (key, source, event_type, user_id, outcome, payload)
  values (p_key, 'sumsub', p_type, case when v_known then p_user end, 'received', p_payload)
  on conflict (key) do nothing;
  if not found then
    return 'duplicate';
  end if;
  if p_type <> 'applicantReviewed' then
    v_outcome := 'ignored';
  elsif p_passed is null then
    v_outcome := 'ignored:not_completed';
  elsif not v_known then
    v_outcome := 'unknown_user';
  elsif p_check is null then
    v_outcome := 'unknown_level';
  else
    v_result := private.kyc_record(p_user, p_check, p_passed, p_reject_labels, p_reject_type, 'sumsub', p_applicant,
                                   p_result_at);
    v_outcome := p_check || ':' || (v_result ->> 'outcome');
  end if;
  update private.kyc_webhook_inbox set outcome = v_outcome where key = p_key;
  return v_outcome;
end
$$;
comment on function private.kyc_sumsub_event(p_key text, p_type text, p_payload jsonb, p_user uuid, p_check text, p_passed boolean, p_reject_labels text[], p_reject_type text, p_applicant text, p_result_at timestamptz) is
  'webhook-kyc: takes a Sumsub event once (by its key) and applies a completed applicantReviewed to the user''s check; anything else is kept and ignored.';
revoke all on function private.kyc_sumsub_event(p_key text, p_type text, p_payload jsonb, p_user uuid, p_check text, p_passed boolean, p_reject_labels text[], p_reject_type text, p_applicant text, p_result_at timestamptz) from public;
grant execute on function private.kyc_sumsub_event(p_key text, p_type text, p_payload jsonb, p_user uuid, p_check text, p_passed boolean, p_reject_labels text[], p_reject_type text, p_applicant text, p_result_at timestamptz) to service_role;

create function private.identity_event(p_key text, p_reference text, p_check text, p_found boolean, p_status text,
                                       p_payload jsonb)
returns text
language plpgsql
set search_path = ''
as $$
declare
  r private.identity_requests%rowtype;
  v_outcome text;
  v_result jsonb;
begin
  select * into r from private.identity_requests where reference = p_reference for update;
  insert into private.kyc_webhook_inbox (key, source, event_type, user_id, outcome, payload)
  values (p_key, 'identity', coalesce(p_check, 'unknown'), r.user_id, 'received', p_payload)
  on conflict (key) do nothing;
  if not found then
    return 'duplicate';
  end if;
  if r.reference is null then
    v_outcome := 'unknown_reference';
  elsif p_check is distinct from r.check_type then
    v_outcome := 'type_mismatch';
  elsif r.status in ('passed', 'failed') then
    v_outcome := 'already_done';
  else
    update private.identity_requests
       set status = case when p_found then 'passed' else 'failed' end, completed_at = now()
     where reference = r.reference;
    v_result := private.kyc_record(r.user_id, r.check_type, p_found,
                  case when p_found then '{}'::text[] else array[pg_catalog.upper(coalesce(p_status, 'unknown'))] end,
                  null, r.provider, r.reference, null);
    update private.kyc_checks set id_last4 = r.id_last4 where user_id = r.user_id and check_type = r.check_type;
    v_outcome := r.check_type || ':' || (v_result ->> 'outcome');
  end if;
  update private.kyc_webhook_inbox set outcome = v_outcome where key = p_key;
  return v_outcome;
end
$$;
comment on function private.identity_event(p_key text, p_reference text, p_check text, p_found boolean, p_status text, p_payload jsonb) is
  'webhook-identity: takes a result once (by its key) and applies it to the request it names (found: a pass; anything else: a failure the user may retry); an unknown reference or a type other than the request''s is kept and applied to nobody.';
revoke all on function private.identity_event(p_key text, p_reference text, p_check text, p_found boolean, p_status text, p_payload jsonb) from public;
grant execute on function private.identity_event(p_key text, p_reference text, p_check text, p_found boolean, p_status text, p_payload jsonb) to service_role;

create function private.kyc_check_may_start(p_user uuid, p_check text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  if exists (select 1 from private.kyc_checks where user_id = p_user and check_type = p_check and status = 'passed') then
    raise exception 'this check has already passed' using errcode = 'ES409';
  end if;
  if exists (select 1 from private.kyc_checks
              where user_id = p_user and check_type = p_check and status = 'failed' and reject_type = 'FINAL') then
    raise exception 'this check was rejected for good and cannot be tried again' using errcode = 'ES409';
  end if;
end
$$;
comment on function private.kyc_check_may_start(p_user uuid, p_check text) is
  'Refuses (ES409) to start a check the user has passed, or that was rejected with FINAL.';
revoke all on function private.kyc_check_may_start(p_user uuid, p_check text) from public;
grant execute on function private.kyc_check_may_start(p_user uuid, p_check text) to service_role;

create function private.kyc_start(p_user uuid, p_check text, p_provider text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('kyc:' || p_user::text, 0));
  perform private.kyc_check_may_start(p_user, p_check);
  insert into private.kyc_checks as c (user_id, check_type, status, provider)
  values (p_user, p_check, 'pending', p_provider)
  on conflict (user_id, check_type) do update
    set status = 'pending', reject_labels = '{}', reject_type = null, provider = excluded.provider, updated_at = now();
end
$$;
comment on function private.kyc_start(p_user uuid, p_check text, p_provider text) is
  'kyc-start: the check of a KYC provider level is pending (ES409 when it passed or was rejected for good).';
revoke all on function private.kyc_start(p_user uuid, p_check text, p_provider text) from public;
grant execute on function private.kyc_start(p_user uuid, p_check text, p_provider text) to service_role;

create function private.identity_request_create(
  p_user uuid, p_check text, p_id_hash text, p_id_last4 text, p_bank_code text, p_rc_number text, p_provider text
)
returns text
language plpgsql
set search_path = ''
as $$
declare
  v_reference text := 'idv_' || pg_catalog.replace(gen_random_uuid()::text, '-', '');
begin
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('kyc:' || p_user::text, 0));
  perform private.kyc_check_may_start(p_user, p_check);
  insert into private.identity_requests (reference, user_id, check_type, id_hash, id_last4, bank_code, rc_number, provider)
  values (v_reference, p_user, p_check, p_id_hash, p_id_last4, p_bank_code, p_rc_number, p_provider);
  insert into private.kyc_checks as c (user_id, check_type, status, provider, reference, id_last4)
  values (p_user, p_check, 'pending', p_provider, v_reference, p_id_last4)
  on conflict (user_id, check_type) do update
    set status = 'pending', reject_labels = '{}', reject_type = null, provider = excluded.provider,
        reference = excluded.reference, id_last4 = excluded.id_last4, updated_at = now();
  return v_reference;
end
$$;
comment on function private.identity_request_create(p_user uuid, p_check text, p_id_hash text, p_id_last4 text, p_bank_code text, p_rc_number text, p_provider text) is
  'identity-verify: a pending identity check and its request reference (ES409 when the check already passed or was rejected for good).';
revoke all on function private.identity_request_create(p_user uuid, p_check text, p_id_hash text, p_id_last4 text, p_bank_code text, p_rc_number text, p_provider text) from public;
grant execute on function private.identity_request_create(p_user uuid, p_check text, p_id_hash text, p_id_last4 text, p_bank_code text, p_rc_number text, p_provider text) to service_role;

create function private.identity_request_not_sent(p_reference text, p_reason text)
returns void
language plpgsql
set search_path = ''
as $$
declare
  r private.identity_requests%rowtype;
begin
  update private.identity_requests set status = 'not_sent', completed_at = now()
   where reference = p_reference and status = 'pending'
  returning * into r;
  if not found then
    return;
  end if;
  -- the check goes back to failed-and-retryable (or, never tried before, away), so the user may ask again
  delete from private.kyc_checks
   where user_id = r.user_id and check_type = r.check_type and reference = p_reference and status = 'pending'
     and result_at is null;
end
$$;
comment on function private.identity_request_not_sent(p_reference text, p_reason text) is
  'identity-verify when the provider could not take the request: the request is closed and its pending check removed, so the user may try again.';
revoke all on function private.identity_request_not_sent(p_reference text, p_reason text) from public;
grant execute on function private.identity_request_not_sent(p_reference text, p_reason text) to service_role;

-- =============================================================================================
-- Limits
-- =============================================================================================

create function private.lagos_day_start(p_now timestamptz)
returns timestamptz
language sql
stable
set search_path = ''
as $$ select pg_catalog.date_trunc('day', p_now at time zone 'Africa/Lagos') at time zone 'Africa/Lagos' $$;
comment on function private.lagos_day_start(p_now timestamptz) is 'The start (00:00 Africa/Lagos) of the day p_now falls in.';
revoke all on function private.lagos_day_start(p_now timestamptz) from public;
grant execute on function private.lagos_day_start(p_now timestamptz) to service_role;

create function private.kyc_used_today(p_user uuid, p_now timestamptz)
returns bigint
language sql
stable
set search_path = ''
as $$
  -- money moved into the service (card top-ups, bank transfers in, card fundings of escrows) and
  -- out of it (withdrawals), pending or done, since 00:00 Lagos; a wallet funding moves money
  -- already counted, and an escrow's payment request is not a charge
  select coalesce(sum(t.amount), 0)::bigint
    from public.transactions t
   where t.user_id = p_user
     and t.created_at >= private.lagos_day_start(p_now)
     and t.status in ('pending', 'succeeded')
     and (t.type in ('wallet_topup', 'virtual_account_deposit', 'withdrawal')
          or (t.type = 'escrow_funding' and t.metadata ->> 'kind' = 'escrow_charge'));
$$;
comment on function private.kyc_used_today(p_user uuid, p_now timestamptz) is
  'What counts toward the user''s daily limit today (Africa/Lagos): top-ups, bank transfers in, card fundings and withdrawals, pending or succeeded, in kobo.';
revoke all on function private.kyc_used_today(p_user uuid, p_now timestamptz) from public;
grant execute on function private.kyc_used_today(p_user uuid, p_now timestamptz) to service_role;

create function private.kyc_limit_check(p_user uuid, p_amount bigint, p_movement text, p_field text)
returns void
language plpgsql
set search_path = ''
as $$
declare
  v_tier smallint;
  l private.kyc_tiers%rowtype;
  v_daily boolean := p_movement <> 'escrow_wallet';
  v_used bigint := 0;
  v_balance bigint := 0;
  v_limit text;
  v_allowed smallint;
begin
  if p_movement not in ('topup', 'withdrawal', 'escrow_charge', 'escrow_transfer', 'escrow_wallet') then
    raise exception 'unknown movement %', p_movement;
  end if;
  -- requests of one user one at a time, until commit: the movement this request creates is
  -- counted by the next one (every caller creates it in the same transaction)
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('kyc-limit:' || p_user::text, 0));
  select kyc_tier into v_tier from private.users where id = p_user;
  select * into l from private.kyc_tiers where tier = coalesce(v_tier, 0);
  if v_daily then
    v_used := private.kyc_used_today(p_user, now());
  end if;
  if p_movement = 'topup' then
    select coalesce((select balance from private.ledger_accounts where kind = 'user_wallet' and owner_id = p_user), 0)
         + coalesce((select sum(amount) from public.transactions
                      where user_id = p_user and type = 'wallet_topup' and status = 'pending'), 0)
      into v_balance;
  end if;

  if p_amount > l.single_limit then
    v_limit := 'single';
  elsif v_daily and v_used + p_amount > l.daily_limit then
    v_limit := 'daily';
  elsif p_movement = 'topup' and l.balance_limit is not null and v_balance + p_amount > l.balance_limit then
    v_limit := 'balance';
  else
    return;
  end if;

  select min(t.tier) into v_allowed from private.kyc_tiers t
   where t.tier > l.tier
     and t.single_limit >= p_amount
     and (not v_daily or t.daily_limit >= v_used + p_amount)
     and (p_movement <> 'topup' or t.balance_limit is null or t.balance_limit >= v_balance + p_amount);
  -- the refusal's facts, for the message the API writes (shared/kyc.ts limitRefusal)
  raise exception 'over the KYC tier limit' using errcode = 'ES403', detail = pg_catalog.jsonb_build_object(
    'kyc_limit', v_limit, 'field', p_field, 'movement', p_movement, 'tier', l.tier, 'amount', p_amount,
    'limit', case v_limit when 'single' then l.single_limit when 'daily' then l.daily_limit else l.balance_limit end,
    'used_today', v_used, 'balance', v_balance, 'allowed_tier', v_allowed)::text;
end
$$;
comment on function private.kyc_limit_check(p_user uuid, p_amount bigint, p_movement text, p_field text) is
  'Refuses (ES403, the facts as JSON in DETAIL) a movement over the user''s tier limits: single, daily (not for a wallet funding) and, for a top-up, the balance. Serialised per user until commit.';
revoke all on function private.kyc_limit_check(p_user uuid, p_amount bigint, p_movement text, p_field text) from public;
grant execute on function private.kyc_limit_check(p_user uuid, p_amount bigint, p_movement text, p_field text) to service_role;

create function private.kyc_balance_notice(p_user uuid)
returns void
language plpgsql
set search_path = ''
as $$
declare
  l private.kyc_tiers%rowtype;
  v_balance bigint;
  v_phone text;
begin
  select t.* into l from private.kyc_tiers t join private.users u on u.kyc_tier = t.tier where u.id = p_user;
  if not found or l.balance_limit is null then
    return;
  end if;
  select balance into v_balance from private.ledger_accounts where kind = 'user_wallet' and owner_id = p_user;
  if coalesce(v_balance, 0) <= l.balance_limit then
    return;
  end if;
  -- once a day (Lagos) is enough
  if exists (select 1 from public.notifications
              where user_id = p_user and event_type = 'verification_needed' and escrow_id is null
                and created_at >= private.lagos_day_start(now())) then
    return;
  end if;
  perform private.notify_account(p_user, 'verification_needed',
    pg_catalog.jsonb_build_object('kind', 'verification_needed', 'tier', l.tier, 'balance', v_balance,
                                  'limit', l.balance_limit),
    'Verify identity');
  select phone into v_phone from private.users where id = p_user;
  perform private.queue_sms(v_phone,
    pg_catalog.jsonb_build_object('kind', 'verification_needed', 'tier', l.tier, 'limit', l.balance_limit));
end
$$;
comment on function private.kyc_balance_notice(p_user uuid) is
  'After money arrived that is never refused: when the wallet is above the tier''s balance limit, tells the user (notification verification_needed and an SMS, at most once a day) to verify.';
revoke all on function private.kyc_balance_notice(p_user uuid) from public;
grant execute on function private.kyc_balance_notice(p_user uuid) to service_role;
