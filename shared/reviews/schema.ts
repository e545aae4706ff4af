// Reviews and the public profile (docs/reviews.md).
import { z } from 'zod';
import { queryInt, queryTimestamp, text, uuidSchema as uuid } from '../core/validation.ts';
import { count, isoDate, timestamp, uuid as responseUuid } from '../core/schema.ts';

// ---- requests --------------------------------------------------------------------------------

export const reviewSubmitBody = z.strictObject({
  escrow_id: uuid,
  rating: z.int().min(1, 'must be at least 1').max(5, 'must be at most 5'),
  // trimmed; blank is no feedback (stored and answered as null)
  feedback: text(0, 2000).nullable().optional(),
});
export type ReviewSubmit = z.output<typeof reviewSubmitBody>;

export const reviewListQuery = z.strictObject({
  user_id: uuid.optional(),
  limit: queryInt(20, 1, 50),
  before: queryTimestamp.optional(),
});

export const profilePublicGetQuery = z.strictObject({ user_id: uuid });

// ---- responses (the `data` of the success envelope) ----------------------------------------

/**
 * The spec's Review. reviewer_last_name is the full last name for the reviewer and the reviewee
 * of that review, its initial for everyone else (docs/reviews.md).
 */
export const reviewResponse = z.strictObject({
  id: responseUuid,
  escrow_id: responseUuid,
  reviewer_id: responseUuid,
  reviewee_id: responseUuid,
  rating: z.int().min(1).max(5),
  feedback: z.string().nullable(),
  created_at: timestamp,
  reviewer_first_name: z.string(),
  reviewer_last_name: z.string(),
  reviewer_avatar_url: z.string().nullable(),
  escrow_title: z.string(),
});
export type ReviewResponse = z.input<typeof reviewResponse>;

/** review-list: reviews of one user, newest first. */
export const reviewListResponse = z.array(reviewResponse);
export type ReviewListResponse = z.input<typeof reviewListResponse>;

/** profile-public-get: what anyone signed in may see of a user; never phone, address, next of kin or money. */
export const publicProfileResponse = z.strictObject({
  id: responseUuid,
  first_name: z.string(),
  last_initial: z.string(),
  username: z.string().nullable(),
  avatar_url: z.string().nullable(),
  kyc_tier: count,
  member_since: isoDate,
  completed_deals: count,
  rating_average: z.number().min(1).max(5).nullable(),
  rating_count: count,
});
export type PublicProfileResponse = z.input<typeof publicProfileResponse>;
