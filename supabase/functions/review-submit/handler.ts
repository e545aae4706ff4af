import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { reviewSubmit } from '../../../shared/reviews/reviews.ts';
import { reviewResponse, reviewSubmitBody } from '../../../shared/reviews/schema.ts';
import { ESCROW_NOT_FOUND } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'review-submit',
  summary: 'Reviews the other party of an ended escrow, once',
  refusals: {
    404: ESCROW_NOT_FOUND,
    409: 'The escrow has not ended yet, or the caller reviewed it already',
  },
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'creates a review (a repeat without a key is 409: one review per reviewer and escrow)',
  body: reviewSubmitBody,
  response: reviewResponse,
  handler: ({ user, body }) => reviewSubmit(user, body),
});
