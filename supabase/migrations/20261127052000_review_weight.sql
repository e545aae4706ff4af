-- =============================================================================================
-- Reviews that count (docs/reviews.md#which-reviews-count, docs/security.md#wash-reviews)
--
-- Ten escrows of NGN 0.01 with a friend, released and reviewed, gave a public profile of 10
-- completed deals and 5.00 stars for NGN 0.10 of fees. Now the public profile counts:
--
--   * a review toward the rating (and rating_count) only when its escrow's amount is at least
--     REVIEW_MIN_AMOUNT (NGN 1,000 by default) and it is the reviewer's first counted review of
--     that person in 30 days (a later one counts once 30 days have passed since the last counted);
--   * completed_deals as the distinct counterparties of the user's released escrows of at least
--     that amount.
--
-- Reviews below the line still exist and are listed by review-list as before. The amount comes
-- from the function as a parameter (shared/reviews/reviews.ts passes the configuration).
-- =============================================================================================

create function private.reviews_counted(p_reviewee uuid, p_min_amount bigint)
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
  'The reviews of the user that count toward their public rating: on an escrow of at least p_min_amount kobo, and each reviewer''s first such review of them in 30 days (counted from the last counted one).';
revoke all on function private.reviews_counted(p_reviewee uuid, p_min_amount bigint) from public;
grant execute on function private.reviews_counted(p_reviewee uuid, p_min_amount bigint) to service_role;

create function private.profile_reputation(p_user uuid, p_min_amount bigint)
returns table (completed_deals integer, rating_average numeric, rating_count integer)
language sql
stable
set search_path = ''
as $$
  select
    -- distinct counterparties of the user's escrows released to the payee (released, or ended
    -- after a release) of at least the amount
    (select count(distinct case when e.initiator_id = p_user then e.counterparty_id else e.initiator_id end)::integer
       from public.escrows e
      where (e.initiator_id = p_user or e.counterparty_id = p_user)
        and e.status in ('released', 'ended') and e.released_at is not null
        and e.amount >= p_min_amount),
    round(avg(x.rating), 2),
    count(x.id)::integer
  from public.reviews x
  where x.id in (select private.reviews_counted(p_user, p_min_amount));
$$;
comment on function private.profile_reputation(p_user uuid, p_min_amount bigint) is
  'profile-public-get''s completed_deals (distinct counterparties of released escrows of at least p_min_amount kobo), rating_average (2 decimals, null without counted reviews) and rating_count, over the reviews private.reviews_counted counts.';
revoke all on function private.profile_reputation(p_user uuid, p_min_amount bigint) from public;
grant execute on function private.profile_reputation(p_user uuid, p_min_amount bigint) to service_role;
