import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { reviewList } from '../../../shared/reviews/reviews.ts';
import { reviewListQuery, reviewListResponse } from '../../../shared/reviews/schema.ts';
import { USER_NOT_FOUND } from '../../../shared/reviews/refusals.ts';

export default endpoint({
  name: 'review-list',
  summary: 'Lists reviews, of the caller by default or of another user',
  description: "Any signed-in user, for any user's reviews (those they received), newest first; page with `before`. " +
    "The reviewer's last name is in full only to the two parties of that review, its initial to anyone else, and " +
    "the escrow's title is shown. Changes nothing.",
  refusals: [USER_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  query: reviewListQuery,
  response: reviewListResponse,
  handler: ({ user, query }) => reviewList(user, query),
});
