// The rules the money must keep, as queries over any postgres.js client and without a test
// framework, so the suites assert them (db.ts expectLedgerInvariants, the storm of
// integration/ledger-invariants.test.ts) and the load runs report them (scripts/lib/stories.ts)
// from one definition. Each returns what breaks a rule; nothing means the rule holds.
import type postgres from 'postgres';

export interface LedgerInvariants {
  /** the sum of every account's balance, in kobo: '0' */
  total: string;
  /** accounts whose balance is not the sum of their entries */
  drift: number;
  /** transfers whose entries do not sum to zero */
  unbalanced: number;
  /** user wallets, escrow holds and merchant wallets below zero */
  negative: number;
}

/** What ledgerInvariants answers when every invariant holds. */
export const LEDGER_HOLDS: LedgerInvariants = { total: '0', drift: 0, unbalanced: 0, negative: 0 };

/**
 * The ledger's invariants over the whole database: balances sum to zero, every balance equals its
 * entries, every transfer balances, no wallet or hold is negative.
 */
export async function ledgerInvariants(sql: postgres.Sql): Promise<LedgerInvariants> {
  const [row] = await sql<LedgerInvariants[]>`
    select (select coalesce(sum(balance), 0) from private.ledger_accounts)::text as total,
           (select count(*)::int from private.ledger_accounts a
             where a.balance <> coalesce((select sum(e.amount) from private.ledger_entries e where e.account_id = a.id), 0)) as drift,
           (select count(*)::int from (select transfer_id from private.ledger_entries group by transfer_id having sum(amount) <> 0) t) as unbalanced,
           (select count(*)::int from private.ledger_accounts where kind in ('user_wallet', 'escrow_hold', 'merchant_wallet') and balance < 0) as negative`;
  return row as LedgerInvariants;
}

export interface Disagreement {
  /** the escrow, user or transaction concerned */
  id: string;
  problem: string;
  /** the facts the rule was checked against */
  facts: unknown;
}

/**
 * Users' transactions read as the ledger should see them: each wallet is what came in (deposits,
 * escrow refunds to the wallet and releases) less what went out (withdrawals and escrow payouts not failed,
 * escrow funding from the wallet); and each movement has exactly the ledger transfers its status
 * implies (a withdrawal or payout one, two once failed and given back; a refund through the
 * provider one, none for a late charge's; anything else one once succeeded, none before).
 */
export async function transactionsDisagreeing(sql: postgres.Sql, userIds: string[]): Promise<Disagreement[]> {
  const wallets = await sql<{ user_id: string; wallet: string; from_transactions: string }[]>`
    select u.id as user_id,
           private.wallet_balance(u.id)::text as wallet,
           coalesce((select sum(case
             when category = 'deposit' and status = 'succeeded' then amount
             when type in ('withdrawal', 'escrow_payout') and status in ('pending', 'succeeded') then -amount
             when type = 'escrow_funding' and provider = 'wallet' and status = 'succeeded' then -amount
             when type = 'escrow_release' and status = 'succeeded' then amount
             when type = 'escrow_refund' and provider = 'wallet' and status = 'succeeded' then amount
             else 0 end) from public.transactions t where t.user_id = u.id and t.merchant_id is null), 0)::text as from_transactions
      from unnest(${userIds}::uuid[]) as u(id)`;
  const movements = await sql<
    { id: string; user_id: string; type: string; status: string; transfers: number; refund: string | null }[]
  >`
    select t.id, t.user_id, t.type, t.status::text,
           case when t.metadata ? 'charge_reference'
                then case when t.metadata ? 'late_payment' then 'late' else 'hold' end end as refund,
           (select count(*)::int from private.ledger_transfers lt where lt.transaction_id = t.id) as transfers
      from public.transactions t where t.user_id = any(${userIds}::uuid[])`;
  const out: Disagreement[] = [];
  for (const w of wallets) {
    if (w.wallet !== w.from_transactions) {
      out.push({ id: w.user_id, problem: 'wallet differs from the sum of its transactions', facts: w });
    }
  }
  for (const t of movements) {
    // a refund through the provider: the hold's is posted once when made (to provider_clearing,
    // whatever its outcome); a late charge's is never posted (it never entered a hold)
    const expected = t.refund === 'late'
      ? 0
      : t.refund === 'hold'
      ? 1
      : t.type === 'withdrawal' || t.type === 'escrow_payout'
      ? (t.status === 'failed' ? 2 : 1)
      : t.status === 'succeeded'
      ? 1
      : 0;
    if (t.transfers !== expected) {
      out.push({
        id: t.id,
        problem: `${t.type} ${t.status} has ${t.transfers} ledger transfers, not ${expected}`,
        facts: t,
      });
    }
  }
  return out;
}

/**
 * Escrows that disagree with their disputes and their hold: the hold is the total charge while the
 * money is held (funded and active, funded, in inspection or disputed) and 0 otherwise; a settled
 * dispute closed the escrow the way its outcome says; at most one dispute is open, and only while
 * the escrow is disputed.
 */
export async function escrowsDisagreeing(sql: postgres.Sql, ids: string[]): Promise<Disagreement[]> {
  const rows = await sql<
    {
      id: string;
      status: string;
      funded: boolean;
      total_charge: string;
      amount: string;
      released_amount: string;
      hold: string;
      open_disputes: number;
      resolved: { outcome: string; payee_amount: string | null }[];
    }[]
  >`
    select e.id, e.status::text, e.funded_at is not null as funded, e.total_charge::text, e.amount::text, e.released_amount::text,
           private.hold_balance(e.id)::text as hold,
           (select count(*)::int from public.disputes d where d.escrow_id = e.id and d.status in ('negotiation', 'escalated')) as open_disputes,
           coalesce((select jsonb_agg(jsonb_build_object('outcome', d.outcome, 'payee_amount', d.payee_amount::text))
                       from public.disputes d where d.escrow_id = e.id and d.status = 'resolved'), '[]'::jsonb) as resolved
      from public.escrows e where e.id = any(${ids}::uuid[])`;
  const out: Disagreement[] = [];
  for (const e of rows) {
    const problems: string[] = [];
    const holding = e.funded && ['active', 'funded', 'inspection', 'disputed'].includes(e.status);
    if (Number(e.hold) !== (holding ? Number(e.total_charge) : 0)) {
      problems.push(`hold ${e.hold} while ${e.status}${e.funded ? ', funded' : ''}`);
    }
    if (e.open_disputes !== (e.status === 'disputed' ? 1 : 0)) {
      problems.push(`${e.open_disputes} open disputes while ${e.status}`);
    }
    if (e.resolved.length > 1) problems.push(`${e.resolved.length} resolved disputes`);
    const r = e.resolved[0];
    if (r) {
      const status = r.outcome === 'refund' ? 'refunded' : 'released';
      if (e.status !== status) problems.push(`a resolved ${r.outcome} left it ${e.status}`);
      const released = r.outcome === 'release' ? Number(e.amount) : r.outcome === 'split' ? Number(r.payee_amount) : 0;
      if (Number(e.released_amount) !== released) {
        problems.push(`released_amount ${e.released_amount} after a resolved ${r.outcome}`);
      }
    }
    if (problems.length > 0) out.push({ id: e.id, problem: problems.join('; '), facts: e });
  }
  return out;
}
