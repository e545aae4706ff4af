// What a merchant's webhook carries as `data`: the escrow as the merchant reads it. The queue
// (shared/webhooks/queue.ts) renders a delivery for its endpoint's owner by the owner's kind; a
// merchant's rendering is this function.
//
// For now a merchant reads no escrow through any operation, so this is a small view read as the
// service ({id, status, amount, currency, created_at}), given for an escrow whose event named the
// merchant as a recipient. It is meant to be replaced by the escrow as merchant-escrow-get answers
// the merchant once that operation exists.
import { asService } from '../core/db.ts';
import { toNaira } from '../core/money.ts';

/** The escrow as the merchant's webhook shows it; null when there is no such escrow (the delivery is gone). */
export async function escrowAsMerchant(_merchantId: string, escrowId: string): Promise<Record<string, unknown> | null> {
  const [row] = await asService((tx) =>
    tx<{ id: string; status: string; amount: string; currency: string; created_at: string }[]>`
      select id, status, amount::text, currency, created_at from public.escrows where id = ${escrowId}`
  );
  if (!row) return null;
  return {
    id: row.id,
    status: row.status,
    amount: toNaira(row.amount),
    currency: row.currency,
    created_at: row.created_at,
  };
}
