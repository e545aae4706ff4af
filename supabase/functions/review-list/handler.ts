import { endpoint } from '../../../shared/endpoint.ts';
import { listReviews } from '../../../shared/reviews.ts';
import { reviewListQuery, reviewListResponse } from '../../../shared/schemas/reviews.ts';

export default endpoint({
  name: 'review-list',
  method: 'GET',
  auth: 'user',
  query: reviewListQuery,
  response: reviewListResponse,
  handler: ({ user, query }) => listReviews(user, query),
});
