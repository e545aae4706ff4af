-- =============================================================================================
-- A frozen merchant's owner makes no new key and no new way out for its data (docs/security.md#merchant-probe)
--
-- An operator freezes a merchant to cut it off: its keys are refused (private.merchant_key_authenticate).
-- Its owner could still make keys, register webhook endpoints and turn disabled ones back on, so a
-- frozen merchant's escrow events could be sent to a new URL. private.merchant_active_of_owner is
-- the owner's merchant while it is active, else merchant_frozen (403); merchant_key_create,
-- merchant_webhook_create and merchant_webhook_enable now use it. Removing an endpoint, rotating its
-- secret and revoking a key stop or replace something and stay open.
-- =============================================================================================

create function private.merchant_active_of_owner(p_owner uuid)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
declare
  v_merchant uuid := private.merchant_of_owner(p_owner);
begin
  if (select m.status from private.merchants m where m.id = v_merchant) <> 'active' then
    perform private.refuse(403, 'merchant_frozen', '{}'::jsonb);
  end if;
  return v_merchant;
end
$$;
comment on function private.merchant_active_of_owner(uuid) is
  'The id of the merchant p_owner owns while it is active; merchant_not_found when they own none, merchant_frozen (403) when it is frozen.';
revoke all on function private.merchant_active_of_owner(uuid) from public;
grant execute on function private.merchant_active_of_owner(uuid) to service_role;

create or replace function private.merchant_key_create(p_owner uuid, p_name text, p_prefix text, p_hash text, p_max integer)
returns table (id uuid, name text, prefix text, created_at timestamptz)
language plpgsql
set search_path = ''
as $$
declare
  v_merchant uuid := private.merchant_active_of_owner(p_owner);
  v_count integer;
begin
  -- the merchant's row held until commit: the count below stays true until this key is in
  perform 1 from private.merchants m where m.id = v_merchant for update;
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
  'merchant-key-create: a key of the owner''s merchant from its prefix and SHA-256 hash (the key itself never reaches the database); merchant_not_found without a merchant, merchant_frozen when it is frozen, merchant_key_limit (facts {limit}) when it has p_max live keys.';

create or replace function private.merchant_webhook_create(
  p_owner uuid, p_url text, p_event_types text[], p_secret_encrypted text, p_max integer
)
returns table (id uuid, url text, event_types text[], enabled boolean, created_at timestamptz)
language plpgsql
set search_path = ''
as $$
declare
  v_merchant uuid := private.merchant_active_of_owner(p_owner);
  v_count integer;
begin
  -- one creation at a time per merchant: the count below stays true until this one commits
  perform 1 from private.merchants m where m.id = v_merchant for update;
  select pg_catalog.count(*)::integer into v_count from private.webhook_endpoints w where w.owner_id = v_merchant;
  if v_count >= p_max then
    perform private.refuse(409, 'webhook_endpoint_limit', pg_catalog.jsonb_build_object('limit', p_max));
  end if;
  return query
    insert into private.webhook_endpoints as w (owner_id, owner_kind, url, event_types, secret_encrypted)
    values (v_merchant, 'merchant', p_url, p_event_types, p_secret_encrypted)
    returning w.id, w.url, w.event_types, w.enabled, w.created_at;
end
$$;
comment on function private.merchant_webhook_create(uuid, text, text[], text, integer) is
  'merchant-webhook-create: an endpoint of the owner''s merchant (its secret encrypted by the caller); '
  'merchant_not_found without a merchant, merchant_frozen when it is frozen, webhook_endpoint_limit (facts {limit}) when it has p_max.';

create or replace function private.merchant_webhook_enable(p_owner uuid, p_endpoint uuid, p_now timestamptz)
returns table (endpoint_id uuid, deliveries_due integer)
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid;
begin
  perform private.merchant_active_of_owner(p_owner);
  v_id := private.merchant_webhook_endpoint(p_owner, p_endpoint);
  return query select v_id, private.webhook_endpoint_enable(v_id, p_now);
end
$$;
comment on function private.merchant_webhook_enable(uuid, uuid, timestamptz) is
  'merchant-webhook-enable: turns an endpoint of the owner''s merchant back on; its pending deliveries are due at p_now; merchant_frozen when the merchant is frozen.';
