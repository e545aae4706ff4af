import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowFund } from '../../../shared/escrow/escrow.ts';
import { escrowFundBody, escrowFundResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_PARTY, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';
import { KYC_LIMIT_EXCEEDED, KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';
import { unclassifiedRefusals } from '../../../shared/core/endpoint.ts';

export default endpoint({
  name: 'escrow-fund',
  summary: 'The payer funds the escrow from the wallet, a card, a saved card or a bank transfer',
  refusals: [
    ...unclassifiedRefusals({
      402: 'The card was declined, or the payment provider refused the charge',
      403: ESCROW_WRONG_PARTY,
      404: `${ESCROW_NOT_FOUND}; or the saved card is not the caller's`,
      409:
        `${ESCROW_WRONG_STATE}; or: the wallet holds less than the escrow's total charge (the message says how much is missing)`,
      503: 'The payment provider is unavailable; nothing was charged',
    }),
    KYC_TIER_REQUIRED,
    KYC_LIMIT_EXCEEDED,
  ],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: "moves the payer's money into the escrow, or starts a card charge",
  body: escrowFundBody,
  response: escrowFundResponse,
  handler: ({ user, body }) => escrowFund(user, body),
});
