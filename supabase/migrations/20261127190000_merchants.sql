-- =============================================================================================
-- Merchants: business accounts and their API keys (docs/merchants.md)
--
-- A merchant is a business account owned by one user who has reached KYC tier 4; an owner has at
-- most one. Its API keys authenticate the merchant's own servers: a key is shown once when it is
-- made and only its SHA-256 hash is kept, with a short visible prefix (esk_live_AbCd) that lets
-- the owner tell keys apart. Every request with a key looks the hash up again (nothing is
-- cached), so a revoked key is refused on the very next request.
--
-- - private.merchant_create, private.merchant_key_create and private.merchant_key_revoke act for
--   the owner they are given (the caller's user id) and check that what they touch is that
--   owner's: another owner's key is unknown (404), never "forbidden".
-- - private.merchant_key_authenticate is the key auth mode's one statement: the key's merchant,
--   a unit of the key's rate limit (private.rate_limit_take) and, at most once a minute,
--   last_used_at.
-- - Idempotency-Keys of requests made with a key are kept under the merchant's id, so the
--   caller of private.idempotency_keys is a user or a merchant: its foreign key to users goes.
-- =============================================================================================

create table private.merchants (
  id uuid primary key default gen_random_uuid(),
  -- one merchant per owner; the unique index is also the foreign key's
  owner_id uuid not null unique references private.users (id),
  -- letters, digits and spaces (shared/merchants/schema.ts states the whole rule)
  name text not null check (pg_catalog.char_length(name) between 2 and 40 and name ~ '^[A-Za-z0-9 ]+$'),
  -- shared/merchants/enums.ts MERCHANT_STATUSES
  status text not null default 'active' check (status in ('active', 'frozen')),
  created_at timestamptz not null default now()
);
comment on table private.merchants is
  'Business accounts, one per owner (a user at KYC tier 4), which create escrows for their customers with API keys.';
alter table private.merchants enable row level security;
create policy "Service role manages merchants" on private.merchants
  for all to service_role using (true) with check (true);
revoke all on private.merchants from public;
grant select, insert, update on private.merchants to service_role;

create table private.merchant_api_keys (
  id uuid primary key default gen_random_uuid(),
  merchant_id uuid not null references private.merchants (id) on delete cascade,
  name text not null check (pg_catalog.char_length(name) between 1 and 40),
  -- the start of the key, shown in lists: esk_live_ or esk_test_ and its first 4 random characters
  prefix text not null check (prefix ~ '^esk_(live|test)_[0-9A-Za-z]{4}$'),
  -- the SHA-256 of the whole key, hex; the key itself is never stored
  key_hash text not null unique check (key_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz not null default now(),
  -- updated at most once a minute (private.merchant_key_authenticate)
  last_used_at timestamptz,
  revoked_at timestamptz
);
comment on table private.merchant_api_keys is
  'A merchant''s API keys: the SHA-256 of each (never the key), its visible prefix, when it was last used and revoked.';
-- the foreign key's index, and the order merchant-key-list reads a merchant's keys in
create index merchant_api_keys_merchant_idx on private.merchant_api_keys (merchant_id, created_at);
alter table private.merchant_api_keys enable row level security;
create policy "Service role manages merchant API keys" on private.merchant_api_keys
  for all to service_role using (true) with check (true);
revoke all on private.merchant_api_keys from public;
grant select, insert, update on private.merchant_api_keys to service_role;

-- ---- idempotency keys: a user's or a merchant's ----------------------------------------------

alter table private.idempotency_keys drop constraint idempotency_keys_user_id_fkey;
comment on column private.idempotency_keys.user_id is
  'The caller the key belongs to: a user (a session''s requests) or a merchant (requests made with its API keys).';

-- ---- functions --------------------------------------------------------------------------------

create or replace function private.merchant_create(p_owner uuid, p_name text)
returns table (id uuid, name text, status text, created_at timestamptz)
language plpgsql
set search_path = ''
as $$
declare
  v_tier smallint;
  v_existing uuid;
begin
  select u.kyc_tier into v_tier from private.users u where u.id = p_owner;
  if coalesce(v_tier, 0) < 4 then
    -- worded by the endpoint (shared/kyc/refusals.ts KYC_TIER_REQUIRED)
    perform private.refuse(403, 'kyc_tier_required', pg_catalog.jsonb_build_object(
      'action', 'merchant', 'field', 'name', 'tier', coalesce(v_tier, 0), 'required_tier', 4));
  end if;
  return query
    insert into private.merchants as m (owner_id, name) values (p_owner, p_name)
    on conflict (owner_id) do nothing
    returning m.id, m.name, m.status, m.created_at;
  if not found then
    select m.id into v_existing from private.merchants m where m.owner_id = p_owner;
    perform private.refuse(409, 'merchant_exists', pg_catalog.jsonb_build_object('merchant_id', v_existing));
  end if;
end
$$;
comment on function private.merchant_create(p_owner uuid, p_name text) is
  'merchant-create: the owner''s merchant, active; refused below tier 4 (kyc_tier_required) and when the owner has one (merchant_exists, facts {merchant_id}).';
revoke all on function private.merchant_create(p_owner uuid, p_name text) from public;
grant execute on function private.merchant_create(p_owner uuid, p_name text) to service_role;

create or replace function private.merchant_key_create(p_owner uuid, p_name text, p_prefix text, p_hash text)
returns table (id uuid, name text, prefix text, created_at timestamptz)
language plpgsql
set search_path = ''
as $$
declare
  v_merchant uuid;
begin
  select m.id into v_merchant from private.merchants m where m.owner_id = p_owner;
  if v_merchant is null then
    perform private.refuse(404, 'merchant_not_found', '{}'::jsonb);
  end if;
  return query
    insert into private.merchant_api_keys as k (merchant_id, name, prefix, key_hash)
    values (v_merchant, p_name, p_prefix, p_hash)
    returning k.id, k.name, k.prefix, k.created_at;
end
$$;
comment on function private.merchant_key_create(p_owner uuid, p_name text, p_prefix text, p_hash text) is
  'merchant-key-create: a key of the owner''s merchant from its prefix and SHA-256 hash (the key itself never reaches the database); merchant_not_found without a merchant.';
revoke all on function private.merchant_key_create(p_owner uuid, p_name text, p_prefix text, p_hash text) from public;
grant execute on function private.merchant_key_create(p_owner uuid, p_name text, p_prefix text, p_hash text)
  to service_role;

create or replace function private.merchant_key_revoke(p_owner uuid, p_key uuid)
returns table (key_id uuid, revoked_at timestamptz)
language plpgsql
set search_path = ''
as $$
begin
  -- a key already revoked keeps its first revocation time
  return query
    update private.merchant_api_keys as k set revoked_at = coalesce(k.revoked_at, pg_catalog.now())
     where k.id = p_key
       and k.merchant_id = (select m.id from private.merchants m where m.owner_id = p_owner)
    returning k.id, k.revoked_at;
  if not found then
    perform private.refuse(404, 'merchant_key_not_found', pg_catalog.jsonb_build_object('field', 'key_id'));
  end if;
end
$$;
comment on function private.merchant_key_revoke(p_owner uuid, p_key uuid) is
  'merchant-key-revoke: revokes a key of the owner''s merchant (again: the first time stands); another owner''s key is merchant_key_not_found.';
revoke all on function private.merchant_key_revoke(p_owner uuid, p_key uuid) from public;
grant execute on function private.merchant_key_revoke(p_owner uuid, p_key uuid) to service_role;

create or replace function private.merchant_key_authenticate(p_hash text, p_max_per_minute integer)
returns table (merchant_id uuid, key_id uuid, owner_id uuid, wait integer)
language plpgsql
set search_path = ''
as $$
declare
  v record;
  v_wait integer;
begin
  select k.id, k.merchant_id, m.owner_id, k.last_used_at into v
    from private.merchant_api_keys k
    join private.merchants m on m.id = k.merchant_id
   where k.key_hash = p_hash and k.revoked_at is null and m.status = 'active';
  if not found then
    return;
  end if;
  v_wait := private.rate_limit_take(pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
    'key', 'merchant-key:' || v.id::text, 'limit', p_max_per_minute, 'window_seconds', 60)));
  -- at most one write a minute per key: the rate limit's lock serialises the key's requests
  if v_wait = 0 and (v.last_used_at is null or v.last_used_at < pg_catalog.now() - interval '1 minute') then
    update private.merchant_api_keys k set last_used_at = pg_catalog.now() where k.id = v.id;
  end if;
  return query select v.merchant_id, v.id, v.owner_id, v_wait;
end
$$;
comment on function private.merchant_key_authenticate(p_hash text, p_max_per_minute integer) is
  'The merchant of a live key of an active merchant by its SHA-256 hash (no row: no such key), and the seconds to wait when the key is over p_max_per_minute requests (0: a unit was taken); records last_used_at at most once a minute.';
revoke all on function private.merchant_key_authenticate(p_hash text, p_max_per_minute integer) from public;
grant execute on function private.merchant_key_authenticate(p_hash text, p_max_per_minute integer) to service_role;
