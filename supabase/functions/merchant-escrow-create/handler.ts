import { endpoint } from '../../../shared/core/endpoint.ts';
import { merchantKey } from '../../../shared/merchants/key-auth.ts';
import { merchantEscrowCreate } from '../../../shared/merchants/escrows.ts';
import { merchantEscrowCreateBody, merchantEscrowResponse } from '../../../shared/merchants/escrow-schema.ts';
import { MERCHANT_REFERENCE_REUSED } from '../../../shared/merchants/refusals.ts';

export default endpoint({
  name: 'merchant-escrow-create',
  summary: "Creates an escrow between two of the merchant's customers, by the merchant's reference",
  description: "A merchant's key. The buyer is the escrow's initiator and payer (`payer_role` initiator), the " +
    'seller its counterparty; a phone without an account is held for its owner, who finds the escrow on signing ' +
    "up with it. The terms were agreed on the merchant's platform, so there is no accept step: the escrow is " +
    "created `draft`, with the category's inspection period. `merchant_fee` (at most 20% of the amount) is the " +
    "merchant's commission; `metadata` is answered as sent. Both parties are told by SMS, naming the merchant " +
    "and with no link, within the merchant's SMS limits (by default 200 an hour and 2,000 a day; over them the " +
    "escrow is created without SMS). The reference is the request's idempotency key: the same reference with " +
    'the same body answers the same escrow with 200; with another body, 409.',
  refusals: [MERCHANT_REFERENCE_REUSED],
  method: 'POST',
  auth: merchantKey,
  status: 201,
  alsoSucceedsWith: [{ status: 200, description: 'The escrow already created for this reference with the same body' }],
  idempotent: false,
  repeat: 'answers the escrow of its reference again (200): the reference is the idempotency key',
  body: merchantEscrowCreateBody,
  response: merchantEscrowResponse,
  handler: ({ user, body }) => merchantEscrowCreate(user, body),
});
