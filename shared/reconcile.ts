// Reconciliation: money movements still pending long after they started, because a webhook was
// lost or a call to the provider went unanswered, are settled from what the provider says
// (Paystack's verify endpoints), through the same SQL functions the webhooks use. Those functions
// are idempotent on the transaction's state, so a webhook arriving afterwards changes nothing.
// Run by the job with its explicit "now".
import { asService } from './db.ts';
import { errorMessage, log } from './log.ts';
import { payments, ProviderError } from './payments/index.ts';

/** How long a movement may stay pending before we ask the provider. */
export const RECONCILE_AFTER_MINUTES = 30;
/** A charge the customer never completed is failed after this long. */
export const ABANDON_CHARGE_AFTER_HOURS = 24;

interface Pending {
  id: string;
  type: string;
  abandoned: boolean;
}

async function settleCharge(p: Pending): Promise<string> {
  const v = await payments().verifyCharge(p.id);
  if (v?.status === 'success') {
    const payload = { reconciled: true, status: v.status, amount: v.amountKobo };
    const [row] = await asService((tx) =>
      p.type === 'wallet_topup'
        ? tx<{ outcome: string }[]>`select private.topup_succeed(${p.id}, ${v.amountKobo}, ${v.chargeId}, ${tx.json(payload)}) as outcome`
        : tx<{ outcome: string }[]>`select private.escrow_charge_succeed(${p.id}, ${v.amountKobo}, ${v.chargeId}, ${tx.json(payload)}) as outcome`,
    );
    return `succeeded:${row?.outcome}`;
  }
  if (v === null || v.status === 'failed' || p.abandoned) {
    const reason = v === null ? 'no such charge at the provider' : `charge ${v.status}`;
    await asService((tx) =>
      p.type === 'wallet_topup'
        ? tx`select private.topup_fail(${p.id}, ${reason})`
        : tx`select private.escrow_charge_fail(${p.id}, ${reason})`,
    );
    return 'failed';
  }
  return `still:${v.status}`;
}

async function settleTransfer(p: Pending): Promise<string> {
  const v = await payments().verifyTransfer(p.id);
  if (v?.status === 'success') {
    await asService(async (tx) => {
      await tx`select private.payout_succeed(${p.id}, ${v.transferCode})`;
      await tx`select private.escrow_payout_settled(${p.id}, true)`;
    });
    return 'succeeded';
  }
  if (v === null || v.status === 'failed' || v.status === 'reversed') {
    const reason = v === null ? 'no such transfer at the provider' : v.status;
    await asService(async (tx) => {
      const [row] = await tx<{ outcome: string }[]>`select private.payout_fail(${p.id}, ${reason}, ${v?.transferCode ?? null}) as outcome`;
      if (row?.outcome === 'failed') await tx`select private.escrow_payout_settled(${p.id}, false)`;
    });
    return 'failed';
  }
  return `still:${v.status}`;
}

export async function reconcilePending(now: string) {
  const provider = payments();
  const charges = await asService((tx) => tx<Pending[]>`
    select id, type, created_at < ${now}::timestamptz - make_interval(hours => ${ABANDON_CHARGE_AFTER_HOURS}) as abandoned
      from public.transactions
     where status = 'pending' and type in ('wallet_topup', 'escrow_funding') and provider = ${provider.name}
       and created_at < ${now}::timestamptz - make_interval(mins => ${RECONCILE_AFTER_MINUTES})
     order by created_at limit 50`);
  const transfers = await asService((tx) => tx<Pending[]>`
    select id, type, false as abandoned
      from public.transactions
     where status = 'pending' and type in ('withdrawal', 'escrow_payout')
       and (type = 'withdrawal' or metadata ? 'transfer_attempted_at')
       and created_at < ${now}::timestamptz - make_interval(mins => ${RECONCILE_AFTER_MINUTES})
     order by created_at limit 50`);
  const outcomes: Record<string, number> = {};
  for (const [list, settle] of [[charges, settleCharge], [transfers, settleTransfer]] as const) {
    for (const p of list) {
      let outcome: string;
      try {
        outcome = await settle(p);
      } catch (err) {
        if (!(err instanceof ProviderError)) throw err;
        outcome = 'provider_unavailable'; // asked again at the next run
        log.warn('reconcile.unavailable', { transaction_id: p.id, error: errorMessage(err) });
      }
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      if (!outcome.startsWith('still') && outcome !== 'provider_unavailable') log.info('reconcile.settled', { transaction_id: p.id, type: p.type, outcome });
    }
  }
  return { checked: charges.length + transfers.length, outcomes };
}
