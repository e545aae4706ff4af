import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowFund } from '../../../shared/escrow/escrow.ts';
import { escrowFundBody, escrowFundResponse } from '../../../shared/escrow/schema.ts';
import {
  ESCROW_NOT_FOUND,
  ESCROW_WRONG_PARTY,
  ESCROW_WRONG_STATE,
  INSUFFICIENT_FUNDS,
  VIRTUAL_ACCOUNT_REQUIRED,
} from '../../../shared/escrow/refusals.ts';
import { KYC_LIMIT_EXCEEDED, KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';
import { unclassifiedRefusals } from '../../../shared/core/endpoint.ts';

export default endpoint({
  name: 'escrow-fund',
  summary: 'The payer funds the escrow from the wallet, a card, a saved card or a bank transfer',
  refusals: [
    ESCROW_WRONG_PARTY,
    ESCROW_NOT_FOUND,
    ESCROW_WRONG_STATE,
    INSUFFICIENT_FUNDS,
    VIRTUAL_ACCOUNT_REQUIRED,
    KYC_TIER_REQUIRED,
    KYC_LIMIT_EXCEEDED,
    // the card's refusals are the money area's (shared/money/payments/charge.ts), not yet coded
    ...unclassifiedRefusals({
      402: 'The card was declined, or the payment provider refused the charge',
      404: "The saved card is not the caller's",
      503: 'The payment provider is unavailable; nothing was charged',
    }),
  ],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: "moves the payer's money into the escrow, or starts a card charge",
  body: escrowFundBody,
  response: escrowFundResponse,
  handler: ({ user, body }) => escrowFund(user, body),
});
