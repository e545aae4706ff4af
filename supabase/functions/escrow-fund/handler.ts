import { endpoint } from '../../../shared/endpoint.ts';
import { fundEscrow } from '../../../shared/escrow.ts';
import { escrowFundBody, escrowFundResponse } from '../../../shared/schemas/escrow.ts';

export default endpoint({
  name: 'escrow-fund',
  summary: 'The payer funds the escrow from the wallet, a card, a saved card or a bank transfer',
  refusals: {
    402: 'The card was declined, or the payment provider refused the charge',
    403:
      "The caller's role in this escrow cannot do this (e.g. the payee releasing); or: Over a KYC tier limit: the message names the limit, the amount and the tier that allows it",
    404:
      "No escrow with this id (or invite token) that the caller is a party to; or the saved card is not the caller's",
    409:
      "The escrow's state does not allow this now; the message says what comes first; or: the wallet holds less than the escrow's total charge (the message says how much is missing)",
    503: 'The payment provider is unavailable; nothing was charged',
  },
  method: 'POST',
  auth: 'user',
  idempotent: true,
  body: escrowFundBody,
  response: escrowFundResponse,
  handler: ({ user, body }) => fundEscrow(user, body),
});
