import { endpoint } from '../../../shared/endpoint.ts';
import { submitReview } from '../../../shared/reviews.ts';
import { reviewResponse, reviewSubmitBody } from '../../../shared/schemas/reviews.ts';

export default endpoint({
  name: 'review-submit',
  summary: 'Reviews the other party of an ended escrow, once',
  refusals: {
    404: 'No escrow with this id that the caller is a party to',
    409: 'The escrow has not ended yet, or the caller reviewed it already',
  },
  method: 'POST',
  auth: 'user',
  status: 201,
  idempotent: true,
  body: reviewSubmitBody,
  response: reviewResponse,
  handler: ({ user, body }) => submitReview(user, body),
});
