-- =============================================================================================
-- Merchants' webhook endpoints (docs/merchants.md#webhook-endpoints)
--
-- A merchant registers where its escrow events go with its owner's session, and reads and retries
-- its deliveries with one of its API keys. The endpoints are rows of the queue's own table
-- (private.webhook_endpoints, supabase/migrations/20261127160000_webhook_queue.sql), owned by the
-- merchant's id: the queue gives an endpoint the events whose recipients include its owner, so a
-- merchant's endpoints get the events that name the merchant as a recipient, and nothing else.
--
-- - owner_kind says whose id owner_id is (a user's or a merchant's), so the queue renders a
--   delivery's data as that kind of owner reads the escrow; private.webhook_claim answers it.
-- - The writes are functions that act for a caller and check that what they touch is the caller's:
--   the owner's merchant (merchant_webhook_create, _delete, _rotate, _enable) or the key's merchant
--   (merchant_webhook_delivery_retry). Another merchant's endpoint or delivery is not found (404),
--   never forbidden: nothing tells that it exists.
-- - A merchant has at most p_max endpoints; creations are serialised on the merchant's row, so two
--   at once cannot both take the last place.
-- - The owner index now covers every endpoint (the lists and the cap read disabled ones too), in
--   the order merchant-webhook-list answers them; the queue's join uses it as it used the partial one.
-- =============================================================================================

alter table private.webhook_endpoints
  add column owner_kind text not null default 'user' check (owner_kind in ('user', 'merchant'));
comment on column private.webhook_endpoints.owner_kind is
  'Whose id owner_id is: a user''s or a merchant''s (how a delivery''s data is rendered for it).';

drop index private.webhook_endpoints_owner_idx;
create index webhook_endpoints_owner_idx on private.webhook_endpoints (owner_id, created_at);

-- ---- the claim answers the owner's kind -------------------------------------------------------

drop function private.webhook_claim(timestamptz, integer, interval);
create function private.webhook_claim(p_now timestamptz, p_limit integer, p_lease interval)
returns table (
  id uuid, lease_id uuid, endpoint_id uuid, event_id bigint, type text, attempts integer, url text, owner_id uuid,
  owner_kind text, secret_encrypted text, previous_secret_encrypted text, previous_secret_until timestamptz,
  escrow_id uuid, occurred_at timestamptz
)
language plpgsql
set search_path = ''
as $$
declare
  v_lease uuid := gen_random_uuid();
begin
  return query
  with due as (
    select d.id
      from private.webhook_deliveries d join private.webhook_endpoints w on w.id = d.endpoint_id
     where d.status = 'pending' and d.next_attempt_at <= p_now and w.enabled
     order by d.next_attempt_at
     limit p_limit
       for update of d skip locked
  ), claimed as (
    update private.webhook_deliveries d
       set next_attempt_at = p_now + p_lease, lease_id = v_lease
      from due
     where d.id = due.id
    returning d.id, d.endpoint_id, d.event_id, d.type, d.attempts
  )
  select c.id, v_lease, c.endpoint_id, c.event_id, c.type, c.attempts, w.url, w.owner_id, w.owner_kind,
         w.secret_encrypted, w.previous_secret_encrypted, w.previous_secret_until, e.escrow_id, e.occurred_at
    from claimed c
    join private.webhook_endpoints w on w.id = c.endpoint_id
    join private.events e on e.id = c.event_id;
end
$$;
comment on function private.webhook_claim(timestamptz, integer, interval) is
  'Leases up to p_limit due deliveries of enabled endpoints (skipping those another caller holds): each is pushed '
  'p_lease past p_now and marked with this claim''s lease id, which webhook_record requires. Answers the endpoint''s '
  'owner and its kind (user or merchant).';
revoke all on function private.webhook_claim(timestamptz, integer, interval) from public;
grant execute on function private.webhook_claim(timestamptz, integer, interval) to service_role;

-- ---- the owner's writes ---------------------------------------------------------------------------

-- The merchant of an owner, or merchant_not_found.
create function private.merchant_of_owner(p_owner uuid)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
declare
  v_merchant uuid;
begin
  select m.id into v_merchant from private.merchants m where m.owner_id = p_owner;
  if v_merchant is null then
    perform private.refuse(404, 'merchant_not_found', '{}'::jsonb);
  end if;
  return v_merchant;
end
$$;
comment on function private.merchant_of_owner(uuid) is
  'The id of the merchant p_owner owns; refuses merchant_not_found when they own none.';
revoke all on function private.merchant_of_owner(uuid) from public;
grant execute on function private.merchant_of_owner(uuid) to service_role;

create function private.merchant_webhook_create(
  p_owner uuid, p_url text, p_event_types text[], p_secret_encrypted text, p_max integer
)
returns table (id uuid, url text, event_types text[], enabled boolean, created_at timestamptz)
language plpgsql
set search_path = ''
as $$
declare
  v_merchant uuid := private.merchant_of_owner(p_owner);
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
  'merchant_not_found without a merchant, webhook_endpoint_limit (facts {limit}) when it has p_max.';
revoke all on function private.merchant_webhook_create(uuid, text, text[], text, integer) from public;
grant execute on function private.merchant_webhook_create(uuid, text, text[], text, integer) to service_role;

-- The endpoint p_endpoint if it is the owner's merchant's, locked; else webhook_endpoint_not_found.
create function private.merchant_webhook_endpoint(p_owner uuid, p_endpoint uuid)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  v_merchant uuid := private.merchant_of_owner(p_owner);
  v_id uuid;
