-- =============================================================================================
-- A deleted account's deactivation at the provider is recorded before it is asked for
-- (docs/compliance.md#account-deletion)
--
-- Before this, the open flag (kind dedicated_account_deactivation_failed) was written only when the
-- call after the deletion's commit failed: a crash between the commit and the call lost the
-- deactivation for good. Now:
-- - private.deactivation_requested: account-delete calls it in the deletion's own transaction
--   (and webhook-payments when the provider assigns a dedicated account to an account already
--   deleted): an open flag, its attempts 0. With p_attempting (the API asks the provider right
--   after the commit) its last_attempt_at is now, so the job's retry leaves it alone for its wait;
--   without, it has none and the next job run asks the provider.
-- - private.deactivation_done resolves it when the provider confirms (the call after the commit or
--   the job's retry); private.deactivation_failed counts an attempt that failed, as before.
-- =============================================================================================

create function private.deactivation_requested(p_user uuid, p_provider text, p_provider_account_id text,
                                               p_attempting boolean)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if not exists (select 1 from private.users where id = p_user and deleted_at is not null) then
    raise exception 'private.deactivation_requested: % is not a deleted account', p_user using errcode = '22023';
  end if;
  -- one open flag per account: a later request names the provider's id it now knows
  update private.operator_flags
     set details = details || pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
           'provider', p_provider, 'provider_account_id', p_provider_account_id))
   where kind = 'dedicated_account_deactivation_failed' and user_id = p_user and resolved_at is null;
  if found then
    return;
  end if;
  insert into private.operator_flags (kind, user_id, details)
  values ('dedicated_account_deactivation_failed', p_user, pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
    'provider', p_provider, 'provider_account_id', p_provider_account_id, 'attempts', 0, 'status', 'requested',
    'last_attempt_at', case when p_attempting then now() end)));
end
$$;
comment on function private.deactivation_requested(uuid, text, text, boolean) is
  'A deleted account''s dedicated account is to be deactivated at the provider: an open flag '
  '(dedicated_account_deactivation_failed, attempts 0) written in the same transaction, resolved by '
  'private.deactivation_done when the provider confirms, retried by the job until then.';
revoke all on function private.deactivation_requested(uuid, text, text, boolean) from public;
grant execute on function private.deactivation_requested(uuid, text, text, boolean) to service_role;

create or replace function private.deactivation_done(p_user uuid)
returns void
language sql
security definer
set search_path = ''
as $$
  update private.operator_flags
     set resolved_at = now(), details = details || '{"resolved_by": "provider_confirmed"}'::jsonb
   where kind = 'dedicated_account_deactivation_failed' and user_id = p_user and resolved_at is null;
$$;
comment on function private.deactivation_done(uuid) is
  'A deleted account''s dedicated account was deactivated at the provider: its open flag resolved.';
revoke all on function private.deactivation_done(uuid) from public;
grant execute on function private.deactivation_done(uuid) to service_role;
