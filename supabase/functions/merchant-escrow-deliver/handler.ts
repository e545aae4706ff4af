import { endpoint } from '../../../shared/core/endpoint.ts';
import { merchantKey } from '../../../shared/merchants/key-auth.ts';
import { merchantEscrowDeliver } from '../../../shared/merchants/escrows.ts';
import { merchantEscrowDeliverBody, merchantEscrowResponse } from '../../../shared/merchants/escrow-schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'merchant-escrow-deliver',
  summary: "Marks one of the merchant's funded escrows delivered, with the shipment's tracking",
  description: "A merchant's key, for an escrow the merchant created once it is `funded` and not yet delivered: " +
    "the delivery is recorded as the seller's `escrow-deliver` records it (a `goods_products` escrow goes into " +
    "`inspection` for its category's period; other categories stay `funded` with the delivery recorded), the " +
    'buyer is notified (`delivered`), and `tracking` is kept and answered with the escrow. No money moves. ' +
    "Another merchant's escrow is 404; an escrow not funded, or already delivered, is 409.",
  refusals: [ESCROW_NOT_FOUND, ESCROW_WRONG_STATE],
  method: 'POST',
  auth: merchantKey,
  idempotent: false,
  repeat: 'records the delivery, moves no money; a repeat is 409',
  body: merchantEscrowDeliverBody,
  response: merchantEscrowResponse,
  handler: ({ user, body }) => merchantEscrowDeliver(user, body),
});
