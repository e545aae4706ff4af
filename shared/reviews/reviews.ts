// Reviews and the public profile (docs/reviews.md). Submitting is one SQL function,
// private.review_submit (the checks, the insert, ending the escrow, the notification). Reading a
// user's reviews or public profile is open to anyone signed in, while row-level security lets a
// user read only their own profile and the reviews they wrote or received: so these reads run as
// service_role, with the columns listed here one by one (never `select *`), and each answer is
// built field by field. Nothing else of a profile (phone, address, bio, next of kin) or of an
// escrow (amount, parties' phones) is read.
import { getConfig } from '../core/config.ts';
import { asService, type Fragment, type Tx } from '../core/db.ts';
import type { AuthUser } from '../auth/session.ts';
import { USER_NOT_FOUND } from './refusals.ts';
import type { PublicProfileResponse, ReviewResponse, ReviewSubmit } from './schema.ts';

/** A review as read (the select below, column by column): exactly the answer's fields, before the last name is shortened. */
type ReviewRow = ReviewResponse;

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** The first letter of a name, as a public profile shows a last name ('Obi' -> 'O', 'ọlá' -> 'Ọ'). */
export function initialOf(name: string): string {
  const first = graphemes.segment(name.trim())[Symbol.iterator]().next();
  return first.done ? '' : first.value.segment.toUpperCase();
}

/**
 * A review as `callerId` may see it: the reviewer's full last name to the two parties of the
 * review, who know each other from the deal; to anyone else its initial, as on a public profile.
 */
function reviewView(r: ReviewRow, callerId: string): ReviewResponse {
  const party = callerId === r.reviewer_id || callerId === r.reviewee_id;
  return {
    id: r.id,
    escrow_id: r.escrow_id,
    reviewer_id: r.reviewer_id,
    reviewee_id: r.reviewee_id,
    rating: r.rating,
    feedback: r.feedback,
    created_at: r.created_at,
    reviewer_first_name: r.reviewer_first_name,
    reviewer_last_name: party ? r.reviewer_last_name : initialOf(r.reviewer_last_name),
    reviewer_avatar_url: r.reviewer_avatar_url,
    escrow_title: r.escrow_title,
  };
}

/** The reviews matching `where`, newest first, with the reviewer's name and avatar and the escrow's title. */
const reviewRows = (tx: Tx, where: Fragment, limit: number) =>
  tx<ReviewRow[]>`
    select r.id, r.escrow_id, r.reviewer_id, r.reviewee_id, r.rating, r.feedback, r.created_at,
           p.first_name as reviewer_first_name, p.last_name as reviewer_last_name,
           p.avatar_url as reviewer_avatar_url, e.title as escrow_title
      from public.reviews r
      join public.profiles p on p.id = r.reviewer_id
      join public.escrows e on e.id = r.escrow_id
     where ${where}
     order by r.created_at desc
     limit ${limit}`;

/** review-submit: the caller reviews the other party of the escrow; 201 with the review. */
export function reviewSubmit(user: AuthUser, input: ReviewSubmit): Promise<ReviewResponse> {
  return asService(async (tx) => {
    const [created] = await tx<{ id: string }[]>`
      select private.review_submit(${input.escrow_id}, ${user.id}, ${input.rating}, ${input.feedback ?? null}) as id`;
    const [row] = await reviewRows(tx, tx`r.id = ${(created as { id: string }).id}`, 1);
    return reviewView(row as ReviewRow, user.id);
  });
}

/** review-list: the reviews of a user (the caller by default), newest first, `before` exclusive. */
export function reviewList(
  user: AuthUser,
  q: { user_id?: string; limit: number; before?: string },
): Promise<ReviewResponse[]> {
  const target = q.user_id ?? user.id;
  return asService(async (tx) => {
    const [known] = await tx`select 1 from public.profiles where id = ${target}`;
    if (!known) throw USER_NOT_FOUND.error({});
    const rows = await reviewRows(
      tx,
      q.before
        ? tx`r.reviewee_id = ${target} and r.created_at < ${q.before}::timestamptz`
        : tx`r.reviewee_id = ${target}`,
      q.limit,
    );
    return rows.map((r) => reviewView(r, user.id));
  });
}

interface PublicProfileRow {
  id: string;
  first_name: string;
  last_name: string;
  username: string | null;
  avatar_url: string | null;
  member_since: string;
  completed_deals: number;
  rating_average: string | null;
  rating_count: number;
  kyc_tier: number;
}

/**
 * profile-public-get: what a counterparty may see before trusting someone. Completed deals are
 * the distinct counterparties of the user's escrows whose money was released to the payee (status
 * released, or ended after a release) and whose amount is at least REVIEW_MIN_AMOUNT; the rating
 * counts only the reviews private.reviews_counted counts (that amount, and one per reviewer in 30
 * days), so deals of a kobo with a friend build no reputation (docs/reviews.md#which-reviews-count).
 * Member since is the sign-up date (UTC), not its time of day.
 */
export function profilePublicGet(userId: string): Promise<PublicProfileResponse> {
  return asService(async (tx) => {
    const [p] = await tx<PublicProfileRow[]>`
      select p.id, p.first_name, p.last_name, p.username, p.avatar_url,
             to_char(p.created_at at time zone 'UTC', 'YYYY-MM-DD') as member_since,
             r.completed_deals, r.rating_average::text, r.rating_count,
             (select u.kyc_tier from private.users u where u.id = p.id) as kyc_tier
        from public.profiles p
        cross join lateral private.profile_reputation(p.id, ${getConfig().REVIEW_MIN_AMOUNT}) r
       where p.id = ${userId}`;
    if (!p) throw USER_NOT_FOUND.error({});
    return {
      id: p.id,
      first_name: p.first_name,
      last_initial: initialOf(p.last_name),
      username: p.username,
      avatar_url: p.avatar_url,
      // the tier the user's passed checks reached (docs/kyc.md): how far others may trust the name
      kyc_tier: p.kyc_tier,
      member_since: p.member_since,
      completed_deals: p.completed_deals,
      rating_average: p.rating_average === null ? null : Number(p.rating_average),
      rating_count: p.rating_count,
    };
  });
}
