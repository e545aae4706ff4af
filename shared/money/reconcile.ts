// Reconciliation: money movements still pending long after they started, because a webhook was
// lost or a call to the provider went unanswered, are settled from what the provider says
// (Paystack's verify endpoints), through the same SQL functions the webhooks use. Those functions
// are idempotent on the transaction's state, so a webhook arriving afterwards changes nothing.
// Run by the job with its explicit "now".
//
// A charge is credited only when the provider reports a success of exactly the amount its
// transaction expects, in naira. A success of anything else is held for review once (flagged,
// left pending, marked metadata.review with provider_status 'success') and is then out of this
// loop: the provider's answer is final and disagrees, so an operator decides, and it is never
// failed as abandoned while the provider says it succeeded.
import { asService } from '../core/db.ts';
import { errorMessage, log } from '../core/log.ts';
import { payments, ProviderError } from './payments/index.ts';
import { chargeMismatch } from './payments/provider.ts';

/** How long a movement may stay pending before we ask the provider. */
const RECONCILE_AFTER_MINUTES = 30;
/** A charge the customer never completed is failed after this long. */
const ABANDON_CHARGE_AFTER_HOURS = 24;

interface Pending {
  id: string;
  type: string;
  abandoned: boolean;
  /**
   * a merchant escrow's checkout while the escrow is a draft: the buyer may still pay on its page
   * until the escrow expires (the job cancels it then), so only a success is applied
   */
  checkout: boolean;
  /** what a charge must bring, in kobo (a top-up: its amount; an escrow charge: total_charge) */
  expected?: string | null;
}

async function settleCharge(p: Pending): Promise<string> {
  const v = await payments().verifyCharge(p.id);
  if (v?.status === 'success') {
    const expected = Number(p.expected);
    const payload = {
      reconciled: true,
      status: v.status,
      amount: v.amountKobo,
      currency: v.currency,
      charge_id: v.chargeId,
    };
    const reason = chargeMismatch(v.amountKobo, v.currency, expected);
    if (reason) {
      const [row] = await asService((tx) =>
        tx<{ outcome: string }[]>`
        select private.charge_hold_for_review(${p.id}, ${reason}, ${
          Number.isSafeInteger(v.amountKobo) ? v.amountKobo : null
        }, 'success',
          ${tx.json({ ...payload, expected_amount: expected, action: 'held_for_review' })}) as outcome`
      );
      return `${row?.outcome}:${reason}`;
    }
    const [row] = await asService((tx) =>
      p.type === 'wallet_topup'
        ? tx<{ outcome: string }[]>`select private.topup_succeed(${p.id}, ${expected}, ${v.chargeId}, ${
          tx.json(payload)
        }) as outcome`
        : tx<{ outcome: string }[]>`select private.escrow_charge_succeed(${p.id}, ${expected}, ${v.chargeId}, ${
          tx.json(payload)
        }) as outcome`
    );
    return `succeeded:${row?.outcome}`;
  }
  if (p.checkout) return `still:${v?.status ?? 'unknown'}`;
  if (v === null || v.status === 'failed' || p.abandoned) {
    const reason = v === null ? 'no such charge at the provider' : `charge ${v.status}`;
    await asService((tx) =>
      p.type === 'wallet_topup'
        ? tx`select private.topup_fail(${p.id}, ${reason})`
        : tx`select private.escrow_charge_fail(${p.id}, ${reason})`
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
      const [row] = await tx<{ outcome: string }[]>`select private.payout_fail(${p.id}, ${reason}, ${
        v?.transferCode ?? null
      }) as outcome`;
      if (row?.outcome === 'failed') await tx`select private.escrow_payout_settled(${p.id}, false)`;
    });
    return 'failed';
  }
  return `still:${v.status}`;
}

export async function reconcilePending(now: string) {
  const provider = payments();
  // held for review after the provider reported a success of another amount: an operator's
  const charges = await asService((tx) =>
    tx<Pending[]>`
    select t.id, t.type, t.created_at < ${now}::timestamptz - make_interval(hours => ${ABANDON_CHARGE_AFTER_HOURS}) as abandoned,
           (case when t.type = 'wallet_topup' then t.amount else e.total_charge end)::text as expected,
           coalesce(e.merchant_id is not null and e.status = 'draft', false) as checkout
      from public.transactions t left join public.escrows e on e.id = t.escrow_id
      left join private.reconcile_checks c on c.transaction_id = t.id
     where t.status = 'pending' and t.type in ('wallet_topup', 'escrow_funding') and t.provider = ${provider.name}
       and t.created_at < ${now}::timestamptz - make_interval(mins => ${RECONCILE_AFTER_MINUTES})
       and t.metadata -> 'review' ->> 'provider_status' is distinct from 'success'
     order by c.checked_at nulls first, t.created_at limit 50`
  );
  const transfers = await asService((tx) =>
    tx<Pending[]>`
    select t.id, t.type, false as abandoned, false as checkout
      from public.transactions t left join private.reconcile_checks c on c.transaction_id = t.id
     where t.status = 'pending' and t.type in ('withdrawal', 'escrow_payout')
       and (t.type = 'withdrawal' or t.metadata ? 'transfer_attempted_at')
       and t.created_at < ${now}::timestamptz - make_interval(mins => ${RECONCILE_AFTER_MINUTES})
     order by c.checked_at nulls first, t.created_at limit 50`
  );
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
      if (!outcome.startsWith('still') && outcome !== 'provider_unavailable') {
        log.info('reconcile.settled', { transaction_id: p.id, type: p.type, outcome });
      }
    }
  }
  // the ones still pending wait behind those not asked about yet (or asked longer ago)
  const asked = [...charges, ...transfers].map((p) => p.id);
  if (asked.length > 0) {
    await asService((tx) =>
      tx`insert into private.reconcile_checks (transaction_id, checked_at)
         select t.id, ${now}::timestamptz from public.transactions t
          where t.id = any(${asked}::uuid[]) and t.status = 'pending'
         on conflict (transaction_id) do update set checked_at = excluded.checked_at`
    );
  }
  return { checked: charges.length + transfers.length, outcomes };
}
