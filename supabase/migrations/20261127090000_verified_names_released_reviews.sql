-- =============================================================================================
-- Trust signals and verified names, after an attacker's probe of the hardened surface
--
-- A review counts toward a public rating only on an escrow whose money reached the payee: a
-- refunded escrow returns every kobo, fees included, so it cost nothing to review. And the names
-- an identity check matched are the account's from then on: once a NIN or BVN is bound to an
-- account, its first and last name no longer change (a rename would let a stolen number carry
-- the victim's names through the check and the thief's afterwards).
-- =============================================================================================

create or replace function private.reviews_counted(p_reviewee uuid, p_min_amount bigint)
returns setof uuid
language plpgsql
stable
set search_path = ''
as $$
declare
  r record;
  v_reviewer uuid;
  v_last timestamptz;
begin
  for r in
    select x.id, x.reviewer_id, x.created_at
      from public.reviews x
      join public.escrows e on e.id = x.escrow_id
     where x.reviewee_id = p_reviewee and e.amount >= p_min_amount
       -- money reached the payee (a release, or a settlement that paid them): a refunded deal cost
       -- its parties nothing, so its review proves nothing
       and e.released_at is not null
     order by x.reviewer_id, x.created_at, x.id
  loop
    if v_reviewer is distinct from r.reviewer_id then
      v_reviewer := r.reviewer_id;
      v_last := null;
    end if;
    -- the reviewer's first counted review of this person in 30 days
    if v_last is null or r.created_at >= v_last + interval '30 days' then
      v_last := r.created_at;
      return next r.id;
    end if;
  end loop;
end
$$;
comment on function private.reviews_counted(p_reviewee uuid, p_min_amount bigint) is
  'The reviews of the user that count toward their public rating: on an escrow of at least p_min_amount kobo that was released to its payee, and each reviewer''s first such review of them in 30 days (counted from the last counted one).';
revoke all on function private.reviews_counted(p_reviewee uuid, p_min_amount bigint) from public;
grant execute on function private.reviews_counted(p_reviewee uuid, p_min_amount bigint) to service_role;

create function private.profile_names_locked()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if (new.first_name is distinct from old.first_name or new.last_name is distinct from old.last_name)
     and exists (select 1 from private.identity_bindings b where b.user_id = new.id) then
    perform private.refuse(409, 'name_verified', pg_catalog.jsonb_build_object(
      'field', case when new.first_name is distinct from old.first_name then 'first_name' else 'last_name' end));
  end if;
  return new;
end
$$;
comment on function private.profile_names_locked() is
  'Refuses a change of first or last name once a NIN or BVN is bound to the account (name_verified, facts {field}).';
revoke all on function private.profile_names_locked() from public;

create trigger profiles_names_locked
  before update of first_name, last_name on public.profiles
  for each row execute function private.profile_names_locked();

-- Nothing reads the open operator flags by kind yet: the index waits for the back office that will.
drop index private.operator_flags_open_idx;
