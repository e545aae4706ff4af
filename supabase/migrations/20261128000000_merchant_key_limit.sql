-- =============================================================================================
-- Merchant API keys: at most p_max live keys per merchant (docs/security.md#merchant-probe)
--
-- Each key has its own rate limit (MERCHANT_KEY_MAX_PER_MINUTE), so a merchant that could make
-- keys without end could send requests without end: one key a minute's worth of requests, a
-- hundred keys a hundred times that. merchant_key_create now takes the bound (MAX_MERCHANT_KEYS in
-- shared/merchants/merchants.ts) and refuses a key beyond it with merchant_key_limit (409, facts
-- {limit}); creations are serialised on the merchant's row, so keys made at once cannot pass it
-- together. A revoked key no longer counts.
-- =============================================================================================

drop function private.merchant_key_create(uuid, text, text, text);

create function private.merchant_key_create(p_owner uuid, p_name text, p_prefix text, p_hash text, p_max integer)
returns table (id uuid, name text, prefix text, created_at timestamptz)
language plpgsql
set search_path = ''
as $$
declare
  v_merchant uuid;
  v_count integer;
begin
  -- the merchant's row held until commit: the count below stays true until this key is in
  select m.id into v_merchant from private.merchants m where m.owner_id = p_owner for update;
  if v_merchant is null then
    perform private.refuse(404, 'merchant_not_found', '{}'::jsonb);
  end if;
  select pg_catalog.count(*)::integer into v_count
    from private.merchant_api_keys k where k.merchant_id = v_merchant and k.revoked_at is null;
  if v_count >= p_max then
    perform private.refuse(409, 'merchant_key_limit', pg_catalog.jsonb_build_object('limit', p_max));
  end if;
  return query
    insert into private.merchant_api_keys as k (merchant_id, name, prefix, key_hash)
    values (v_merchant, p_name, p_prefix, p_hash)
    returning k.id, k.name, k.prefix, k.created_at;
end
$$;
comment on function private.merchant_key_create(uuid, text, text, text, integer) is
  'merchant-key-create: a key of the owner''s merchant from its prefix and SHA-256 hash (the key itself never reaches the database); merchant_not_found without a merchant, merchant_key_limit (facts {limit}) when it has p_max live keys.';
revoke all on function private.merchant_key_create(uuid, text, text, text, integer) from public;
grant execute on function private.merchant_key_create(uuid, text, text, text, integer) to service_role;
