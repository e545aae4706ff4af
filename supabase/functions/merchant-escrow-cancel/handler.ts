import { endpoint } from '../../../shared/core/endpoint.ts';
import { merchantKey } from '../../../shared/merchants/key-auth.ts';
import { merchantEscrowCancel } from '../../../shared/merchants/escrows.ts';
import { merchantEscrowIdBody, merchantEscrowResponse } from '../../../shared/merchants/escrow-schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'merchant-escrow-cancel',
  summary: "Cancels one of the merchant's escrows before it is funded",
  description: "A merchant's key, for an escrow the merchant created that is still an unfunded `draft`: it becomes " +
    "`cancelled` and both parties are notified (`cancelled`). Once funded it is 409; another merchant's escrow " +
    'is 404.',
  refusals: [ESCROW_NOT_FOUND, ESCROW_WRONG_STATE],
  method: 'POST',
  auth: merchantKey,
  idempotent: true,
  repeat: 'a second cancel of a cancelled escrow is refused (409)',
  body: merchantEscrowIdBody,
  response: merchantEscrowResponse,
  handler: ({ user, body }) => merchantEscrowCancel(user, body),
});