begin
  select w.id into v_id from private.webhook_endpoints w
   where w.id = p_endpoint and w.owner_id = v_merchant
     for update;
  if v_id is null then
    perform private.refuse(404, 'webhook_endpoint_not_found', pg_catalog.jsonb_build_object('field', 'endpoint_id'));
  end if;
  return v_id;
end
$$;
comment on function private.merchant_webhook_endpoint(uuid, uuid) is
  'p_endpoint, locked, when it belongs to p_owner''s merchant; refuses webhook_endpoint_not_found otherwise.';
revoke all on function private.merchant_webhook_endpoint(uuid, uuid) from public;
grant execute on function private.merchant_webhook_endpoint(uuid, uuid) to service_role;

create function private.merchant_webhook_delete(p_owner uuid, p_endpoint uuid)
returns table (endpoint_id uuid, deliveries_stopped integer)
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid := private.merchant_webhook_endpoint(p_owner, p_endpoint);
  v_pending integer;
begin
  select pg_catalog.count(*)::integer into v_pending
    from private.webhook_deliveries d where d.endpoint_id = v_id and d.status = 'pending';
  -- its deliveries go with it (on delete cascade): nothing pending is sent any more, and an attempt
  -- under way finds no row to record its outcome in
  delete from private.webhook_endpoints w where w.id = v_id;
  return query select v_id, v_pending;
end
$$;
comment on function private.merchant_webhook_delete(uuid, uuid) is
  'merchant-webhook-delete: removes an endpoint of the owner''s merchant and its deliveries; answers how many were '
  'pending.';
revoke all on function private.merchant_webhook_delete(uuid, uuid) from public;
grant execute on function private.merchant_webhook_delete(uuid, uuid) to service_role;

create function private.merchant_webhook_rotate(p_owner uuid, p_endpoint uuid, p_secret_encrypted text, p_now timestamptz)
returns table (endpoint_id uuid, previous_secret_until timestamptz)
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid := private.merchant_webhook_endpoint(p_owner, p_endpoint);
begin
  -- the secret it replaces signs too for 24 hours (shared/webhooks/sign.ts ROTATION_OVERLAP_MS)
  return query
    update private.webhook_endpoints w
       set previous_secret_encrypted = w.secret_encrypted,
           previous_secret_until = p_now + interval '24 hours',
           secret_encrypted = p_secret_encrypted
     where w.id = v_id
    returning w.id, w.previous_secret_until;
end
$$;
comment on function private.merchant_webhook_rotate(uuid, uuid, text, timestamptz) is
  'merchant-webhook-rotate-secret: a new secret (encrypted by the caller) for an endpoint of the owner''s merchant; '
  'the one it replaces signs too until 24 hours after p_now.';
revoke all on function private.merchant_webhook_rotate(uuid, uuid, text, timestamptz) from public;
grant execute on function private.merchant_webhook_rotate(uuid, uuid, text, timestamptz) to service_role;

create function private.merchant_webhook_enable(p_owner uuid, p_endpoint uuid, p_now timestamptz)
returns table (endpoint_id uuid, deliveries_due integer)
language plpgsql
set search_path = ''
as $$
declare
  v_id uuid := private.merchant_webhook_endpoint(p_owner, p_endpoint);
begin
  return query select v_id, private.webhook_endpoint_enable(v_id, p_now);
end
$$;
comment on function private.merchant_webhook_enable(uuid, uuid, timestamptz) is
  'merchant-webhook-enable: turns an endpoint of the owner''s merchant back on; its pending deliveries are due at p_now.';
revoke all on function private.merchant_webhook_enable(uuid, uuid, timestamptz) from public;
grant execute on function private.merchant_webhook_enable(uuid, uuid, timestamptz) to service_role;

-- ---- the key's write ------------------------------------------------------------------------------

create function private.merchant_webhook_delivery_retry(p_merchant uuid, p_delivery uuid, p_now timestamptz)
returns table (delivery_id uuid, status text, next_attempt_at timestamptz)
language plpgsql
set search_path = ''
as $$
declare
  v_status text;
begin
  select d.status into v_status
    from private.webhook_deliveries d
    join private.webhook_endpoints w on w.id = d.endpoint_id
   where d.id = p_delivery and w.owner_id = p_merchant
     for update of d;
  if v_status is null then
    perform private.refuse(404, 'webhook_delivery_not_found', pg_catalog.jsonb_build_object('field', 'delivery_id'));
  end if;
  if v_status = 'succeeded' then
    perform private.refuse(409, 'webhook_delivery_succeeded', pg_catalog.jsonb_build_object('delivery_id', p_delivery));
  end if;
  perform private.webhook_delivery_retry(p_delivery, p_now);
  return query select d.id, d.status, d.next_attempt_at from private.webhook_deliveries d where d.id = p_delivery;
end
$$;
comment on function private.merchant_webhook_delivery_retry(uuid, uuid, timestamptz) is
  'webhook-delivery-retry: a failed or pending delivery of the merchant''s endpoints starts a new series, due at '
  'p_now; webhook_delivery_not_found for anyone else''s, webhook_delivery_succeeded for one that succeeded.';
revoke all on function private.merchant_webhook_delivery_retry(uuid, uuid, timestamptz) from public;
grant execute on function private.merchant_webhook_delivery_retry(uuid, uuid, timestamptz) to service_role;
