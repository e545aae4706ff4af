// A dispute settles exactly once, whatever races it: 20 parallel tries on one dispute (several
// acceptances of the same proposal, acceptances of the two parties' different open proposals, and
// withdrawals by the raiser) through the real HTTP server leave one outcome, a settlement or a
// withdrawal, never both; every loser gets 409. The job at the deadline racing the parties is in
// disputes.clock.test.ts.
import { describe, expect, it } from 'vitest';
import { type ApiResult, expectError as refused, expectOk as ok } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { disputeRow, propose, raise, respond, settledSms, type Side, stored, withdraw } from '../support/disputes.ts';
import { balances, holdTransfers } from '../support/ledger.ts';
import { type Deal, escrowStatus, fundedDeal } from '../support/escrows.ts';

const TRIES = 20;
const ROUNDS = 6;

/** The hold-debiting transfers of a settlement of dispute d of the escrow, by outcome. */
const settlementKeys = (deal: Deal, d: string, outcome: string) =>
  outcome === 'split'
    ? [`dispute-refund:${d}`, `dispute-release:${d}`]
    : outcome === 'refund'
    ? [`escrow-refund:${deal.escrowId}`]
    : [`dispute-release:${d}`];

/** How many wallet credits each party got from this escrow (transactions in to their wallet). */
async function credits(deal: Deal) {
  const rows = await testDb()<{ user_id: string; n: number }[]>`
    select user_id, count(*)::int as n from public.transactions
     where escrow_id = ${deal.escrowId} and type in ('escrow_release', 'escrow_refund') group by user_id`;
  const of = (id: string) => rows.find((r) => r.user_id === id)?.n ?? 0;
  return { payer: of(deal.payer.id), payee: of(deal.payee.id) };
}

/** Fisher-Yates with a seeded LCG: the order of the tries differs per round but is repeatable. */
function shuffled<T>(xs: T[], seed: number): T[] {
  const out = [...xs];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const observed: Record<string, number> = {};

describe(`${TRIES} parallel tries on one dispute`, () => {
  it.each(Array.from({ length: ROUNDS }, (_, i) => i))('round %s: exactly one outcome, every loser 409', async (i) => {
    // the raiser alternates; the payer proposes a refund or a release, the payee a split
    const raiser: Side = i % 2 === 0 ? 'payer' : 'payee';
    const deal = await fundedDeal({ amount: 10_000 + i + 0.07 });
    const before = await balances(deal);
    const e = await stored(deal.escrowId);
    const d = ok(await raise(deal, raiser), 201);
    const byPayee = ok(await propose(deal, 'payee', { outcome: 'split', payee_amount: 5_000.03 }), 201).proposals
      .find((p) => p.proposed_by === deal.payee.id);
    const payerOutcome = i % 3 === 0 ? 'release' : 'refund';
    const byPayer = ok(await propose(deal, 'payer', { outcome: payerOutcome }), 201).proposals
      .find((p) => p.proposed_by === deal.payer.id);

    type Try = { kind: string; run: () => Promise<ApiResult> };
    const tries: Try[] = [
      ...Array.from(
        { length: 8 },
        () => ({ kind: 'accept-split', run: () => respond(deal, 'payer', byPayee!.id, true) }),
      ),
      ...Array.from({ length: 7 }, () => ({
        kind: `accept-${payerOutcome}`,
        run: () => respond(deal, 'payee', byPayer!.id, true),
      })),
      ...Array.from({ length: 5 }, () => ({ kind: 'withdraw', run: () => withdraw(deal, raiser) })),
    ];
    expect(tries).toHaveLength(TRIES);
    const order = shuffled(tries, 7 + i);
    const results = await Promise.all(order.map((t) => t.run()));

    const winners = results.map((r, k) => ({ r, kind: order[k]!.kind })).filter(({ r }) => r.status === 200);
    expect(winners, JSON.stringify(results.map((r) => [r.status, r.body?.error]))).toHaveLength(1);
    for (const r of results) if (r.status !== 200) refused(r, 409);
    const won = winners[0]!.kind;
    observed[won] = (observed[won] ?? 0) + 1;

    const row = await disputeRow(d.id);
    const transfers = (await holdTransfers(deal.escrowId)).map((t) => t.key).sort();
    const after = await balances(deal);
    if (won === 'withdraw') {
      expect(row).toMatchObject({ status: 'withdrawn', outcome: null, resolved_at: null });
      expect(await escrowStatus(deal)).toBe('funded');
      expect(transfers).toEqual([]);
      expect(after).toEqual(before);
      expect(await credits(deal)).toEqual({ payer: 0, payee: 0 });
      const open = await testDb()<{ n: number }[]>`
        select count(*)::int as n from public.dispute_proposals where dispute_id = ${d.id} and status = 'open'`;
      expect(open[0]!.n).toBe(0);
    } else {
      const outcome = won.slice('accept-'.length);
      expect(row).toMatchObject({ status: 'resolved', outcome, withdrawn_at: null });
      expect(transfers).toEqual(settlementKeys(deal, d.id, outcome).sort());
      expect(after.hold).toBe(0);
      expect(await credits(deal)).toEqual({
        payer: outcome === 'release' ? 0 : 1,
        payee: outcome === 'refund' ? 0 : 1,
      });
      expect(await escrowStatus(deal)).toBe(outcome === 'refund' ? 'refunded' : 'released');
      if (outcome === 'refund') expect(after.payer - before.payer).toBe(e.total);
      if (outcome === 'release') expect(after.payee - before.payee).toBe(e.amount - e.sellerFee);
      // one SMS each, for the one settlement
      expect(await settledSms(deal.payer.phone)).toHaveLength(1);
      expect(await settledSms(deal.payee.phone)).toHaveLength(1);
      const statuses = await testDb()<{ id: string; status: string }[]>`
        select id, status from public.dispute_proposals where dispute_id = ${d.id}`;
      const accepted = outcome === 'split' ? byPayee!.id : byPayer!.id;
      for (const p of statuses) expect(p.status).toBe(p.id === accepted ? 'accepted' : 'closed');
    }
    await expectLedgerInvariants(`round ${i}`);
    if (i === ROUNDS - 1) console.info(`disputes-race: ${ROUNDS} rounds x ${TRIES} tries, winners`, observed);
  });

  it('an answer to a proposal of a dispute that is over: 409, or 404 once another dispute is open', async () => {
    const deal = await fundedDeal({ amount: 2_500 });
    ok(await raise(deal, 'payer'), 201);
    const p = ok(await propose(deal, 'payee', { outcome: 'release' }), 201).proposals[0];
    ok(await withdraw(deal, 'payer'));
    refused(await respond(deal, 'payer', p!.id, true), 409);
    refused(await withdraw(deal, 'payer'), 409);
    refused(await propose(deal, 'payer', { outcome: 'refund' }), 409);
    ok(await raise(deal, 'payee'), 201);
    // the proposal belongs to the withdrawn dispute, not the open one
    refused(await respond(deal, 'payer', p!.id, true), 404);
    expect(await escrowStatus(deal)).toBe('disputed');
    await expectLedgerInvariants();
  });
});
