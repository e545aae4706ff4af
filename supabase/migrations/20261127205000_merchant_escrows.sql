-- =============================================================================================
-- Merchant escrows, first part: creation by a merchant's key, reads and cancel (docs/merchants.md)
--
-- A merchant creates an escrow between two of its customers: the buyer is the initiator and the
-- payer, the seller the counterparty. The terms were agreed on the merchant's platform, so there is
-- no accept step: the escrow is created `draft` and its funding (a later part) moves it to `funded`.
--
-- - Placeholder users. A party whose phone has no account is held by a row of private.users with
--   no password (password_hash null): no one can log in as it, reset its password or open a
--   session for it. Signing up with that phone claims it: private.create_account gives the row its
--   password and a profile instead of inserting a new one, so every escrow of the placeholder is
--   the new account's at once. Everything that asks whether a phone has an account asks for a
--   password too (shared/auth/flows.ts, private.reset_password).
-- - public.escrows gains merchant_id and merchant_fee (kobo): the merchant's commission, taken in a
--   later part. private.merchant_escrows keeps what only the merchant sees: its reference (unique
--   per merchant, the request's idempotency key), the SHA-256 of the canonical request body (the
--   same reference with another body is refused) and the metadata as the merchant sent it (json:
--   its text, keys in their order).
-- - SMS about a merchant escrow name the merchant and nothing it wrote, and carry no link; each
--   takes a unit of the merchant's hourly and daily SMS limits (MERCHANT_SMS_MAX_PER_HOUR,
--   MERCHANT_SMS_MAX_PER_DAY, given by the caller) and of the phone's daily invite cap. Over either
--   the row is withheld and the escrow is created all the same.
-- - The merchant is a recipient of its escrows' events (private.event_on_escrow), and an escrow's
--   answer carries `merchant: {id, name, fee}`: escrow-list's JSON (reads.escrow_list) gains it,
--   and reads.escrow_merchant_name gives the name to escrow-get's read, which runs as the caller.
-- =============================================================================================

-- ---- placeholder users -------------------------------------------------------------------------

alter table private.users alter column password_hash drop not null;
comment on column private.users.password_hash is
  'The password''s PBKDF2 hash; null for a placeholder: a party of a merchant escrow whose phone had no account, claimed by signing up with that phone.';

create or replace function private.create_account(p_phone text, p_password_hash text, p_first_name text,
                                                  p_last_name text, p_refresh_hash text, p_session_ttl_seconds integer)
returns table(user_id uuid, session_id uuid)
language plpgsql
set search_path = ''
as $$
declare
  v_user uuid;
  v_session uuid;
