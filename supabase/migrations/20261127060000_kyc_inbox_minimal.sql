-- =============================================================================================
-- The KYC webhook's inbox keeps only what the service reads of a Sumsub event (docs/kyc.md,
-- docs/security.md#identity-numbers-bound-to-their-holder)
--
-- private.kyc_webhook_inbox kept the whole signed payload of webhook-kyc: whatever Sumsub (or a
-- level's settings) put in it, names, dates of birth, document numbers and the moderator's
-- comments included. The identity webhook already keeps only its contract's fields. From here a
-- Sumsub event is kept as private.kyc_sumsub_kept makes it (the event's type and ids, the user and
-- level, the review's status, answer, labels and reject type, and its time), and the rows already
-- stored are scrubbed the same way. The inbox key (the SHA-256 of the raw body) is unchanged, so a
-- redelivery is still a no-op.
-- =============================================================================================

create function private.kyc_sumsub_kept(p_payload jsonb)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
    'type', p_payload -> 'type',
    'applicantId', p_payload -> 'applicantId',
    'inspectionId', p_payload -> 'inspectionId',
    'correlationId', p_payload -> 'correlationId',
    'applicantType', p_payload -> 'applicantType',
    'externalUserId', p_payload -> 'externalUserId',
    'levelName', p_payload -> 'levelName',
    'reviewStatus', p_payload -> 'reviewStatus',
    'createdAtMs', p_payload -> 'createdAtMs',
    'createdAt', p_payload -> 'createdAt',
    'sandboxMode', p_payload -> 'sandboxMode',
    'reviewResult', case when pg_catalog.jsonb_typeof(p_payload -> 'reviewResult') = 'object' then
      pg_catalog.jsonb_build_object(
        'reviewAnswer', p_payload -> 'reviewResult' -> 'reviewAnswer',
        'rejectLabels', p_payload -> 'reviewResult' -> 'rejectLabels',
        'reviewRejectType', p_payload -> 'reviewResult' -> 'reviewRejectType')
    end))
  where pg_catalog.jsonb_typeof(p_payload) = 'object';
$$;
comment on function private.kyc_sumsub_kept(p_payload jsonb) is
  'What the KYC inbox keeps of a Sumsub event: its type, ids, user, level, review status, answer, labels, reject type and time; nothing else (no names, dates of birth, document numbers or comments).';
revoke all on function private.kyc_sumsub_kept(p_payload jsonb) from public;
grant execute on function private.kyc_sumsub_kept(p_payload jsonb) to service_role;

create or replace function private.kyc_sumsub_event(
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
  -- only what the service reads of the event is kept (private.kyc_sumsub_kept)
  insert into private.kyc_webhook_inbox (key, source, event_type, user_id, outcome, payload)
  values (p_key, 'sumsub', p_type, case when v_known then p_user end, 'received',
          coalesce(private.kyc_sumsub_kept(p_payload), '{}'::jsonb))
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
  'webhook-kyc: takes a Sumsub event once (by its key), keeping only private.kyc_sumsub_kept of it, and applies a completed applicantReviewed to the user''s check; anything else is kept and ignored.';
revoke all on function private.kyc_sumsub_event(p_key text, p_type text, p_payload jsonb, p_user uuid, p_check text, p_passed boolean, p_reject_labels text[], p_reject_type text, p_applicant text, p_result_at timestamptz) from public;
grant execute on function private.kyc_sumsub_event(p_key text, p_type text, p_payload jsonb, p_user uuid, p_check text, p_passed boolean, p_reject_labels text[], p_reject_type text, p_applicant text, p_result_at timestamptz) to service_role;

-- the rows already stored: scrubbed the same way
update private.kyc_webhook_inbox
   set payload = coalesce(private.kyc_sumsub_kept(payload), '{}'::jsonb)
 where source = 'sumsub'
   and payload is distinct from coalesce(private.kyc_sumsub_kept(payload), '{}'::jsonb);
