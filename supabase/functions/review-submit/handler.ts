import { endpoint } from '../../../shared/endpoint.ts';
import { submitReview } from '../../../shared/reviews.ts';
import { reviewResponse, reviewSubmitBody } from '../../../shared/schemas/reviews.ts';

export default endpoint({
  name: 'review-submit',
  method: 'POST',
  auth: 'user',
  status: 201,
  idempotent: true,
  body: reviewSubmitBody,
  response: reviewResponse,
  handler: ({ user, body }) => submitReview(user, body),
});
