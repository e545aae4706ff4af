// Refunds to a merchant escrow's buyer: money due back to the payer of a merchant escrow goes back
// through the payments provider to the card or account the checkout charged, by the charge's
// reference, never to a wallet. The SQL that gives money back (private.escrow_pay_back, or a
// late charge in private.escrow_charge_succeed) records a pending escrow_refund transaction
// naming the charge (metadata.charge_reference); after the commit it is handed to the provider
// here, once: the attempt is recorded first, so a refund whose call had no answer is settled by
// the refund webhooks (webhook-payments) or by looking it up (reconcileRefunds), and sent again
// only when the provider, asked later, has no refund of the charge at all. The job picks up
// refunds never attempted (a crash between the commit and the call).
import { asService } from '../core/db.ts';
import { errorMessage, log } from '../core/log.ts';
import { payments, ProviderError } from './payments/index.ts';

/** How handing a refund to the provider went. */
export type RefundSent =
  | { status: 'sent'; refundId: string }
  /** the provider answered no: the refund is failed and held for an operator (money stays booked) */
  | { status: 'refused'; reason: string }
  /** no usable answer: it stays pending, for the webhooks or the lookup */
  | { status: 'unknown' };

/** Minutes after an attempt before the job asks the provider about a refund still pending. */
export const REFUND_LOOKUP_AFTER_MINUTES = 15;

/**
 * Hands one pending refund to the provider, once (null: not a refund to send, or already
 * attempted). The attempt is recorded before the call, with the provider it goes through.
 */
export async function startRefund(txId: string): Promise<RefundSent | null> {
  const [r] = await asService((tx) =>
    tx<{ amount: string; charge_reference: string; escrow_id: string }[]>`
    update public.transactions
       set metadata = metadata || jsonb_build_object('refund_attempted_at', now())
     where id = ${txId} and type = 'escrow_refund' and status = 'pending' and metadata ? 'charge_reference'
       and not (metadata ? 'refund_attempted_at')
    returning amount::text, metadata ->> 'charge_reference' as charge_reference, escrow_id`
  );
  if (!r) return null;
  try {
    const answer = await payments().refund({
      chargeReference: r.charge_reference,
      amountKobo: Number(r.amount),
      note: `Escrow refund ${r.escrow_id}`,
    });
    await asService((tx) =>
      tx`
      update public.transactions set provider_refund_id = ${answer.refundId} where id = ${txId}`
    );
    return { status: 'sent', refundId: answer.refundId };
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (err.kind === 'refused') {
      // the provider said no (nothing was refunded): held for an operator like a failed refund
      await asService((tx) =>
        tx`select private.escrow_refund_settle(${r.charge_reference}, 'refund.failed', null, null, null,
                 ${tx.json({ refused: err.message } as never)})`
      );
      log.warn('refund.refused', { transaction_id: txId, error: err.message });
      return { status: 'refused', reason: err.message };
    }
    log.warn('refund.outcome_unknown', { transaction_id: txId, error: errorMessage(err) });
    return { status: 'unknown' };
  }
}

/**
 * After a commit that may have created refunds: the escrow's refunds never attempted, or the
 * refund of one charge (a late payment), handed to the provider.
 */
export async function startRefundsOf(of: { escrowId: string } | { chargeReference: string }): Promise<number> {
  const rows = await asService((tx) =>
    tx<{ id: string }[]>`
    select id from public.transactions
     where type = 'escrow_refund' and status = 'pending' and metadata ? 'charge_reference'
       and not (metadata ? 'refund_attempted_at')
       and ${
      'escrowId' in of ? tx`escrow_id = ${of.escrowId}` : tx`metadata ->> 'charge_reference' = ${of.chargeReference}`
    }`
  );
  for (const { id } of rows) await startRefund(id);
  return rows.length;
}

/** The job: refunds committed but never handed to the provider (older than a minute). */
export async function strandedRefunds(now: string): Promise<string[]> {
  const rows = await asService((tx) =>
    tx<{ id: string }[]>`
    select id from public.transactions
     where type = 'escrow_refund' and status = 'pending' and metadata ? 'charge_reference'
       and not (metadata ? 'refund_attempted_at')
       and created_at < ${now}::timestamptz - interval '1 minute'
     order by created_at limit 50`
  );
  return rows.map((r) => r.id);
}

/** How many times a refund the provider never received is sent again before an operator is asked. */
export const REFUND_MAX_RESENDS = 3;

/**
 * The job: refunds attempted long ago and still pending, settled from what the provider says of
 * the charge's refund (processed: succeeded; failed: held for review). No answer leaves it
 * pending. A provider that has no refund of that charge, a quarter of an hour after the attempt,
 * never received the request: it is sent again (the job's next run picks it up), which cannot
 * refund twice, since there is no first refund and the provider refunds no more than the charge
 * holds; after REFUND_MAX_RESENDS such lookups it is held for an operator (metadata.review) and
 * no longer looked up.
 */
export async function reconcileRefunds(now: string): Promise<number> {
  const provider = payments();
  const rows = await asService((tx) =>
    tx<{ id: string; charge_reference: string; charge_id: string | null }[]>`
    select t.id, t.metadata ->> 'charge_reference' as charge_reference, c.provider_charge_id as charge_id
      from public.transactions t left join public.transactions c on c.id::text = t.metadata ->> 'charge_reference'
     where t.type = 'escrow_refund' and t.status = 'pending' and t.provider = ${provider.name}
       and t.metadata ? 'charge_reference' and t.metadata ? 'refund_attempted_at' and not (t.metadata ? 'review')
       and (t.metadata ->> 'refund_attempted_at')::timestamptz
           < ${now}::timestamptz - make_interval(mins => ${REFUND_LOOKUP_AFTER_MINUTES})
     order by t.created_at limit 50`
  );
  let checked = 0;
  for (const r of rows) {
    try {
      const found = await provider.findRefund({ chargeReference: r.charge_reference, chargeId: r.charge_id });
      checked++;
      if (!found) {
        const [next] = await asService((tx) =>
          tx<{ held: boolean }[]>`
          update public.transactions
             set metadata = case
                   when coalesce((metadata ->> 'refund_resends')::int, 0) >= ${REFUND_MAX_RESENDS}
                   then metadata || jsonb_build_object('review', jsonb_build_object('reason', 'refund_not_at_provider'))
                   else (metadata - 'refund_attempted_at')
                        || jsonb_build_object('refund_resends', coalesce((metadata ->> 'refund_resends')::int, 0) + 1)
                 end
           where id = ${r.id} and status = 'pending' and metadata ? 'refund_attempted_at'
          returning metadata ? 'review' as held`
        );
        log.warn(next?.held ? 'refund.held_not_at_provider' : 'refund.resend_not_at_provider', {
          charge_reference: r.charge_reference,
        });
        continue;
      }
      const event = found.status === 'processed'
        ? 'refund.processed'
        : found.status === 'failed'
        ? 'refund.failed'
        : `refund.${found.status}`;
      await asService((tx) =>
        tx`select private.escrow_refund_settle(${r.charge_reference}, ${event}, ${found.amountKobo}, ${found.currency},
                 null, ${tx.json({ lookup: found } as never)})`
      );
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      log.warn('refund.lookup_unavailable', { charge_reference: r.charge_reference, error: errorMessage(err) });
    }
  }
  return checked;
}
