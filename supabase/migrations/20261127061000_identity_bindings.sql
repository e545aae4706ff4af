-- =============================================================================================
-- Identity numbers bound to their holder (docs/kyc.md#identity-numbers-bound-to-their-holder,
-- docs/security.md#identity-numbers-bound-to-their-holder)
--
-- A NIN or BVN that passed is bound to the account it passed on: one row of
-- private.identity_bindings per check type and keyed hash of the number (the number itself is
-- never stored), unique, so that of two accounts whose results for one number arrive at once only
-- one is bound and passes. Another account asking for a bound number is refused at request time
-- (identity_in_use, counted by the rate limit) and, if it got that far before the binding existed,
-- fails at result time with the label IDENTITY_IN_USE; both are flagged for an operator in
-- private.operator_flags. A binding outlives its holder: when the account row is deleted the
-- binding stays with a null holder, and a new account's check of that number is held pending with
-- a flag, never passed automatically. A NIN or BVN result passes only when the names the provider
-- returned are the profile's (shared/kyc/names.ts decides; webhook-identity passes the verdict):
-- else it fails with the label NAME_MISMATCH.
-- =============================================================================================

-- =============================================================================================
-- Operator flags: what the back office must look at
-- =============================================================================================

create table if not exists private.operator_flags (
  id uuid primary key default gen_random_uuid(),
  -- what happened, e.g. identity_in_use, identity_holder_erased
  kind text not null check (kind ~ '^[a-z][a-z0-9_]{0,59}$'),
  -- the account concerned (null once it is deleted)
  user_id uuid references private.users (id) on delete set null,
  -- the facts an operator needs; never an identity number whole
  details jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  resolved_at timestamptz
);
comment on table private.operator_flags is
  'Events an operator must look at (identity_in_use: a NIN or BVN bound to another account was submitted; identity_holder_erased: a number bound to a deleted account passed again and is held). Written by SQL functions only; read by the back office. No client role may read it.';
create index if not exists operator_flags_open_idx on private.operator_flags (created_at) where resolved_at is null;
create index if not exists operator_flags_user_idx on private.operator_flags (user_id) where user_id is not null;
alter table private.operator_flags enable row level security;
drop policy if exists "Service role manages operator flags" on private.operator_flags;
create policy "Service role manages operator flags" on private.operator_flags
  for all to service_role using (true) with check (true);
revoke all on private.operator_flags from public, anon, authenticated;
grant select, insert, update on private.operator_flags to service_role;

-- =============================================================================================
-- Bindings
-- =============================================================================================

create table private.identity_bindings (
  -- the check whose number it is: nin or bvn
  kind text not null check (kind in ('nin', 'bvn')),
  -- the keyed hash identity-verify keeps of the number (HMAC-SHA256 under IDENTITY_HASH_KEY)
  id_hash text not null check (id_hash ~ '^[0-9a-f]{64}$'),
  id_last4 text not null check (char_length(id_last4) between 1 and 4),
  -- the holder; null once the account is deleted, and the binding stays
  user_id uuid references private.users (id) on delete set null,
  -- the identity request that bound it
  reference text not null,
  bound_at timestamptz not null default now(),
  primary key (kind, id_hash)
);
comment on table private.identity_bindings is
  'Each NIN and BVN that passed, by keyed hash, and the account it is bound to (null: that account was deleted; the number stays bound). One row per number: no second account passes with it.';
create index identity_bindings_user_idx on private.identity_bindings (user_id);
alter table private.identity_bindings enable row level security;
create policy "Service role manages identity bindings" on private.identity_bindings
  for all to service_role using (true) with check (true);
revoke all on private.identity_bindings from public, anon, authenticated;
grant select, insert, update, delete on private.identity_bindings to service_role;

-- a request whose number is bound to a deleted account: held, for an operator
alter table private.identity_requests drop constraint identity_requests_status_check;
alter table private.identity_requests add constraint identity_requests_status_check
  check (status in ('pending', 'passed', 'failed', 'not_sent', 'held')) not valid;
alter table private.identity_requests validate constraint identity_requests_status_check;

-- the numbers that passed before this migration: bound to the first account they passed on; any
-- other account that passed with the same number is flagged (its check stands until an operator acts)
insert into private.identity_bindings (kind, id_hash, id_last4, user_id, reference, bound_at)
select distinct on (r.check_type, r.id_hash) r.check_type, r.id_hash, r.id_last4, r.user_id, r.reference,
       coalesce(r.completed_at, r.created_at)
  from private.identity_requests r
 where r.status = 'passed' and r.check_type in ('nin', 'bvn')
 order by r.check_type, r.id_hash, coalesce(r.completed_at, r.created_at), r.reference;

insert into private.operator_flags (kind, user_id, details)
select 'identity_in_use', r.user_id,
       pg_catalog.jsonb_build_object('check', r.check_type, 'id_last4', r.id_last4, 'reference', r.reference,
                                     'bound_to', b.user_id, 'found', 'migration')
  from private.identity_requests r
  join private.identity_bindings b on b.kind = r.check_type and b.id_hash = r.id_hash
 where r.status = 'passed' and r.user_id is distinct from b.user_id;

-- =============================================================================================
-- At request time
-- =============================================================================================

create function private.identity_number_in_use(p_user uuid, p_check text, p_id_hash text, p_id_last4 text)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  v_holder uuid;
begin
  if p_check not in ('nin', 'bvn') then
    return false;
  end if;
  select user_id into v_holder from private.identity_bindings where kind = p_check and id_hash = p_id_hash;
  -- free, the caller's own, or a deleted account's (that one is held at result time)
  if not found or v_holder is null or v_holder = p_user then
    return false;
  end if;
  insert into private.operator_flags (kind, user_id, details)
  values ('identity_in_use', p_user, pg_catalog.jsonb_build_object(
    'check', p_check, 'id_last4', p_id_last4, 'bound_to', v_holder, 'found', 'request'));
  return true;
end
$$;
comment on function private.identity_number_in_use(p_user uuid, p_check text, p_id_hash text, p_id_last4 text) is
  'identity-verify: true (and an operator flag identity_in_use) when this NIN or BVN is bound to another live account; the caller answers 409 identity_in_use after committing, so the flag and the rate limit stay.';
revoke all on function private.identity_number_in_use(p_user uuid, p_check text, p_id_hash text, p_id_last4 text) from public;
grant execute on function private.identity_number_in_use(p_user uuid, p_check text, p_id_hash text, p_id_last4 text) to service_role;

-- =============================================================================================
-- At result time
-- =============================================================================================

drop function private.identity_event(p_key text, p_reference text, p_check text, p_found boolean, p_status text,
                                     p_payload jsonb);

create function private.identity_event(p_key text, p_reference text, p_check text, p_found boolean, p_status text,
                                       p_payload jsonb, p_names_match boolean)
returns text
language plpgsql
set search_path = ''
as $$
declare
  r private.identity_requests%rowtype;
  v_outcome text;
  v_result jsonb;
  v_holder uuid;
  v_bound boolean;
  v_pass boolean := p_found;
  v_label text := pg_catalog.upper(coalesce(p_status, 'unknown'));
begin
  select * into r from private.identity_requests where reference = p_reference for update;
  insert into private.kyc_webhook_inbox (key, source, event_type, user_id, outcome, payload)
  values (p_key, 'identity', coalesce(p_check, 'unknown'), r.user_id, 'received', p_payload)
  on conflict (key) do nothing;
  if not found then
    return 'duplicate';
  end if;
  if r.reference is null then
    v_outcome := 'unknown_reference';
  elsif p_check is distinct from r.check_type then
    v_outcome := 'type_mismatch';
  elsif r.status in ('passed', 'failed', 'held') then
    v_outcome := 'already_done';
  else
    if p_found and r.check_type in ('nin', 'bvn') then
      if p_names_match is not true then
        -- found, but not this holder's names (or none returned)
        v_pass := false;
        v_label := 'NAME_MISMATCH';
      else
        -- bind the number to this account, unless it is bound already; of two results for one
        -- number at once, the second waits here for the first and finds its binding
        insert into private.identity_bindings (kind, id_hash, id_last4, user_id, reference)
        values (r.check_type, r.id_hash, r.id_last4, r.user_id, r.reference)
        on conflict (kind, id_hash) do nothing;
        v_bound := found;
        if not v_bound then
          select user_id into v_holder from private.identity_bindings
           where kind = r.check_type and id_hash = r.id_hash;
          if v_holder is null then
            -- bound to a deleted account: held pending for an operator, never passed here
            update private.identity_requests set status = 'held', completed_at = now() where reference = r.reference;
            insert into private.operator_flags (kind, user_id, details)
            values ('identity_holder_erased', r.user_id, pg_catalog.jsonb_build_object(
              'check', r.check_type, 'id_last4', r.id_last4, 'reference', r.reference));
            v_outcome := r.check_type || ':held';
            update private.kyc_webhook_inbox set outcome = v_outcome where key = p_key;
            return v_outcome;
          elsif v_holder <> r.user_id then
            v_pass := false;
            v_label := 'IDENTITY_IN_USE';
            insert into private.operator_flags (kind, user_id, details)
            values ('identity_in_use', r.user_id, pg_catalog.jsonb_build_object(
              'check', r.check_type, 'id_last4', r.id_last4, 'reference', r.reference, 'bound_to', v_holder,
              'found', 'result'));
          end if;
        end if;
      end if;
    end if;
    update private.identity_requests
       set status = case when v_pass then 'passed' else 'failed' end, completed_at = now()
     where reference = r.reference;
    v_result := private.kyc_record(r.user_id, r.check_type, v_pass,
                  case when v_pass then '{}'::text[] else array[v_label] end,
                  null, r.provider, r.reference, null);
    update private.kyc_checks set id_last4 = r.id_last4 where user_id = r.user_id and check_type = r.check_type;
    v_outcome := r.check_type || ':' || case v_label when 'NAME_MISMATCH' then 'name_mismatch'
                                                      when 'IDENTITY_IN_USE' then 'identity_in_use'
                                                      else v_result ->> 'outcome' end;
  end if;
  update private.kyc_webhook_inbox set outcome = v_outcome where key = p_key;
  return v_outcome;
end
$$;
comment on function private.identity_event(p_key text, p_reference text, p_check text, p_found boolean, p_status text, p_payload jsonb, p_names_match boolean) is
  'webhook-identity: takes a result once (by its key) and applies it to the request it names. found passes, except a NIN or BVN whose returned names are not the holder''s (NAME_MISMATCH), or that is bound to another account (IDENTITY_IN_USE, flagged), or to a deleted one (held pending, flagged); a pass binds the number. Anything else fails (the user may retry). An unknown reference or another type than the request''s is kept and applied to nobody.';
revoke all on function private.identity_event(p_key text, p_reference text, p_check text, p_found boolean, p_status text, p_payload jsonb, p_names_match boolean) from public;
grant execute on function private.identity_event(p_key text, p_reference text, p_check text, p_found boolean, p_status text, p_payload jsonb, p_names_match boolean) to service_role;
