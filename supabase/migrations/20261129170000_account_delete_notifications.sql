-- =============================================================================================
-- Account deletion: only the notifications about the deleted user are rewritten
-- (docs/compliance.md#account-deletion)
--
-- - private.account_delete rewrote every notification anywhere whose JSON held a value equal to
--   the deleted user's "First Last": another user of the same name became `Deleted user` in third
--   parties' inboxes, and the whole notifications table was read under the deletion's lock.
--   Notifications name a person only in the keys inviter, accepter and reviewer, and always the
--   other party of the escrow they are about (they keep no actor id). The deletion now rewrites
--   those keys only, and only in the notifications of the escrows the deleted user is a party to
--   (initiator or counterparty), found through the escrows' and notifications' indexes.
-- - Nothing else of the deletion changes.
-- =============================================================================================

-- security definer: it deletes from tables the service role only reads or inserts into
-- (event_recipients, sessions' dependants); only the service role may call it
create or replace function private.account_delete(p_user uuid, p_phone_hash text)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_phone text;
  v_deleted timestamptz;
  v_merchants uuid[];
  v_balance bigint;
  v_va public.virtual_accounts;
  v_sessions integer;
  v_name text;
begin
  if p_phone_hash !~ '^[0-9a-f]{64}$' then
    raise exception 'private.account_delete: the phone hash must be 64 hex digits';
  end if;
  -- first: every escrow or transaction naming this user waits from here, or is seen below
  select phone, deleted_at into v_phone, v_deleted from private.users where id = p_user for update;
  if not found or v_deleted is not null then
    perform private.refuse(401, 'unauthenticated', pg_catalog.jsonb_build_object('reason', 'ended'));
  end if;

  if exists (select 1 from private.account_freezes where user_id = p_user and unfrozen_at is null) then
    perform private.refuse(403, 'account_delete_frozen', '{}'::jsonb);
  end if;
  if exists (select 1 from private.operators where user_id = p_user) then
    perform private.refuse(403, 'account_delete_operator', pg_catalog.jsonb_build_object(
      'roles', (select pg_catalog.array_agg(role order by role) from private.operators where user_id = p_user)));
  end if;
  if exists (select 1 from public.escrows
              where (initiator_id = p_user or counterparty_id = p_user or counterparty_phone = v_phone)
                and status not in ('released', 'refunded', 'cancelled', 'deleted', 'ended')) then
    perform private.refuse(409, 'account_delete_escrow_open', pg_catalog.jsonb_build_object(
      'escrows', (select count(*) from public.escrows
                   where (initiator_id = p_user or counterparty_id = p_user or counterparty_phone = v_phone)
                     and status not in ('released', 'refunded', 'cancelled', 'deleted', 'ended'))));
  end if;
  select coalesce(pg_catalog.array_agg(id), '{}') into v_merchants from private.merchants where owner_id = p_user;
  if exists (select 1 from public.transactions
              where (user_id = p_user or merchant_id = any(v_merchants)) and status = 'pending') then
    perform private.refuse(409, 'account_delete_money_pending', pg_catalog.jsonb_build_object(
      'transactions', (select count(*) from public.transactions
                        where (user_id = p_user or merchant_id = any(v_merchants)) and status = 'pending')));
  end if;
  select coalesce(sum(balance), 0) into v_balance from private.ledger_accounts
   where (kind = 'user_wallet' and owner_id = p_user)
      or (kind = 'merchant_wallet' and owner_id = any(v_merchants));
  if v_balance <> 0 then
    perform private.refuse(409, 'account_delete_wallet_not_empty', pg_catalog.jsonb_build_object('balance', v_balance));
  end if;
  if exists (select 1 from private.merchants where owner_id = p_user and status <> 'closed') then
    perform private.refuse(409, 'account_delete_merchant_active', pg_catalog.jsonb_build_object(
      'merchant_id', (select id from private.merchants where owner_id = p_user and status <> 'closed'
                       order by created_at limit 1)));
  end if;

  -- sessions end (their refresh tokens, stream tickets and operator passes go with them)
  delete from private.sessions where user_id = p_user;
  get diagnostics v_sessions = row_count;
  delete from private.operator_factors where user_id = p_user;

  -- merchants: kept (a business record), their keys revoked, their endpoints and deliveries gone
  update private.merchant_api_keys set revoked_at = now() where merchant_id = any(v_merchants) and revoked_at is null;
  delete from private.webhook_endpoints where owner_id = p_user or owner_id = any(v_merchants);

  -- what only the user had
  delete from public.next_of_kin where user_id = p_user;
  delete from public.payout_accounts where user_id = p_user;
  delete from public.saved_cards where user_id = p_user;
  delete from public.notifications where user_id = p_user;
  delete from private.idempotency_keys where user_id = p_user;
  delete from private.event_recipients where user_id = p_user;
  delete from private.identity_requests where user_id = p_user;
  -- the binding made an identity number this account's alone: a new account may bind it again
  delete from private.identity_bindings where user_id = p_user;
  delete from private.otps where phone = v_phone;
  delete from private.phone_verifications where phone = v_phone;
  delete from private.sms_outbox where phone = v_phone;
  delete from private.rate_limit_events
   where pg_catalog.strpos(key, v_phone) > 0 or pg_catalog.strpos(key, p_user::text) > 0;

  -- what the counterparties keep: the deal, the messages, the ratings; not the names or the phone.
  -- Their notifications named the user as they were (inviter, accepter, reviewer): now Deleted user.
  -- Only the notifications of the escrows the user is a party to name them (a notification names the
  -- other party of its escrow), and only in those keys: someone else of the same name stays named.
  select first_name || ' ' || last_name into v_name from public.profiles where id = p_user;
  update public.notifications n
     set message = (select pg_catalog.jsonb_object_agg(k, case when k in ('inviter', 'accepter', 'reviewer')
                                                                and v = pg_catalog.to_jsonb(v_name)
                                                               then '"Deleted user"'::jsonb else v end)
                      from pg_catalog.jsonb_each(n.message) as t(k, v))
   where n.escrow_id in (select e.id from public.escrows e where e.initiator_id = p_user
                         union
                         select e.id from public.escrows e where e.counterparty_id = p_user)
     and n.user_id <> p_user
     and n.message ?| array['inviter', 'accepter', 'reviewer'];
  update public.profiles
     set first_name = 'Deleted', last_name = 'user', username = null, phone_number = null, address = null,
         marital_status = null, bio = null, avatar_url = null, avatar_storage_path = null, avatar_status = null,
         updated_at = now()
   where id = p_user;
  -- review texts by and about the user: erased; the ratings stay
  update public.reviews set feedback = null
   where (reviewer_id = p_user or reviewee_id = p_user) and feedback is not null;
  update public.escrows set counterparty_phone = private.mask_phone(counterparty_phone)
   where counterparty_phone = v_phone;

  -- the dedicated account: inactive here, deactivated at the provider after the commit; money
  -- still arriving goes to suspense (private.bank_transfer_received)
  update public.virtual_accounts
     set status = 'inactive', account_name = null, failure_reason = 'account_deleted', updated_at = now()
   where user_id = p_user
  returning * into v_va;

  update private.users
     set phone = p_phone_hash || ':' || p_user::text, password_hash = null, deleted_at = now()
   where id = p_user;

  return pg_catalog.jsonb_build_object(
    'sessions_ended', v_sessions,
    'virtual_account', case when v_va.user_id is null or v_va.account_number is null then null
      else pg_catalog.jsonb_build_object('provider', v_va.provider, 'provider_account_id', v_va.provider_account_id,
                                         'account_number', v_va.account_number) end);
end
$$;
comment on function private.account_delete(p_user uuid, p_phone_hash text) is 'account-delete: refuses while anything is open or held (frozen, operator, open escrow, pending money, a balance, an active merchant), else ends the sessions and erases or pseudonymises what the user left (docs/compliance.md#account-deletion); answers the dedicated account to deactivate at the provider.';
revoke all on function private.account_delete(p_user uuid, p_phone_hash text) from public;
grant execute on function private.account_delete(p_user uuid, p_phone_hash text) to service_role;
