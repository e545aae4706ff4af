import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { reviewList } from '../../../shared/reviews/reviews.ts';
import { reviewListQuery, reviewListResponse } from '../../../shared/reviews/schema.ts';
import { USER_NOT_FOUND } from '../../../shared/reviews/refusals.ts';

export default endpoint({
  name: 'review-list',
  summary: 'Lists reviews, of the caller by default or of another user',
  refusals: [USER_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  query: reviewListQuery,
  response: reviewListResponse,
  handler: ({ user, query }) => reviewList(user, query),
});
