// What a merchant's webhook carries as `data`: the escrow as merchant-escrow-get answers the
// merchant when the delivery is sent. The queue (shared/webhooks/queue.ts) renders a delivery for
// its endpoint's owner by the owner's kind; a merchant's rendering is this function. An escrow that
// is not (or no longer) the merchant's gives null: the delivery fails as gone.
import { merchantEscrowOf } from './escrows.ts';

export function escrowAsMerchant(merchantId: string, escrowId: string): Promise<Record<string, unknown> | null> {
  return merchantEscrowOf(merchantId, escrowId);
}
