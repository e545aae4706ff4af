import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowFund } from '../../../shared/escrow/escrow.ts';
import { escrowFundBody, escrowFundResponse } from '../../../shared/escrow/schema.ts';
import {
  ESCROW_NOT_FOUND,
  ESCROW_WRONG_PARTY,
  ESCROW_WRONG_STATE,
  VIRTUAL_ACCOUNT_REQUIRED,
} from '../../../shared/escrow/refusals.ts';
import { KYC_LIMIT_EXCEEDED, KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';
import { CARD_DECLINED, CARD_NOT_FOUND, CHARGE_REFUSED, INSUFFICIENT_FUNDS } from '../../../shared/money/refusals.ts';
import { PROVIDER_UNAVAILABLE } from '../../../shared/core/refusals.ts';

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
    // a card charge's refusals are the money area's (shared/money/payments/charge.ts)
    CARD_NOT_FOUND,
    CARD_DECLINED,
    CHARGE_REFUSED,
    PROVIDER_UNAVAILABLE,
  ],
  method: 'POST',
  auth: userSession,
  idempotent: true,
  repeat: "moves the payer's money into the escrow, or starts a card charge",
  body: escrowFundBody,
  response: escrowFundResponse,
  handler: ({ user, body }) => escrowFund(user, body),
});
