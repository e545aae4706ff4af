-- =============================================================================================
-- A dedicated account the provider did not deactivate at account deletion (docs/compliance.md#account-deletion)
--
-- - private.deactivation_failed: after account-delete commits, the API asks the provider to
--   deactivate the deleted user's dedicated account; when that call fails (or the provider's id of
--   the account is unknown), this records an open operator flag of kind
--   dedicated_account_deactivation_failed (one open flag per user), so the failure is not lost in a
--   log line. Money that still arrives meanwhile goes to suspense (private.deleted_account_deposit).
-- - private.deactivation_done: a later deactivation that succeeded (the job's retry) resolves it.
-- - The open flags of that kind are a queue of their own in admin-queue-list
--   (deactivations_failed), read through the partial index below.
-- =============================================================================================

create function private.deactivation_failed(p_user uuid, p_provider text, p_provider_account_id text, p_error text)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if not exists (select 1 from private.users where id = p_user and deleted_at is not null) then
    raise exception 'private.deactivation_failed: % is not a deleted account', p_user using errcode = '22023';
  end if;
  -- one open flag per account: a retry that fails again updates it
  update private.operator_flags
     set details = details || pg_catalog.jsonb_build_object(
           'attempts', coalesce((details ->> 'attempts')::integer, 1) + 1, 'error', p_error, 'last_attempt_at', now())
   where kind = 'dedicated_account_deactivation_failed' and user_id = p_user and resolved_at is null;
  if found then
    return;
  end if;
  insert into private.operator_flags (kind, user_id, details)
  values ('dedicated_account_deactivation_failed', p_user, pg_catalog.jsonb_build_object(
    'provider', p_provider, 'provider_account_id', p_provider_account_id, 'error', p_error, 'attempts', 1,
    'last_attempt_at', now()));
end
$$;
comment on function private.deactivation_failed(uuid, text, text, text) is
  'The provider did not deactivate a deleted account''s dedicated account: an open operator flag '
  '(dedicated_account_deactivation_failed), one per account, its attempts counted.';
revoke all on function private.deactivation_failed(uuid, text, text, text) from public;
grant execute on function private.deactivation_failed(uuid, text, text, text) to service_role;

create function private.deactivation_done(p_user uuid)
returns void
language sql
security definer
set search_path = ''
as $$
  update private.operator_flags
     set resolved_at = now(), details = details || '{"resolved_by": "retry"}'::jsonb
   where kind = 'dedicated_account_deactivation_failed' and user_id = p_user and resolved_at is null;
$$;
comment on function private.deactivation_done(uuid) is
  'A deleted account''s dedicated account was deactivated after all: its open flag resolved.';
revoke all on function private.deactivation_done(uuid) from public;
grant execute on function private.deactivation_done(uuid) to service_role;

create index operator_flags_deactivation_open_idx on private.operator_flags (created_at)
  where resolved_at is null and kind = 'dedicated_account_deactivation_failed';
