-- =============================================================================================
-- Account deletion (docs/compliance.md#account-deletion)
--
-- - private.account_delete: account-delete's one transaction. It locks the user's row first, so
--   that an escrow naming the user or a new transaction of theirs either commits before it (and is
--   then seen by its checks) or waits for it (and then finds the account deleted). Refused while
--   the account is frozen, holds an operator role, has an escrow that is not final (on any side, or
--   naming its phone), a pending transaction, money in its wallet or its merchants' wallets, or an
--   active merchant. Then: sessions (and their refresh tokens, stream tickets, operator passes)
--   deleted; merchant keys revoked, the merchants' webhook endpoints and deliveries deleted;
--   personal fields erased (names shown as 'Deleted user', in the counterparties' notifications
--   too; review texts by and about the user); the phone replaced by its keyed hash;
--   the identity bindings released; the dedicated account marked inactive (the function answers
--   what the API deactivates at the provider after the commit).
-- - private.users.deleted_at; the phone check admits the erased form '<hmac hex>:<user id>' on a
--   deleted account only (the id keeps it unique when one phone's accounts are deleted twice).
-- - The escrows' check admits a counterparty phone masked by private.mask_phone.
-- - Guards: an escrow row that names a deleted account as a party, or a transaction of one, waits
--   for a deletion in progress (a share lock on the user's row) and then: an escrow's counterparty
--   is left unset (the phone is nobody's now), anything else is refused as an ended session.
-- - private.bank_transfer_received: a transfer into a deleted user's dedicated account is credited
--   to the suspense account and flagged (private.payment_flags, reason deleted_account_deposit).
-- - merchants gain the status 'closed' (a merchant must not be active for its owner to leave).
-- =============================================================================================

-- ---- columns and checks -----------------------------------------------------------------------

alter table private.users add column deleted_at timestamptz;
comment on column private.users.deleted_at is 'When the account was deleted (account-delete): its phone is then the keyed hash, its password and personal fields erased.';

alter table private.users drop constraint users_phone_check;
alter table private.users add constraint users_phone_check
  check (phone ~ '^\+234[0-9]{10}$'
         or (deleted_at is not null and phone ~ '^[0-9a-f]{64}:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'));

alter table public.profiles alter column phone_number drop not null;

alter table public.escrows drop constraint escrows_counterparty_phone_check;
alter table public.escrows add constraint escrows_counterparty_phone_check
  check (counterparty_phone ~ '^\+234[0-9]{10}$' or counterparty_phone ~ '^\+234[0-9]\*{7}[0-9]{2}$');

alter table private.otps drop constraint otps_context_check;
alter table private.otps add constraint otps_context_check
  check (context in ('signup', 'login', 'reset', 'account_delete'));

alter table private.merchants drop constraint merchants_status_check;
alter table private.merchants add constraint merchants_status_check check (status in ('active', 'frozen', 'closed'));

alter table public.virtual_accounts add column provider_account_id text;
comment on column public.virtual_accounts.provider_account_id is 'The provider''s id of the dedicated account (Paystack''s dedicated_account.id), by which it is deactivated.';

insert into private.ledger_accounts (kind, shard) values ('suspense', 0);

-- ---- guards against a deletion in progress ------------------------------------------------------

create function private.deleted_party_guard()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_deleted timestamptz;
begin
  if tg_table_name = 'escrows' then
    if new.counterparty_id is not null
       and (tg_op = 'INSERT' or new.counterparty_id is distinct from old.counterparty_id) then
      select deleted_at into v_deleted from private.users where id = new.counterparty_id for share;
      if v_deleted is not null then
        -- the phone belongs to no account now: whoever signs up with it is the counterparty
        new.counterparty_id := null;
      end if;
    end if;
    if tg_op = 'INSERT' then
      select deleted_at into v_deleted from private.users where id = new.initiator_id for share;
      if v_deleted is not null then
        perform private.refuse(401, 'unauthenticated', pg_catalog.jsonb_build_object('reason', 'ended'));
      end if;
    end if;
  else
    select deleted_at into v_deleted from private.users where id = new.user_id for share;
    if v_deleted is not null then
      perform private.refuse(401, 'unauthenticated', pg_catalog.jsonb_build_object('reason', 'ended'));
    end if;
  end if;
  return new;
end
$$;
comment on function private.deleted_party_guard() is 'Before an escrow or a transaction is written: waits for a deletion of its party in progress; a deleted counterparty is left unset, a deleted initiator or owner refused as an ended session.';
revoke all on function private.deleted_party_guard() from public;

create trigger escrows_deleted_party before insert or update of counterparty_id on public.escrows
  for each row execute function private.deleted_party_guard();
create trigger transactions_deleted_party before insert on public.transactions
  for each row execute function private.deleted_party_guard();

-- ---- the deletion -------------------------------------------------------------------------------

-- security definer: it deletes from tables the service role only reads or inserts into
-- (event_recipients, sessions' dependants); only the service role may call it
create function private.account_delete(p_user uuid, p_phone_hash text)
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
  select first_name || ' ' || last_name into v_name from public.profiles where id = p_user;
  update public.notifications n
     set message = (select pg_catalog.jsonb_object_agg(k, case when v = pg_catalog.to_jsonb(v_name)
                                                               then '"Deleted user"'::jsonb else v end)
                      from pg_catalog.jsonb_each(n.message) as t(k, v))
   where pg_catalog.jsonb_typeof(n.message) = 'object'
     and pg_catalog.strpos(n.message::text, pg_catalog.to_jsonb(v_name)::text) > 0;
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

-- ---- money arriving for a deleted account ------------------------------------------------------

create function private.deleted_account_deposit(p_user uuid, p_received bigint, p_charge_id text)
returns text
language plpgsql
set search_path = ''
as $$
declare
  v_transfer uuid;
begin
  if exists (select 1 from private.ledger_transfers where idempotency_key = 'va-deposit:' || p_charge_id) then
    return 'already_done';
  end if;
  v_transfer := private.post_transfer(
    'va-deposit:' || p_charge_id, 'deleted_account_deposit',
    pg_catalog.jsonb_build_array(
      pg_catalog.jsonb_build_object('account_id', private.system_account('provider_clearing'), 'amount', -p_received),
      pg_catalog.jsonb_build_object('account_id', private.system_account('suspense'), 'amount', p_received)),
    null, pg_catalog.jsonb_build_object('user_id', p_user));
  insert into private.payment_flags (reason, provider_reference, received_amount, payload)
  values ('deleted_account_deposit', p_charge_id, p_received,
          pg_catalog.jsonb_build_object('user_id', p_user, 'ledger_transfer_id', v_transfer));
  return 'suspense';
end
$$;
comment on function private.deleted_account_deposit(p_user uuid, p_received bigint, p_charge_id text) is 'A bank transfer into a deleted user''s dedicated account: credited to the suspense account once per charge id, and flagged for operators (payment_flags, reason deleted_account_deposit).';
revoke all on function private.deleted_account_deposit(p_user uuid, p_received bigint, p_charge_id text) from public;
grant execute on function private.deleted_account_deposit(p_user uuid, p_received bigint, p_charge_id text) to service_role;

create or replace function private.bank_transfer_received(p_user uuid, p_received bigint, p_provider text, p_charge_id text, p_metadata jsonb)
returns text
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
  e public.escrows;
  v_balance bigint;
  v_phone text;
  v_outcome text;
begin
  if exists (select 1 from private.users where id = p_user and deleted_at is not null) then
    return private.deleted_account_deposit(p_user, p_received, p_charge_id);
  end if;
  if exists (select 1 from public.transactions
              where provider_charge_id = p_charge_id and type = 'virtual_account_deposit' and user_id = p_user) then
    return 'already_done';
  end if;
  select id into v_id from public.escrows w
   where awaiting_bank_transfer_at is not null
     and private.escrow_is_fundable(w)
     and p_user = case when payer_role = 'initiator' then initiator_id else counterparty_id end
   order by awaiting_bank_transfer_at, id limit 1
   for update;
  perform private.virtual_account_deposit(p_user, p_received, p_provider, p_charge_id, p_metadata);
  if v_id is null then
    v_outcome := 'deposit';
  else
    select * into e from public.escrows where id = v_id;
    select balance into v_balance from private.ledger_accounts where kind = 'user_wallet' and owner_id = p_user;
    if coalesce(v_balance, 0) >= e.total_charge then
      v_outcome := 'deposit:escrow:' || private.escrow_fund_wallet(e.id, p_user);
    else
      select phone into v_phone from private.users where id = p_user;
      perform private.queue_sms(v_phone, pg_catalog.jsonb_build_object('kind', 'funding_shortfall',
        'received', p_received, 'category', e.category, 'total_charge', e.total_charge,
        'shortfall', e.total_charge - coalesce(v_balance, 0)));
      perform private.notify(p_user, e.id, 'funding_shortfall', pg_catalog.jsonb_build_object('kind', 'funding_shortfall',
        'title', e.title, 'received', p_received, 'shortfall', e.total_charge - coalesce(v_balance, 0)),
        'escrow', e.id, 'Fund escrow');
      v_outcome := 'deposit:shortfall';
    end if;
  end if;
  perform private.kyc_balance_notice(p_user);
  return v_outcome;
end
$$;
comment on function private.bank_transfer_received(p_user uuid, p_received bigint, p_provider text, p_charge_id text, p_metadata jsonb) is 'A bank transfer into a virtual account: credits the wallet once (whatever the KYC tier), funds the oldest waiting escrow when covered, else tells the payer the shortfall; above the balance limit the user is told to verify. For a deleted account: the suspense account, flagged (private.deleted_account_deposit).';

-- ---- counterparty_phone masked to anyone but the initiator ---------------------------------------

create or replace function reads.escrow_list(p_status text, p_before timestamptz, p_limit integer)
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
      -- the phone whole to the initiator only, who typed it; masked to anyone else
      || ',"counterparty_phone":' || to_json(case when e.initiator_id = v_me then e.counterparty_phone
                                                  else private.mask_phone(e.counterparty_phone) end)::text
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
      || ',"merchant_fee":' || (coalesce(e.merchant_fee, 0)::float8 / 100)::text
      || ',"seller_payout":' || ((e.seller_payout - coalesce(e.merchant_fee, 0))::float8 / 100)::text || '}'
      || ',"released_amount":' || (e.released_amount::float8 / 100)::text
      || ',"accepted_at":' || coalesce('"' || replace((e.accepted_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"delivered_at":' || coalesce('"' || replace((e.delivered_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"inspection_ends_at":'
      || coalesce('"' || replace((e.inspection_ends_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"refunded_at":' || coalesce('"' || replace((e.refunded_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"cancelled_at":' || coalesce('"' || replace((e.cancelled_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"declined_at":' || coalesce('"' || replace((e.declined_at at time zone 'UTC')::text, ' ', 'T') || 'Z"', 'null')
      || ',"updated_at":"' || replace((e.updated_at at time zone 'UTC')::text, ' ', 'T') || 'Z"'
      || ',"merchant":' || case when e.merchant_id is null then 'null'
                                else '{"id":' || to_json(e.merchant_id)::text
                                  || ',"name":' || to_json(e.merchant_name)::text
                                  || ',"fee":' || (e.merchant_fee::float8 / 100)::text || '}' end
      || ',"conversation_id":' || to_json(e.conversation_id)::text || '}',
         ',' order by e.created_at desc), '') || ']'
    into v_json
    from (select e.id, e.initiator_id, e.revealed_counterparty_id, e.category, e.payer_role, e.title, e.description,
                 e.counterparty_phone, e.transaction_type, e.release_type, e.amount, e.currency, e.status,
                 e.inspection_period_days, e.created_at, e.funded_at, e.released_at, e.payer_fee, e.vat,
                 e.total_charge, e.seller_fee, e.seller_payout, e.released_amount, e.accepted_at, e.delivered_at,
                 e.inspection_ends_at, e.refunded_at, e.cancelled_at, e.declined_at, e.updated_at,
                 e.merchant_id, e.merchant_fee, m.name as merchant_name, c.id as conversation_id
            from public.escrows e join public.conversations c on c.escrow_id = e.id
            left join private.merchants m on m.id = e.merchant_id
           where (e.initiator_id = v_me or e.counterparty_id = v_me)
             and case when p_status is null then e.status <> 'deleted' else e.status = p_status end
             and e.created_at < coalesce(p_before, 'infinity'::timestamptz)
           order by e.created_at desc
           limit p_limit) e;
  return v_json;
end
$$;
