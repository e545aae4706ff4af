-- =============================================================================================
-- The account export (GET /account-export)
--
-- Everything the service holds about one user, as one JSON document, built by one statement
-- (private.account_export). What it holds of other people is what the user's own reads already
-- show them, never more:
-- - escrows on either side (a counterparty's deleted escrows left out, as escrow-list leaves them
--   out), the counterparty's id as escrow-get gives it, and `counterparty_phone` whole only to the
--   initiator who typed it: to anyone else it is masked (its country code and last 4 digits);
-- - the milestones, conversations, messages, disputes and proposals of the escrows the user reads;
--   other people appear by their ids only, never their names, phones or profiles;
-- - reviews given and received, with the reviewers' ids only;
-- - money: the wallet balance, every transaction (the handler writes each description and the
--   metadata's kobo figures in naira, as transaction-list does), payout accounts by the last 4
--   digits of the number, cards by brand and last 4, the dedicated account;
-- - KYC: the tier, each check and identity request, an identity number as its last 3 digits after
--   8 asterisks (what operators read), never whole, no provider payloads;
-- - sessions (when created, last used, expiry, revocation; no token or hash), merchants owned with
--   their keys by prefix only and their webhook endpoints without secrets, the user's own webhook
--   endpoints, operator roles, freezes (when; not the operator's reason);
-- - SMS sent to the user's phone, a one-time code's text never (its body left out), and the events
--   addressed to the user (facts only: ids, statuses, amounts).
-- Money is in naira like every answer; times are UTC with a Z like the reads Postgres builds.
-- Execute is granted to service_role only (the role the functions use): the handler takes its
-- rate limit (one an hour) and calls this in the same transaction.
-- =============================================================================================

create function private.account_export_time(p_at timestamptz)
returns text
language sql
immutable
set search_path = ''
as $$
  select replace((p_at at time zone 'UTC')::text, ' ', 'T') || 'Z'
$$;
comment on function private.account_export_time(timestamptz) is
  'A time as the answers write it: UTC, ISO 8601 with a Z, microseconds with trailing zeros dropped; null for null.';
revoke all on function private.account_export_time(timestamptz) from public;

create function private.account_export(p_user uuid)
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
  with me as (
    select u.id, u.phone, u.kyc_tier, u.created_at, u.password_changed_at
      from private.users u where u.id = p_user
  ),
  -- the escrows the user reads: either side; a deleted one only to its initiator
  mine as (
    select e.* from public.escrows e
     where (e.initiator_id = p_user or e.counterparty_id = p_user)
       and (e.status <> 'deleted' or e.initiator_id = p_user)
  ),
  convs as (
    select c.* from public.conversations c join mine e on e.id = c.escrow_id where e.status <> 'deleted'
  ),
  owned_merchants as (
    select m.* from private.merchants m where m.owner_id = p_user
  )
  select pg_catalog.jsonb_build_object(
    'format', 'account-export/1',
    'exported_at', private.account_export_time(pg_catalog.now()),
    'account', (
      select pg_catalog.jsonb_build_object(
        'id', me.id, 'phone', me.phone, 'kyc_tier', me.kyc_tier,
        'created_at', private.account_export_time(me.created_at),
        'password_changed_at', private.account_export_time(me.password_changed_at),
        'frozen', exists (select 1 from private.account_freezes f where f.user_id = me.id and f.unfrozen_at is null),
        'freezes', coalesce((
          select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                   'frozen_at', private.account_export_time(f.frozen_at),
                   'unfrozen_at', private.account_export_time(f.unfrozen_at)) order by f.frozen_at)
            from private.account_freezes f where f.user_id = me.id), '[]'::jsonb),
        'operator_roles', coalesce((
          select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                   'role', o.role, 'granted_at', private.account_export_time(o.granted_at)) order by o.role)
            from private.operators o where o.user_id = me.id), '[]'::jsonb))
        from me),
    'profile', (
      select pg_catalog.jsonb_build_object(
        'id', p.id, 'first_name', p.first_name, 'last_name', p.last_name, 'username', p.username,
        'phone_number', p.phone_number, 'address', p.address, 'marital_status', p.marital_status,
        'bio', p.bio,
        'avatar', case when coalesce(p.avatar_url, '') = '' then null
                       else pg_catalog.jsonb_build_object('avatar_url', p.avatar_url,
                              'storage_path', p.avatar_storage_path,
                              'status', coalesce(p.avatar_status, 'active')) end,
        'created_at', private.account_export_time(p.created_at),
        'updated_at', private.account_export_time(p.updated_at))
        from public.profiles p where p.id = p_user),
    'next_of_kin', (
      select pg_catalog.jsonb_build_object(
        'id', n.id, 'first_name', n.first_name, 'last_name', n.last_name, 'phone', n.phone,
        'address', n.address, 'relationship', n.relationship,
        'created_at', private.account_export_time(n.created_at),
        'updated_at', private.account_export_time(n.updated_at))
        from public.next_of_kin n where n.user_id = p_user),
    'escrows', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', e.id, 'initiator_id', e.initiator_id,
               'counterparty_id', case when e.initiator_id = p_user then e.revealed_counterparty_id else p_user end,
               'role', case when e.initiator_id = p_user then 'initiator' else 'counterparty' end,
               'category', e.category, 'payer_role', e.payer_role, 'title', e.title, 'description', e.description,
               'counterparty_phone', case when e.initiator_id = p_user then e.counterparty_phone
                                          else private.mask_phone(e.counterparty_phone) end,
               'transaction_type', e.transaction_type, 'release_type', e.release_type,
               'amount', e.amount::float8 / 100, 'currency', e.currency, 'status', e.status,
               'inspection_period_days', e.inspection_period_days,
               'fee_breakdown', pg_catalog.jsonb_build_object(
                  'escrow_amount', e.amount::float8 / 100, 'payer_fee', e.payer_fee::float8 / 100,
                  'vat', e.vat::float8 / 100, 'total_charge', e.total_charge::float8 / 100,
                  'seller_fee', e.seller_fee::float8 / 100,
                  'merchant_fee', coalesce(e.merchant_fee, 0)::float8 / 100,
                  'seller_payout', (e.seller_payout - coalesce(e.merchant_fee, 0))::float8 / 100),
               'released_amount', e.released_amount::float8 / 100,
               'created_at', private.account_export_time(e.created_at),
               'accepted_at', private.account_export_time(e.accepted_at),
               'funded_at', private.account_export_time(e.funded_at),
               'delivered_at', private.account_export_time(e.delivered_at),
               'inspection_ends_at', private.account_export_time(e.inspection_ends_at),
               'released_at', private.account_export_time(e.released_at),
               'refunded_at', private.account_export_time(e.refunded_at),
               'cancelled_at', private.account_export_time(e.cancelled_at),
               'declined_at', private.account_export_time(e.declined_at),
               'updated_at', private.account_export_time(e.updated_at),
               'conversation_id', (select c.id from public.conversations c where c.escrow_id = e.id))
             order by e.created_at, e.id)
        from mine e), '[]'::jsonb),
    'milestones', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', m.id, 'escrow_id', m.escrow_id, 'created_by', m.created_by,
               'milestone_index', m.milestone_index, 'title', m.title, 'description', m.description,
               'amount', m.amount::float8 / 100, 'due_date', m.due_date, 'status', m.status,
               'initiator_approved', m.initiator_approved, 'counterparty_approved', m.counterparty_approved,
               'changes_note', m.changes_note, 'release_tx_id', m.release_tx_id,
               'created_at', private.account_export_time(m.created_at),
               'updated_at', private.account_export_time(m.updated_at),
               'accepted_at', private.account_export_time(m.accepted_at),
               'completed_at', private.account_export_time(m.completed_at),
               'released_at', private.account_export_time(m.released_at))
             order by m.escrow_id, m.milestone_index)
        from public.milestones m join mine e on e.id = m.escrow_id where e.status <> 'deleted'), '[]'::jsonb),
    'conversations', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', c.id, 'escrow_id', c.escrow_id, 'created_at', private.account_export_time(c.created_at))
             order by c.created_at, c.id)
        from convs c), '[]'::jsonb),
    'messages', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', m.id, 'conversation_id', m.conversation_id, 'sender_id', m.sender_id,
               'message_type', m.message_type, 'content', m.content,
               'created_at', private.account_export_time(m.created_at))
             order by m.created_at, m.id)
        from public.messages m join convs c on c.id = m.conversation_id), '[]'::jsonb),
    'disputes', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', d.id, 'escrow_id', d.escrow_id, 'raised_by', d.raised_by, 'reason_code', d.reason_code,
               'reason', d.reason, 'status', d.status, 'outcome', d.outcome,
               'payee_amount', d.payee_amount::float8 / 100,
               'negotiation_deadline', private.account_export_time(d.negotiation_deadline),
               'auto_release_at', private.account_export_time(d.auto_release_at),
               'withdrawn_at', private.account_export_time(d.withdrawn_at),
               'resolution', d.resolution,
               'resolved_at', private.account_export_time(d.resolved_at),
               'created_at', private.account_export_time(d.created_at),
               'proposals', coalesce((
                  select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                           'id', p.id, 'proposed_by', p.proposed_by, 'outcome', p.outcome,
                           'payee_amount', p.payee_amount::float8 / 100, 'status', p.status,
                           'created_at', private.account_export_time(p.created_at),
                           'responded_at', private.account_export_time(p.responded_at))
                         order by p.created_at, p.id)
                    from public.dispute_proposals p where p.dispute_id = d.id), '[]'::jsonb))
             order by d.created_at, d.id)
        from public.disputes d join mine e on e.id = d.escrow_id where e.status <> 'deleted'), '[]'::jsonb),
    'reviews_given', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', r.id, 'escrow_id', r.escrow_id, 'reviewee_id', r.reviewee_id, 'rating', r.rating,
               'feedback', r.feedback, 'created_at', private.account_export_time(r.created_at))
             order by r.created_at, r.id)
        from public.reviews r where r.reviewer_id = p_user), '[]'::jsonb),
    'reviews_received', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', r.id, 'escrow_id', r.escrow_id, 'reviewer_id', r.reviewer_id, 'rating', r.rating,
               'feedback', r.feedback, 'created_at', private.account_export_time(r.created_at))
             order by r.created_at, r.id)
        from public.reviews r where r.reviewee_id = p_user), '[]'::jsonb),
    'wallet', pg_catalog.jsonb_build_object(
      'balance', private.wallet_balance(p_user)::float8 / 100, 'currency', 'NGN'),
    'virtual_account', (
      select pg_catalog.jsonb_build_object(
        'status', v.status, 'account_number', v.account_number, 'account_name', v.account_name,
        'bank_name', v.bank_name, 'provider', v.provider,
        'created_at', private.account_export_time(v.created_at),
        'updated_at', private.account_export_time(v.updated_at))
        from public.virtual_accounts v where v.user_id = p_user),
    -- `message` becomes the description and `metadata` is put in naira by the handler
    'transactions', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', t.id, 'type', t.type, 'category', t.category, 'message', t.message,
               'amount', t.amount::float8 / 100, 'currency', t.currency, 'direction', t.direction,
               'status', t.status, 'escrow_id', t.escrow_id, 'milestone_id', t.milestone_id,
               'provider', t.provider, 'provider_charge_id', t.provider_charge_id,
               'provider_transfer_id', t.provider_transfer_id, 'provider_refund_id', t.provider_refund_id,
               'metadata', t.metadata,
               'created_at', private.account_export_time(t.created_at),
               'completed_at', private.account_export_time(t.completed_at))
             order by t.created_at, t.id)
        from public.transactions t where t.user_id = p_user), '[]'::jsonb),
    'payout_accounts', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', a.id, 'bank_name', a.bank_name, 'bank_code', a.bank_code,
               'account_number', pg_catalog.repeat('*', greatest(pg_catalog.length(a.account_number) - 4, 0))
                                 || pg_catalog.right(a.account_number, 4),
               'account_name', a.account_name, 'is_default', a.is_default, 'verified', a.verified,
               'created_at', private.account_export_time(a.created_at))
             order by a.created_at, a.id)
        from public.payout_accounts a where a.user_id = p_user), '[]'::jsonb),
    'cards', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', s.id, 'brand', s.brand, 'last4', s.last4, 'exp_month', s.exp_month, 'exp_year', s.exp_year,
               'bank', s.bank, 'is_default', s.is_default, 'created_at', private.account_export_time(s.created_at))
             order by s.created_at, s.id)
        from public.saved_cards s where s.user_id = p_user), '[]'::jsonb),
    -- `message` becomes the content by the handler
    'notifications', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', n.id, 'conversation_id', n.conversation_id, 'escrow_id', n.escrow_id, 'user_id', n.user_id,
               'event_type', n.event_type, 'message', n.message, 'entity_type', n.entity_type,
               'entity_id', n.entity_id, 'action_label', n.action_label, 'is_read', n.is_read,
               'created_at', private.account_export_time(n.created_at))
             order by n.created_at, n.id)
        from public.notifications n where n.user_id = p_user), '[]'::jsonb),
    'kyc', pg_catalog.jsonb_build_object(
      'tier', (select me.kyc_tier from me),
      'checks', coalesce((
        select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                 'type', k.check_type, 'status', k.status, 'reject_labels', pg_catalog.to_jsonb(k.reject_labels),
                 'can_retry', case when k.status = 'failed' then k.reject_type = 'RETRY' end,
                 'provider', k.provider,
                 'id_number', case when k.id_last4 is null then null
                                   else '********' || pg_catalog.right(k.id_last4, 3) end,
                 'passed_at', private.account_export_time(k.passed_at),
                 'created_at', private.account_export_time(k.created_at),
                 'updated_at', private.account_export_time(k.updated_at))
               order by k.created_at, k.check_type)
          from private.kyc_checks k where k.user_id = p_user), '[]'::jsonb),
      'identity_requests', coalesce((
        select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                 'reference', i.reference, 'type', i.check_type,
                 'id_number', '********' || pg_catalog.right(i.id_last4, 3),
                 'rc_number', case when i.rc_number is null then null
                                   else '********' || pg_catalog.right(i.rc_number, 3) end,
                 'provider', i.provider, 'status', i.status,
                 'created_at', private.account_export_time(i.created_at),
                 'completed_at', private.account_export_time(i.completed_at))
               order by i.created_at, i.reference)
          from private.identity_requests i where i.user_id = p_user), '[]'::jsonb)),
    'sessions', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', s.id, 'created_at', private.account_export_time(s.created_at),
               'last_used_at', private.account_export_time(coalesce(s.refreshed_at, s.created_at)),
               'expires_at', private.account_export_time(s.expires_at),
               'revoked_at', private.account_export_time(s.revoked_at), 'revoked_reason', s.revoked_reason)
             order by s.created_at, s.id)
        from private.sessions s where s.user_id = p_user), '[]'::jsonb),
    'merchants', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', m.id, 'name', m.name, 'status', m.status,
               'created_at', private.account_export_time(m.created_at),
               'api_keys', coalesce((
                  select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                           'id', k.id, 'name', k.name, 'prefix', k.prefix,
                           'created_at', private.account_export_time(k.created_at),
                           'last_used_at', private.account_export_time(k.last_used_at),
                           'revoked_at', private.account_export_time(k.revoked_at))
                         order by k.created_at, k.id)
                    from private.merchant_api_keys k where k.merchant_id = m.id), '[]'::jsonb))
             order by m.created_at, m.id)
        from owned_merchants m), '[]'::jsonb),
    -- the user's own endpoints and their merchants', never a secret
    'webhook_endpoints', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', w.id, 'owner_kind', w.owner_kind, 'owner_id', w.owner_id, 'url', w.url,
               'event_types', pg_catalog.to_jsonb(w.event_types), 'enabled', w.enabled,
               'disabled_at', private.account_export_time(w.disabled_at),
               'created_at', private.account_export_time(w.created_at))
             order by w.created_at, w.id)
        from private.webhook_endpoints w
       where (w.owner_kind = 'user' and w.owner_id = p_user)
          or (w.owner_kind = 'merchant' and w.owner_id in (select m.id from owned_merchants m))), '[]'::jsonb),
    -- what was sent to the user's phone; a one-time code's text never
    'sms', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', o.id, 'kind', o.message ->> 'kind',
               'body', case when o.message ->> 'kind' = 'otp_code' then null else o.body end,
               'created_at', private.account_export_time(o.created_at),
               'sent_at', private.account_export_time(o.sent_at), 'withheld', o.withheld)
             order by o.id)
        from private.sms_outbox o where o.phone = (select me.phone from me)), '[]'::jsonb),
    'events', coalesce((
      select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'id', v.id, 'kind', v.kind, 'subject_id', v.subject_id, 'escrow_id', v.escrow_id,
               'data', v.data, 'occurred_at', private.account_export_time(v.occurred_at))
             order by v.id)
        from private.event_recipients r join private.events v on v.id = r.event_id
       where r.user_id = p_user), '[]'::jsonb))
  from me
$$;
comment on function private.account_export(uuid) is
  'account-export: everything held about the user as one JSON document (null for no such user); identity numbers masked, other people by id only.';
revoke all on function private.account_export(uuid) from public, anon, authenticated;
grant execute on function private.account_export(uuid) to service_role;
