-- =============================================================================================
-- Reviews (issue 10, DESIGN.md §8.2): after a deal, each party may rate the other once, 1 to 5
-- with an optional comment. Reviews are what a user's public profile shows (profile-public-get,
-- review-list); when both parties have reviewed, the escrow ends at once instead of 14 days after
-- it closed (private.run_jobs). The reviewee is told by a `review_received` notification.
--
-- Who reads what: the reviewer and the reviewee read their review rows directly (RLS below). The
-- public listing of a user's reviews and the public profile are read by the functions as
-- service_role with an explicit list of columns (shared/reviews.ts), never `select *`, so a
-- column added to profiles, escrows or reviews later is not published by accident.
-- =============================================================================================

-- =============================================================================================
-- Notifications: the new event type and entity type
-- =============================================================================================

-- The lists of shared/enums.ts (NOTIFICATION_EVENT_TYPES, ENTITY_TYPES) gain review_received and
-- review. The checks are widened, so every existing row passes: added NOT VALID and validated
-- afterwards, which scans the table without blocking the writes of the transitions meanwhile.
alter table public.notifications drop constraint notifications_event_type_check;
alter table public.notifications add constraint notifications_event_type_check check (event_type in (
  'escrow_created', 'invite_received', 'funded', 'funding_shortfall', 'active', 'payment_requested', 'declined',
  'cancelled', 'delivered', 'released', 'refunded', 'payout_succeeded', 'payout_failed', 'milestone_proposed',
  'milestone_updated', 'milestone_accepted', 'milestone_completed', 'milestone_released', 'review_received'
)) not valid;
alter table public.notifications validate constraint notifications_event_type_check;

alter table public.notifications drop constraint notifications_entity_type_check;
alter table public.notifications add constraint notifications_entity_type_check
  check (entity_type in ('escrow', 'transaction', 'milestone', 'review')) not valid;
alter table public.notifications validate constraint notifications_entity_type_check;

-- =============================================================================================
-- Reviews
-- =============================================================================================

create table public.reviews (
  id uuid primary key default gen_random_uuid(),
  escrow_id uuid not null references public.escrows (id) on delete cascade,
  reviewer_id uuid not null references private.users (id) on delete cascade,
  reviewee_id uuid not null references private.users (id) on delete cascade,
  rating integer not null check (rating between 1 and 5),
  -- null: no comment (a blank one is stored as null); trimmed by the function before it gets here
  feedback text check (char_length(feedback) between 1 and 2000),
  created_at timestamptz not null default now(),
  constraint reviews_not_self check (reviewer_id <> reviewee_id),
  -- one review per reviewer per escrow; also the index of every lookup by escrow
  constraint reviews_escrow_reviewer_key unique (escrow_id, reviewer_id)
);
comment on table public.reviews is
  'A party''s rating (1-5) and optional feedback of the other party after a deal, one per reviewer and escrow. The '
  'reviewer and the reviewee read it directly; everyone else through review-list (service role, chosen columns).';
comment on column public.reviews.reviewee_id is
  'The other party of the escrow: whose public profile the review is shown on.';
comment on column public.reviews.created_at is
  'Strictly increasing per reviewee (trigger), so review-list''s `before` cursor loses and repeats nothing.';
-- review-list pages a reviewee's reviews by created_at, newest first: unique per reviewee (trigger
-- below), so the timestamp cursor is exact; also the index of the reviewee foreign key.
create unique index reviews_reviewee_created_key on public.reviews (reviewee_id, created_at desc);
create index reviews_reviewer_idx on public.reviews (reviewer_id);
create trigger reviews_created_at_increasing before insert on public.reviews
  for each row execute function private.strictly_increasing_created_at('reviewee_id');
alter table public.reviews enable row level security;

-- Written only by private.review_submit. The API roles read only the rows they are part of: a
-- reviewer their own reviews, a reviewee the reviews of them. Listing anyone's reviews is
-- review-list, which reads as service_role with the columns the Review shape names.
revoke all on public.reviews from anon, authenticated;
grant select on public.reviews to authenticated;
grant select, insert, update, delete on public.reviews to service_role;

create policy "Reviewers and reviewees can read their reviews"
  on public.reviews for select to authenticated
  using (reviewer_id = (select auth.uid()) or reviewee_id = (select auth.uid()));
create policy "Service role manages reviews" on public.reviews
  for all to service_role using (true) with check (true);

-- =============================================================================================
-- Submitting one
-- =============================================================================================

-- review-submit: p_reviewer rates the other party of escrow p_escrow. Only a party (ES404 to
-- anyone else, and for a deleted escrow), only once the deal is over (released, refunded or
-- ended; ES409 otherwise) and only when the counterparty accepted it (a deal that never took
-- place has nobody to review: ES409), one review per reviewer (ES409). When the other party has
-- reviewed already, the escrow ends now. The reviewee is told, and offered to review back while
-- they have not. Returns the review's id.
create function private.review_submit(p_escrow uuid, p_reviewer uuid, p_rating integer, p_feedback text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  e public.escrows := private.escrow_lock(p_escrow, p_reviewer);
  v_reviewee uuid;
  v_reviewee_reviewed boolean;
  v_name text;
  v_id uuid;
begin
  if e.status = 'deleted' then
    raise exception 'escrow not found' using errcode = 'ES404';
  end if;
  if e.status not in ('released', 'refunded', 'ended') then
    perform private.refuse_state(e, 'review');
  end if;
  if e.accepted_at is null then
    raise exception 'cannot review an escrow the counterparty never accepted' using errcode = 'ES409';
  end if;
  if p_rating is null or p_rating not between 1 and 5 then
    raise exception 'rating must be an integer from 1 to 5' using errcode = 'ES422';
  end if;
  if pg_catalog.char_length(p_feedback) > 2000 then
    raise exception 'feedback must be at most 2000 characters' using errcode = 'ES422';
  end if;
  -- the escrow lock serialises every review of this escrow: the check below sees the other's
  if exists (select 1 from public.reviews r where r.escrow_id = e.id and r.reviewer_id = p_reviewer) then
    raise exception 'you have already reviewed this escrow' using errcode = 'ES409';
  end if;
  v_reviewee := case when p_reviewer = e.initiator_id then e.counterparty_id else e.initiator_id end;
  insert into public.reviews (escrow_id, reviewer_id, reviewee_id, rating, feedback)
  values (e.id, p_reviewer, v_reviewee, p_rating, nullif(p_feedback, ''))
  returning id into v_id;
  v_reviewee_reviewed := exists (
    select 1 from public.reviews r where r.escrow_id = e.id and r.reviewer_id = v_reviewee);
  if v_reviewee_reviewed and e.status <> 'ended' then
    update public.escrows set status = 'ended', ended_at = now(), updated_at = now() where id = e.id;
  end if;
  select p.first_name || ' ' || p.last_name into v_name from public.profiles p where p.id = p_reviewer;
  perform private.notify(v_reviewee, e.id, 'review_received',
    pg_catalog.jsonb_build_object('kind', 'review_received', 'reviewer', v_name, 'title', e.title,
                                  'rating', p_rating),
    'review', v_id, case when v_reviewee_reviewed then null else 'Leave a review' end);
  return v_id;
end
$$;
comment on function private.review_submit(uuid, uuid, integer, text) is
  'review-submit: a party rates the other party of a released, refunded or ended escrow, once; the escrow ends when '
  'both have reviewed; the reviewee is notified. Returns the review id.';
revoke execute on function private.review_submit(uuid, uuid, integer, text) from public, anon, authenticated;
grant execute on function private.review_submit(uuid, uuid, integer, text) to service_role;
