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
import { MERCHANT_ESCROW_CHECKOUT_ONLY } from '../../../shared/merchants/refusals.ts';
import { ACCOUNT_FROZEN } from '../../../shared/freezes/refusals.ts';

export default endpoint({
  name: 'escrow-fund',
  summary: 'The payer funds the escrow from the wallet, a card, a saved card or a bank transfer',
  description: 'Only the payer, at KYC tier 1 or above and within its limits for the total charge, while the escrow ' +
    "is a `draft` or `active` accepted but unfunded. `wallet` locks the total charge in the escrow's hold at once; " +
    '`card` and `saved_card` start a charge that `webhook-payments` applies when the provider confirms it; ' +
    "`bank_transfer` answers the payer's virtual account, and their oldest waiting escrow is funded from the " +
    'wallet once a transfer makes the wallet cover its total charge. Funded, a `draft` becomes `active` and its ' +
    'counterparty is invited (notification and SMS); an accepted escrow becomes `funded` and both parties are ' +
    "notified. A merchant's escrow is paid through the merchant's checkout only, never here.",
  refusals: [
    ACCOUNT_FROZEN,
    ESCROW_WRONG_PARTY,
    ESCROW_NOT_FOUND,
    ESCROW_WRONG_STATE,
    MERCHANT_ESCROW_CHECKOUT_ONLY,
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
  idempotent: (body) => (body.method === 'wallet' ? 'atomic' : 'provider'),
  repeat: "moves the payer's money into the escrow, or starts a card charge",
  body: escrowFundBody,
  response: escrowFundResponse,
  handler: ({ user, body }) => escrowFund(user, body),
});
