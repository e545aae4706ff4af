import { endpoint } from '../../../shared/core/endpoint.ts';
import { merchantKey } from '../../../shared/merchants/key-auth.ts';
import { merchantEscrowCreate } from '../../../shared/merchants/escrows.ts';
import { merchantEscrowCreateBody, merchantEscrowResponse } from '../../../shared/merchants/escrow-schema.ts';
import { MERCHANT_PARTY_IS_OWNER, MERCHANT_REFERENCE_REUSED } from '../../../shared/merchants/refusals.ts';
import { KYC_LIMIT_EXCEEDED } from '../../../shared/kyc/refusals.ts';
import { CHARGE_REFUSED } from '../../../shared/money/refusals.ts';
import { PROVIDER_UNAVAILABLE } from '../../../shared/core/refusals.ts';

export default endpoint({
  name: 'merchant-escrow-create',
  summary: "Creates an escrow between two of the merchant's customers, by the merchant's reference",
  description: "A merchant's key; the buyer becomes the initiator and payer, the seller the counterparty, and a " +
    'phone without an account is held for whoever signs up with it. There is no accept step (the terms were agreed ' +
    "on the merchant's platform; neither party may be its owner): the escrow is created `draft`, " +
    "with the category's inspection period, and both parties get an SMS naming the merchant, with no link, within the merchant's SMS limits. The reference is the " +
    'idempotency key: the same reference and body answer the same escrow (200), another body is 409. `checkout_url` ' +
    "is the provider's hosted checkout for the total charge, within the merchant " +
    "owner's single and daily limits (else 403, nothing created); paid, the escrow is `funded`; unpaid, " +
    'cancelled after `MERCHANT_ESCROW_EXPIRY_HOURS`.',
  refusals: [
    MERCHANT_PARTY_IS_OWNER,
    MERCHANT_REFERENCE_REUSED,
    KYC_LIMIT_EXCEEDED,
    CHARGE_REFUSED,
    PROVIDER_UNAVAILABLE,
  ],
  method: 'POST',
  auth: merchantKey,
  status: 201,
  alsoSucceedsWith: [{ status: 200, description: 'The escrow already created for this reference with the same body' }],
  idempotent: 'provider',
  repeat: 'answers the escrow of its reference again (200): the reference is the idempotency key, and an ' +
    'Idempotency-Key is honoured too',
  body: merchantEscrowCreateBody,
  response: merchantEscrowResponse,
  handler: ({ user, body }) => merchantEscrowCreate(user, body),
});
