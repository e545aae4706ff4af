import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowDeliver } from '../../../shared/escrow/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_PARTY, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-deliver',
  summary: 'The payee marks the escrow delivered; inspection or release follows by category',
  description: 'Only the payee, once the escrow is `funded` and not yet delivered. A `goods_products` escrow goes ' +
    'into `inspection` until `inspection_ends_at`, a day later, when the job releases it; other categories stay ' +
    '`funded` with the delivery recorded (an `auto_dealership` escrow can be released only after it). The payer is ' +
    'notified (`delivered`); no money moves.',
  refusals: [ESCROW_WRONG_PARTY, ESCROW_NOT_FOUND, ESCROW_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'records the delivery, moves no money; a repeat is 409',
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowDeliver(user, body.escrow_id),
});
