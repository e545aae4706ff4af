import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { reviewSubmit } from '../../../shared/reviews/reviews.ts';
import { reviewResponse, reviewSubmitBody } from '../../../shared/reviews/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';
import { ALREADY_REVIEWED, REVIEW_NEVER_ACCEPTED } from '../../../shared/reviews/refusals.ts';

export default endpoint({
  name: 'review-submit',
  summary: 'Reviews the other party of a finished escrow, once',
  description: 'Either party, once per escrow, when it is `released`, `refunded` or `ended` and the counterparty had ' +
    'accepted it. The other party is notified (`review_received`); when both have now reviewed, a `released` or ' +
    '`refunded` escrow is `ended` at once. No money moves.',
  refusals: [ESCROW_NOT_FOUND, ESCROW_WRONG_STATE, REVIEW_NEVER_ACCEPTED, ALREADY_REVIEWED],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'creates a review (a repeat without a key is 409: one review per reviewer and escrow)',
  body: reviewSubmitBody,
  response: reviewResponse,
  handler: ({ user, body }) => reviewSubmit(user, body),
});
