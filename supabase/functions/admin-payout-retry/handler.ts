import { endpoint } from '../../../shared/core/endpoint.ts';
import { z } from 'zod';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminPayoutRetry, payoutRetry } from '../../../shared/operators/money.ts';
import { OPERATOR_ROLE_REQUIRED } from '../../../shared/operators/refusals.ts';
import { adminPayoutRetryBody, adminPayoutRetryResponse, pendingApproval } from '../../../shared/operators/schema.ts';

export default endpoint({
  name: 'admin-payout-retry',
  summary: 'Sends a failed payout again, once the provider confirms its transfer failed',
  description:
    'Finance operators with a second-factor pass only (to anyone who is not an operator the function does not ' +
    'exist). Asks the provider about the old transfer by its reference first: only a confirmed failure or reversal ' +
    '(or no transfer by that reference) lets a new withdrawal of the same amount leave the wallet for the same ' +
    "payout account, once, under a new reference and the withdrawal's rules (a frozen account, the KYC limits, the " +
    'balance). A payout above FOUR_EYES_MIN_AMOUNT answers 202 with an approval for a second finance operator ' +
    '(admin-approval-decide); audited as `payout.retry`.',
  refusals: [OPERATOR_ROLE_REQUIRED, ...payoutRetry.refusals],
  method: 'POST',
  auth: operatorMode(['finance']),
  idempotent: 'provider',
  repeat: 'sends one new transfer; a second retry of the same payout is refused (payout_already_retried)',
  body: adminPayoutRetryBody,
  response: z.union([adminPayoutRetryResponse, pendingApproval]),
  alsoSucceedsWith: [{ status: 202, description: 'Above FOUR_EYES_MIN_AMOUNT: waiting for a second operator' }],
  handler: ({ user, body }) => adminPayoutRetry(user, body),
});