begin
  delete from private.phone_verifications
   where phone = p_phone and expires_at > now();
  if not found then
    return;
  end if;
  -- a placeholder of the phone (a merchant escrow's party) becomes the account, with its escrows
  update private.users set password_hash = p_password_hash, password_changed_at = now()
   where phone = p_phone and password_hash is null
  returning id into v_user;
  if v_user is null then
    insert into private.users (phone, password_hash) values (p_phone, p_password_hash)
    returning id into v_user;
  end if;
  insert into public.profiles (id, first_name, last_name, phone_number)
  values (v_user, p_first_name, p_last_name, p_phone);
  insert into private.sessions (user_id, expires_at)
  values (v_user, now() + pg_catalog.make_interval(secs => p_session_ttl_seconds))
  returning id into v_session;
  insert into private.refresh_tokens (token_hash, session_id) values (p_refresh_hash, v_session);
  return query select v_user, v_session;
end
$$;
comment on function private.create_account(text, text, text, text, text, integer) is
  'auth-signup: the account (a placeholder of the phone claimed, else a new user), its profile and first session, once the phone''s verification is used up.';
revoke all on function private.create_account(text, text, text, text, text, integer) from public;
grant execute on function private.create_account(text, text, text, text, text, integer) to service_role;

create or replace function private.reset_password(p_phone text, p_password_hash text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_user uuid;
begin
  -- a placeholder has no password to reset: it is claimed by signing up
  update private.users set password_hash = p_password_hash, password_changed_at = now()
   where phone = p_phone and password_hash is not null
  returning id into v_user;
  if v_user is null then
    return null;
  end if;
  perform private.end_session(id, 'password_reset')
     from private.sessions where user_id = v_user and revoked_at is null;
  return v_user;
end
$$;
comment on function private.reset_password(text, text) is
  'auth-reset-password: the account''s new password hash and every session ended; null when no account (placeholders included) has the phone.';
revoke all on function private.reset_password(text, text) from public;
grant execute on function private.reset_password(text, text) to service_role;

create function private.user_for_phone(p_phone text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_user uuid;
begin
  insert into private.users (phone, password_hash) values (p_phone, null)
  on conflict (phone) do nothing
  returning id into v_user;
  if v_user is null then
    select id into v_user from private.users where phone = p_phone;
  end if;
  return v_user;
end
$$;
comment on function private.user_for_phone(text) is
  'The user of a phone: its account, or a placeholder made now (no password) that signing up with the phone claims.';
revoke all on function private.user_for_phone(text) from public;
grant execute on function private.user_for_phone(text) to service_role;

-- ---- the escrow's merchant ---------------------------------------------------------------------

alter table public.escrows
  add column merchant_id uuid references private.merchants (id),
  add column merchant_fee bigint check (merchant_fee >= 0 and merchant_fee * 5 <= amount),
  add constraint escrows_merchant_fee_with_merchant check ((merchant_id is null) = (merchant_fee is null));
comment on column public.escrows.merchant_id is 'The merchant that created the escrow for its customers (null: created in the app).';
comment on column public.escrows.merchant_fee is 'The merchant''s commission in kobo, at most 20% of the amount (null without a merchant).';
create index escrows_merchant_idx on public.escrows (merchant_id, created_at desc) where merchant_id is not null;
grant select (merchant_id, merchant_fee) on table public.escrows to authenticated;

create table private.merchant_escrows (
  escrow_id uuid primary key references public.escrows (id),
  merchant_id uuid not null references private.merchants (id),
  reference text not null check (reference ~ '^[A-Za-z0-9._:-]{1,100}$'),
  body_hash text not null,
  metadata json,
  constraint merchant_escrows_reference_key unique (merchant_id, reference)
);
comment on table private.merchant_escrows is
  'What only the merchant sees of its escrow: its reference (unique per merchant), the hash of the request that created it, and its metadata as sent.';
alter table private.merchant_escrows enable row level security;
create policy "Service role manages merchant escrows" on private.merchant_escrows
  for all to service_role using (true) with check (true);
grant select, insert, update, delete on table private.merchant_escrows to service_role;

-- ---- SMS -----------------------------------------------------------------------------------------

create function private.queue_merchant_escrow_sms(e public.escrows, p_merchant_name text, p_phone text,
                                                  p_side text, p_per_hour integer, p_per_day integer)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  v_cap integer := private.invite_sms_cap();
  v_hour text := 'merchant_sms:hour:' || e.merchant_id::text;
  v_day text := 'merchant_sms:day:' || e.merchant_id::text;
  v_withheld text;
begin
  if p_per_hour <= 0 or p_per_day <= 0 then
    v_withheld := 'merchant_sms_cap';
  elsif v_cap <= 0 then
    v_withheld := 'invite_daily_cap';
  elsif private.rate_limit_take(pg_catalog.jsonb_build_array(
          pg_catalog.jsonb_build_object('key', v_hour, 'limit', p_per_hour, 'window_seconds', 3600),
          pg_catalog.jsonb_build_object('key', v_day, 'limit', p_per_day, 'window_seconds', 86400),
          pg_catalog.jsonb_build_object('key', 'invite_sms:' || p_phone, 'limit', v_cap,
                                        'window_seconds', 86400))) > 0 then
    -- no unit was taken; the merchant's limit is named when it is the one that is full (the keys
    -- stay locked by rate_limit_take until commit)
    v_withheld := case
      when (select count(*) from private.rate_limit_events r
             where r.key = v_hour and r.created_at > pg_catalog.clock_timestamp() - interval '1 hour') >= p_per_hour
        or (select count(*) from private.rate_limit_events r
             where r.key = v_day and r.created_at > pg_catalog.clock_timestamp() - interval '1 day') >= p_per_day
      then 'merchant_sms_cap' else 'invite_daily_cap' end;
  end if;
  insert into private.sms_outbox (phone, message, sent_at, withheld)
  values (p_phone,
          pg_catalog.jsonb_build_object('kind', 'merchant_escrow', 'merchant', p_merchant_name, 'side', p_side,
                                        'category', e.category, 'amount', e.amount),
          null, v_withheld);
  return v_withheld is null;
end
$$;
comment on function private.queue_merchant_escrow_sms(public.escrows, text, text, text, integer, integer) is
  'Queues the SMS telling a party of a merchant escrow about it (the merchant''s name, no link), within the merchant''s hourly and daily SMS limits and the phone''s daily invite cap; withheld over either.';
revoke all on function private.queue_merchant_escrow_sms(public.escrows, text, text, text, integer, integer) from public;
grant execute on function private.queue_merchant_escrow_sms(public.escrows, text, text, text, integer, integer) to service_role;

-- ---- merchant-escrow-create ----------------------------------------------------------------------

create function private.merchant_escrow_create(
  p_merchant uuid, p_reference text, p_body_hash text, p_category public.escrow_category, p_title text,
  p_description text, p_amount bigint, p_payer_fee bigint, p_vat bigint, p_seller_fee bigint, p_buyer_phone text,
  p_seller_phone text, p_merchant_fee bigint, p_metadata json, p_sms_per_hour integer, p_sms_per_day integer)
returns table(escrow_id uuid, created boolean)
language plpgsql
set search_path = ''
as $$
declare
  r private.category_rules;
  e public.escrows;
  v_existing private.merchant_escrows;
  v_name text;
  v_buyer uuid;
  v_seller uuid;
  v_at timestamptz := now();
  v_constraint text;
begin
  -- one creation per reference at a time: a concurrent request with it waits here, then finds the
  -- escrow the first one made
  perform pg_catalog.pg_advisory_xact_lock(
    pg_catalog.hashtextextended('merchant_escrow:' || p_merchant::text || ':' || p_reference, 0));
  select * into v_existing from private.merchant_escrows m
   where m.merchant_id = p_merchant and m.reference = p_reference;
  if found then
    if v_existing.body_hash <> p_body_hash then
      perform private.refuse(409, 'merchant_reference_reused',
        pg_catalog.jsonb_build_object('field', 'reference', 'escrow_id', v_existing.escrow_id));
    end if;
    return query select v_existing.escrow_id, false;
    return;
  end if;

  select * into r from private.category_rules where category = p_category;
  select m.name into v_name from private.merchants m where m.id = p_merchant;
  -- in phone order, so that two creations naming the same two new phones cannot deadlock
  if p_buyer_phone < p_seller_phone then
    v_buyer := private.user_for_phone(p_buyer_phone);
    v_seller := private.user_for_phone(p_seller_phone);
  else
    v_seller := private.user_for_phone(p_seller_phone);
    v_buyer := private.user_for_phone(p_buyer_phone);
  end if;

  loop
    begin
      insert into public.escrows (initiator_id, counterparty_id, counterparty_phone, category, payer_role, title,
                                  description, transaction_type, release_type, amount, status, inspection_period_days,
                                  payer_fee, vat, total_charge, seller_fee, seller_payout, invite_token_hash,
                                  merchant_id, merchant_fee, created_at)
      values (v_buyer, v_seller, p_seller_phone, p_category, 'initiator', p_title, coalesce(p_description, ''),
              r.transaction_type, r.release_type, p_amount, 'draft', r.inspection_period_days, p_payer_fee, p_vat,
              p_amount + p_payer_fee + p_vat, p_seller_fee, p_amount - p_seller_fee,
              -- no invitation: a hash no token has
              'merchant:' || gen_random_uuid()::text, p_merchant, p_merchant_fee, v_at)
      returning * into e;
      exit;
    exception when unique_violation then
      get stacked diagnostics v_constraint = constraint_name;
      if v_constraint <> 'escrows_created_at_key' then
        raise;
      end if;
      v_at := v_at + interval '1 microsecond';
    end;
  end loop;
  insert into public.conversations (escrow_id) values (e.id);
  insert into private.merchant_escrows (escrow_id, merchant_id, reference, body_hash, metadata)
  values (e.id, p_merchant, p_reference, p_body_hash, p_metadata);

  perform private.queue_merchant_escrow_sms(e, v_name, p_buyer_phone, 'payer', p_sms_per_hour, p_sms_per_day);
  perform private.queue_merchant_escrow_sms(e, v_name, p_seller_phone, 'payee', p_sms_per_hour, p_sms_per_day);
  return query select e.id, true;
end
$$;
comment on function private.merchant_escrow_create(uuid, text, text, public.escrow_category, text, text, bigint, bigint,
  bigint, bigint, text, text, bigint, json, integer, integer) is
  'merchant-escrow-create: a draft escrow between the buyer (initiator, payer) and the seller, placeholders for phones without an account, its conversation and the parties'' SMS; the escrow of the reference when it exists with the same body, merchant_reference_reused (409) with another.';
revoke all on function private.merchant_escrow_create(uuid, text, text, public.escrow_category, text, text, bigint,
  bigint, bigint, bigint, text, text, bigint, json, integer, integer) from public;
grant execute on function private.merchant_escrow_create(uuid, text, text, public.escrow_category, text, text, bigint,
  bigint, bigint, bigint, text, text, bigint, json, integer, integer) to service_role;

-- ---- merchant-escrow-cancel ----------------------------------------------------------------------

create function private.merchant_escrow_cancel(p_escrow uuid, p_merchant uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows;
begin
  select * into e from public.escrows where id = p_escrow for update;
  -- another merchant's escrow, or an app escrow, is unknown to this merchant
  if not found or e.merchant_id is distinct from p_merchant then
    perform private.refuse(404, 'escrow_not_found', '{}'::jsonb);
  end if;
  if e.status = 'draft' and e.funded_at is null then
    return private.escrow_close_unfunded(e, 'cancelled');
  end if;
  perform private.refuse_state(e, 'cancel');
  return null;
end
$$;
comment on function private.merchant_escrow_cancel(uuid, uuid) is
  'merchant-escrow-cancel: cancels the merchant''s escrow while it is an unfunded draft; escrow_not_found for another''s, escrow_wrong_state after funding.';
revoke all on function private.merchant_escrow_cancel(uuid, uuid) from public;
grant execute on function private.merchant_escrow_cancel(uuid, uuid) to service_role;

-- ---- the merchant receives its escrows' events ---------------------------------------------------

create or replace function private.event_on_escrow()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform private.event_write('escrow', new.id, new.id, array[new.initiator_id, new.counterparty_id, new.merchant_id],
                              pg_catalog.jsonb_build_object(
                                'status', new.status,
                                'previous_status', case when tg_op = 'UPDATE' then old.status end,
                                'delivered', tg_op = 'UPDATE' and old.delivered_at is null
                                             and new.delivered_at is not null));
  return null;
end
$$;

-- ---- the merchant in a party's reads -------------------------------------------------------------

create function reads.escrow_merchant_name(p_escrow uuid)
returns text
language sql
stable security definer
set search_path = ''
as $$
  select m.name from public.escrows e join private.merchants m on m.id = e.merchant_id
   where e.id = p_escrow and (e.initiator_id = (select auth.uid()) or e.counterparty_id = (select auth.uid()));
$$;
comment on function reads.escrow_merchant_name(uuid) is
  'The name of the merchant of an escrow the caller is a party to (null otherwise): escrow-get''s `merchant`.';
revoke all on function reads.escrow_merchant_name(uuid) from public;
grant execute on function reads.escrow_merchant_name(uuid) to authenticated;

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
      || ',"counterparty_phone":' || to_json(e.counterparty_phone)::text
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
      || ',"seller_payout":' || (e.seller_payout::float8 / 100)::text || '}'
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
