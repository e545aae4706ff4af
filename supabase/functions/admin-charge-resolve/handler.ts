import { endpoint } from '../../../shared/core/endpoint.ts';
import { z } from 'zod';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminChargeResolve, chargeResolve } from '../../../shared/operators/money.ts';
import { OPERATOR_ROLE_REQUIRED } from '../../../shared/operators/refusals.ts';
import {
  adminChargeResolveBody,
  adminChargeResolveResponse,
  pendingApproval,
} from '../../../shared/operators/schema.ts';

export default endpoint({
  name: 'admin-charge-resolve',
  summary: "Resolves a charge held for review from the provider's verified answer",
  description:
    'Finance operators with a second-factor pass only (to anyone who is not an operator the function does not ' +
    "exist). Asks the provider's verify first: a success in naira is credited at the amount it confirms, never the " +
    "amount expected (the expected amount funds its escrow; another amount goes to the payer's wallet, or back to " +
    "a merchant escrow's buyer), a verified failure or abandonment fails the charge with no money, and anything " +
    'else is refused with nothing changed. A verified amount above FOUR_EYES_MIN_AMOUNT answers 202 with an ' +
    'approval for a second finance operator (admin-approval-decide); audited as `charge.resolve`.',
  refusals: [OPERATOR_ROLE_REQUIRED, ...chargeResolve.refusals],
  method: 'POST',
  auth: operatorMode(['finance']),
  idempotent: 'provider',
  repeat: 'credits or fails the charge once; a second resolution is refused (charge_not_held)',
  body: adminChargeResolveBody,
  response: z.union([adminChargeResolveResponse, pendingApproval]),
  alsoSucceedsWith: [{ status: 202, description: 'Above FOUR_EYES_MIN_AMOUNT: waiting for a second operator' }],
  handler: ({ user, body }) => adminChargeResolve(user, body),
});
