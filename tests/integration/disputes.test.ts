// Disputes through the real HTTP server: raising, negotiating, settling with the exact money of
// docs/disputes.md#money (read back from the ledger), withdrawing, and who may do what. The deadlines (the
// job) are in disputes.clock.test.ts.
import { describe, expect, it } from 'vitest';
import { expectError as refused, expectOk as ok, get, post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import {
  disputeFeed,
  disputeOf,
  fundedAny,
  halfUp,
  propose,
  raise,
  respond,
  settledSms,
  shareOf,
  stored,
  withdraw,
} from '../support/disputes.ts';
import { balances, holdTransfers, systemShares } from '../support/ledger.ts';
import { type Deal, escrowOp, escrowStatus, fundedDeal, milestoneOp as opM } from '../support/escrows.ts';
import { signUp } from '../support/users.ts';
import disputeGet from '../../supabase/functions/dispute-get/handler.ts';
import disputeRaise from '../../supabase/functions/dispute-raise/handler.ts';
import disputeRespond from '../../supabase/functions/dispute-respond/handler.ts';
import disputeWithdraw from '../../supabase/functions/dispute-withdraw/handler.ts';
import messageFeed from '../../supabase/functions/message-feed/handler.ts';
import milestoneCreate from '../../supabase/functions/milestone-create/handler.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';

describe('dispute-raise', () => {
  it('a party of a funded escrow raises it: 201, the escrow is disputed and nothing can be released', async () => {
    const deal = await fundedDeal({ amount: 20_000 });
    const d = ok(await raise(deal, 'payer'), 201);
    expect(d).toMatchObject({
      escrow_id: deal.escrowId,
      raised_by: deal.payer.id,
      reason_code: 'item_not_as_described',
      status: 'negotiation',
      resolved_by: null,
      proposals: [],
    });
    expect(Date.parse(d.negotiation_deadline) - Date.parse(d.created_at)).toBe(72 * 3600_000);
    expect(d.auto_release_at).toBe(d.negotiation_deadline);
    expect(await escrowStatus(deal)).toBe('disputed');
    refused(await escrowOp('escrow-release', deal.payer, deal.escrowId), 409);
    refused(await escrowOp('escrow-refund', deal.payee, deal.escrowId), 409);
    refused(await raise(deal, 'payee'), 409);
    expect(ok(await disputeOf(deal, 'payee')).id).toBe(d.id);
  });

  it('refuses a stranger (404), a draft (409) and bad input (400 naming the field)', async () => {
    const deal = await fundedDeal({ amount: 5_000 });
    const stranger = await signUp();
    refused(
      await post(disputeRaise, {
        escrow_id: deal.escrowId,
        reason_code: 'other',
        reason: 'I am not even a party',
      }, { token: stranger.accessToken }),
      404,
    );
    refused(await get(disputeGet, { token: stranger.accessToken, query: { escrow_id: deal.escrowId } }), 404);
    expect(refused(await raise(deal, 'payer', { reason: 'short' }), 400)).toEqual(['reason']);
    // @ts-expect-error a reason code the schema refuses, on purpose
    expect(refused(await raise(deal, 'payer', { reason_code: 'bored' }), 400)).toEqual(['reason_code']);
    refused(await disputeOf(deal), 404);
  });

  describe('refusals that keep the money moving', () => {
    it('a party who withdrew a dispute cannot raise another on that escrow (the other party still can)', async () => {
      const deal = await fundedDeal({ amount: 2_500 });
      expect((await raise(deal, 'payer')).status).toBe(201);
      expect((await withdraw(deal, 'payer')).status).toBe(200);
      const again = await raise(deal, 'payer');
      refused(again, 409);
      expect(again.body.error).toMatch(/withdrew a dispute/);
      expect((await raise(deal, 'payee')).status).toBe(201);
    });

    it('not once the inspection period has ended, even before the job released it', async () => {
      const deal = await fundedDeal({ amount: 2_500 });
      ok(await escrowOp('escrow-deliver', deal.payee, deal.escrowId));
      expect(await escrowStatus(deal)).toBe('inspection');
      await testDb()`update public.escrows set inspection_ends_at = now() - interval '1 minute' where id = ${deal.escrowId}`;
      const r = await raise(deal, 'payer');
      refused(r, 409);
      expect(r.body.error).toMatch(/inspection period has ended/);
      expect(await escrowStatus(deal)).toBe('inspection');
    });
  });
});

describe('dispute-respond', () => {
  describe('settlement money', () => {
    it('split: the payee gets P less the seller fee on P; the payer R - P with fee and VAT on it; the hold ends at 0', async () => {
      const deal = await fundedDeal({ amount: 12_345.67 });
      const before = await balances(deal);
      const e = await stored(deal.escrowId);
      ok(await raise(deal, 'payee'), 201);
      // a proposal replaced by a newer one of the same party can no longer be answered
      const first = ok(await propose(deal, 'payee', { outcome: 'release' }), 201).proposals[0]!;
      const d = ok(await propose(deal, 'payee', { outcome: 'split', payee_amount: 7_000.01 }), 201);
      const stale = await respond(deal, 'payer', first.id, true);
      expect(refused(stale, 409)).toEqual([]);
      expect(stale.body.code).toBe('proposal_not_open');
      expect(d.proposals).toHaveLength(1);
      expect(d.proposals[0]).toMatchObject({ outcome: 'split', payee_amount: 7_000.01, status: 'open' });
      refused(await respond(deal, 'payee', d.proposals[0]!.id, true), 403);
      // a stranger who learned the proposal's id learns nothing more: the escrow is not found
      const stranger = await signUp();
      const byStranger = await post(disputeRespond, {
        escrow_id: deal.escrowId,
        proposal_id: d.proposals[0]!.id,
        accept: true,
      }, {
        token: stranger.accessToken,
      });
      expect(refused(byStranger, 404)).toEqual([]);
      expect(byStranger.body.code).toBe('escrow_not_found');
      const settled = ok(await respond(deal, 'payer', d.proposals[0]!.id, true));
      expect(settled).toMatchObject({ status: 'resolved', resolved_by: null, proposals: [] });
      const after = await balances(deal);
      const P = 700_001;
      const R = e.amount;
      expect(after.payee - before.payee).toBe(P - halfUp(e.sellerFee, P, e.amount));
      expect(after.payer - before.payer).toBe(
        R - P + halfUp(e.payerFee, R - P, e.amount) + halfUp(e.vat, R - P, e.amount),
      );
      expect(after.hold).toBe(0);
      expect(await stored(deal.escrowId)).toMatchObject({ status: 'released', released: P });
      await expectLedgerInvariants();
    });

    it('refund returns everything held to the payer; release pays the payee as an escrow release does', async () => {
      const refundDeal = await fundedDeal({ amount: 9_999.99 });
      const held = (await balances(refundDeal)).hold;
      const payerBefore = (await balances(refundDeal)).payer;
      ok(await raise(refundDeal, 'payer'), 201);
      const p = ok(await propose(refundDeal, 'payer', { outcome: 'refund' }), 201).proposals[0];
      ok(await respond(refundDeal, 'payee', p!.id, true));
      expect(await balances(refundDeal)).toMatchObject({ hold: 0, payer: payerBefore + held });
      expect(await escrowStatus(refundDeal)).toBe('refunded');

      const releaseDeal = await fundedDeal({ amount: 9_999.99 });
      const e = await stored(releaseDeal.escrowId);
      const payeeBefore = (await balances(releaseDeal)).payee;
      ok(await raise(releaseDeal, 'payer'), 201);
      const q = ok(await propose(releaseDeal, 'payee', { outcome: 'release' }), 201).proposals[0];
      ok(await respond(releaseDeal, 'payer', q!.id, true));
      expect(await balances(releaseDeal)).toMatchObject({ hold: 0, payee: payeeBefore + e.amount - e.sellerFee });
      expect(await escrowStatus(releaseDeal)).toBe('released');
      await expectLedgerInvariants();
    });
  });
});

describe('dispute-propose', () => {
  describe('settlement money', () => {
    it('a split not below what is still held is 409 split_exceeds_held naming payee_amount; a proposal without it is 400', async () => {
      const deal = await fundedDeal({ amount: 1_000 });
      ok(await raise(deal, 'payer'), 201);
      const above = await propose(deal, 'payer', { outcome: 'split', payee_amount: 1_000 });
      expect(refused(above, 409)).toEqual(['payee_amount']);
      expect(above.body).toMatchObject({ code: 'split_exceeds_held' });
      expect(refused(await propose(deal, 'payer', { outcome: 'split' }), 400)).toEqual(['payee_amount']);
      expect(refused(await propose(deal, 'payer', { outcome: 'refund', payee_amount: 5 }), 400)).toEqual([
        'payee_amount',
      ]);
      ok(await propose(deal, 'payer', { outcome: 'split', payee_amount: 999.99 }), 201);
    });
  });

  describe('limits', () => {
    it('20 proposals per party and dispute (each notifies the other party); the 21st is 409', async () => {
      const deal = await fundedDeal({ amount: 2_000 });
      expect((await raise(deal, 'payer')).status).toBe(201);
      for (let i = 1; i <= 20; i++) {
        expect((await propose(deal, 'payee', { outcome: 'split', payee_amount: i })).status).toBe(201);
      }
      const r = await propose(deal, 'payee', { outcome: 'release' });
      expect(r.status).toBe(409);
      expect(r.body.error).toMatch(/20 proposals/);
      // the other party is not limited by it; only the latest of the payee's is open
      expect((await propose(deal, 'payer', { outcome: 'refund' })).status).toBe(201);
      const d = (await disputeOf(deal)).body.data;
      expect(d.proposals.map((p) => [p.outcome, p.payee_amount])).toEqual([['split', 20], ['refund', null]]);
    });
  });
});

describe('dispute-withdraw', () => {
  it('by the raiser only: the escrow returns to funded, proposals close', async () => {
    const deal = await fundedDeal({ amount: 3_000 });
    ok(await raise(deal, 'payer'), 201);
    const p = ok(await propose(deal, 'payee', { outcome: 'release' }), 201).proposals[0];
    refused(await post(disputeWithdraw, { escrow_id: deal.escrowId }, { token: deal.payee.accessToken }), 403);
    const d = ok(await post(disputeWithdraw, { escrow_id: deal.escrowId }, { token: deal.payer.accessToken }));
    expect(d).toMatchObject({ status: 'withdrawn', proposals: [] });
    expect(await escrowStatus(deal)).toBe('funded');
    refused(await respond(deal, 'payer', p!.id, true), 409);
    // a new dispute can be raised; dispute-get answers the open one
    const again = ok(await raise(deal, 'payee'), 201);
    expect(ok(await disputeOf(deal)).id).toBe(again.id);
  });

  it('by anyone but a party is 404, as for an escrow that does not exist, and the dispute stays open', async () => {
    const deal = await fundedDeal({ amount: 2_000 });
    ok(await raise(deal, 'payer'), 201);
    const stranger = await signUp();
    const byStranger = await post(disputeWithdraw, { escrow_id: deal.escrowId }, { token: stranger.accessToken });
    refused(byStranger, 404);
    const noSuch = await post(disputeWithdraw, { escrow_id: crypto.randomUUID() }, {
      token: deal.payer.accessToken,
    });
    refused(noSuch, 404);
    expect(noSuch.body.error).toBe(byStranger.body.error);
    expect(await escrowStatus(deal)).toBe('disputed');
  });
});

// ---- while disputed ----------------------------------------------------------------------------

/** A milestone proposed by the freelancer (payee), approved by the client: accepted; completed when asked. */
async function milestone(deal: Deal, naira: number, complete: boolean) {
  const m = ok(
    await post(milestoneCreate, { escrow_id: deal.escrowId, title: `Part ${naira}`, amount: naira }, {
      token: deal.payee.accessToken,
    }),
    201,
  );
  expect(ok(await opM('milestone-approve', deal.payer, m.id)).status).toBe('accepted');
  if (complete) expect(ok(await opM('milestone-complete', deal.payee, m.id)).status).toBe('completed');
  return m;
}

describe('while disputed', () => {
  it('escrow-deliver, -release, -refund and -cancel are refused (409); after a withdrawal they work again', async () => {
    const deal = await fundedDeal({ amount: 4_000 });
    ok(await raise(deal, 'payee'), 201);
    const held = await balances(deal);
    refused(await escrowOp('escrow-deliver', deal.payee, deal.escrowId), 409);
    refused(await escrowOp('escrow-release', deal.payer, deal.escrowId), 409);
    refused(await escrowOp('escrow-refund', deal.payee, deal.escrowId), 409);
    refused(await escrowOp('escrow-cancel', deal.payer, deal.escrowId), 409);
    refused(await escrowOp('escrow-cancel', deal.payee, deal.escrowId), 409);
    expect(await balances(deal)).toEqual(held);
    expect(await escrowStatus(deal)).toBe('disputed');
    ok(await withdraw(deal, 'payee'));
    expect(ok(await escrowOp('escrow-deliver', deal.payee, deal.escrowId)).status).toBe('inspection');

    // raised during the inspection: no release or refund by a party either, and no second delivery
    ok(await raise(deal, 'payer'), 201);
    refused(await escrowOp('escrow-release', deal.payer, deal.escrowId), 409);
    refused(await escrowOp('escrow-refund', deal.payee, deal.escrowId), 409);
    refused(await escrowOp('escrow-deliver', deal.payee, deal.escrowId), 409);
    expect(await balances(deal)).toEqual(held);
    ok(await withdraw(deal, 'payer'));
    expect(await escrowStatus(deal)).toBe('inspection');
    expect(ok(await escrowOp('escrow-release', deal.payer, deal.escrowId)).status).toBe('released');
  });

  it('milestone-complete and milestone-release are refused (409) and move nothing; after a withdrawal they work', async () => {
    const deal = await fundedDeal({ category: 'hiring', amount: 30_000, title: 'Website build' });
    const accepted = await milestone(deal, 5_000, false);
    const completed = await milestone(deal, 7_000, true);
    ok(await raise(deal, 'payer'), 201);
    const held = await balances(deal);
    refused(await opM('milestone-complete', deal.payee, accepted.id), 409);
    refused(await opM('milestone-release', deal.payer, completed.id), 409);
    expect(await balances(deal)).toEqual(held);
    expect((await stored(deal.escrowId)).released).toBe(0);
    const ms = await testDb()<{ id: string; status: string }[]>`
      select id, status from public.milestones where escrow_id = ${deal.escrowId} order by milestone_index`;
    expect(ms).toEqual([{ id: accepted.id, status: 'accepted' }, { id: completed.id, status: 'completed' }]);

    ok(await withdraw(deal, 'payer'));
    expect(ok(await opM('milestone-complete', deal.payee, accepted.id)).status).toBe('completed');
    expect(ok(await opM('milestone-release', deal.payer, completed.id)).status).toBe('released');
    expect((await stored(deal.escrowId)).released).toBe(700_000);
  });
});

// ---- money with milestones ------------------------------------------------------------------------

/** A funded hiring escrow with one milestone released before the dispute; the balances just after it. */
async function afterMilestone(amount: number, milestoneNaira: number) {
  const deal = await fundedAny(amount, { category: 'hiring', title: 'Shop website' });
  const m = await milestone(deal, milestoneNaira, true);
  expect(ok(await opM('milestone-release', deal.payer, m.id)).status).toBe('released');
  const e = await stored(deal.escrowId);
  expect(e).toMatchObject({ status: 'funded', released: Math.round(milestoneNaira * 100) });
  return { deal, m, e, before: await balances(deal) };
}

/** The released milestone is as it was: released, by its own transfer, which is still the only one with its key. */
async function expectMilestoneKept(m: { id: string }) {
  const [row] = await testDb()<{ status: string; key: string }[]>`
    select ms.status, lt.idempotency_key as key from public.milestones ms
      join private.ledger_transfers lt on lt.id = ms.release_tx_id where ms.id = ${m.id}`;
  expect(row).toEqual({ status: 'released', key: `milestone-release:${m.id}` });
}

describe('settlement money after a released milestone', () => {
  // [escrow amount, milestone released first, the payee's share P of the rest] in naira
  const cases: [number, number, number][] = [
    [50_000.07, 12_345.67, 10_000.01],
    [0.03, 0.01, 0.01], // the whole amount is the fee: 2 kobo payer fee, 1 kobo seller fee
    [7, 1.01, 2.99], // below the minimum fee: the fee is the amount
    [10_000.03, 3_333.01, 6_667.01], // P = R - 0.01
    // the top of the range (fees at their maximum): the total charge is NGN 50,000,000, tier 4's
    // single limit; a third of it released first, and a third of the rest to the payee
    [49_989_250, 16_663_083.33, 11_108_722.22],
  ];

  it.each(cases)(
    'split of %s after a milestone of %s (P = %s): the split formulas of docs/disputes.md#money over R only, the hold ends at 0',
    async (amount, milestoneNaira, share) => {
      const { deal, m, e, before } = await afterMilestone(amount, milestoneNaira);
      const A = e.amount;
      const R = A - e.released;
      const P = Math.round(share * 100);
      const d = ok(await raise(deal, 'payee'), 201);
      const p = ok(await propose(deal, 'payer', { outcome: 'split', payee_amount: share }), 201).proposals[0];
      expect(ok(await respond(deal, 'payee', p!.id, true))).toMatchObject({ status: 'resolved', proposals: [] });

      const after = await balances(deal);
      const payeeGets = P - halfUp(e.sellerFee, P, A);
      const payerGets = R - P + halfUp(e.payerFee, R - P, A) + halfUp(e.vat, R - P, A);
      expect(after.payee - before.payee, 'payee').toBe(payeeGets);
      expect(after.payer - before.payer, 'payer').toBe(payerGets);
      expect(after.hold, 'hold').toBe(0);
      // the platform and VAT got the rest of what was held, not a kobo more or less
      const sys = await systemShares([`dispute-release:${d.id}`, `dispute-refund:${d.id}`]);
      expect(sys.fees + sys.vat).toBe(before.hold - payeeGets - payerGets);
      expect(sys.fees).toBeGreaterThanOrEqual(0);
      expect(sys.vat).toBeGreaterThanOrEqual(0);
      expect(await stored(deal.escrowId)).toMatchObject({ status: 'released', released: e.released + P });
      await expectMilestoneKept(m);
      expect((await holdTransfers(deal.escrowId)).map((t) => t.key).sort()).toEqual(
        [`dispute-refund:${d.id}`, `dispute-release:${d.id}`, `milestone-release:${m.id}`].sort(),
      );
      expect(await settledSms(deal.payee.phone)).toEqual([{ outcome: 'split', amount: payeeGets }]);
      expect(await settledSms(deal.payer.phone)).toEqual([{ outcome: 'split', amount: payerGets }]);
      await expectLedgerInvariants(`${amount}`);
    },
  );

  it.each(cases.map(([a, m]) => [a, m] as const))(
    'refund of %s after a milestone of %s returns exactly what is still held',
    async (amount, milestoneNaira) => {
      const { deal, m, before } = await afterMilestone(amount, milestoneNaira);
      const open = await milestone(deal, Math.min(0.01, amount - milestoneNaira), false);
      ok(await raise(deal, 'payer'), 201);
      const p = ok(await propose(deal, 'payer', { outcome: 'refund' }), 201).proposals[0];
      ok(await respond(deal, 'payee', p!.id, true));
      const after = await balances(deal);
      expect(after).toEqual({ payer: before.payer + before.hold, payee: before.payee, hold: 0 });
      expect((await stored(deal.escrowId)).status).toBe('refunded');
      await expectMilestoneKept(m);
      const [o] = await testDb()<{ status: string }[]>`select status from public.milestones where id = ${open.id}`;
      expect(o!.status).toBe('cancelled');
      expect(await settledSms(deal.payer.phone)).toEqual([{ outcome: 'refund', amount: before.hold }]);
      await expectLedgerInvariants(`${amount}`);
    },
  );

  it.each(cases.map(([a, m]) => [a, m] as const))(
    'release of %s after a milestone of %s pays the rest as an escrow release does',
    async (amount, milestoneNaira) => {
      const { deal, m, e, before } = await afterMilestone(amount, milestoneNaira);
      const R = e.amount - e.released;
      const d = ok(await raise(deal, 'payer'), 201);
      const p = ok(await propose(deal, 'payee', { outcome: 'release' }), 201).proposals[0];
      ok(await respond(deal, 'payer', p!.id, true));
      const after = await balances(deal);
      // the rest of the amount less the rest of the seller fee (cumulative shares: the total is exact)
      const payeeGets = R - shareOf(e.sellerFee, e.amount, e.released, e.amount);
      expect(after).toEqual({ payer: before.payer, payee: before.payee + payeeGets, hold: 0 });
      expect(after.payee).toBe(e.amount - e.sellerFee);
      expect(await stored(deal.escrowId)).toMatchObject({ status: 'released', released: e.amount });
      await expectMilestoneKept(m);
      const sys = await systemShares([`dispute-release:${d.id}`]);
      expect(sys.fees + sys.vat).toBe(before.hold - payeeGets);
      await expectLedgerInvariants(`${amount}`);
    },
  );
});

// ---- the feed ------------------------------------------------------------------------------------

describe('dispute events in the feed', () => {
  it('each event is a notification (entity dispute) in the conversation of whoever it is for', async () => {
    const deal = await fundedDeal({ amount: 8_000 });
    const first = ok(await raise(deal, 'payer'), 201);
    const split = ok(await propose(deal, 'payee', { outcome: 'split', payee_amount: 4_000 }), 201).proposals[0];
    ok(await respond(deal, 'payer', split!.id, false));
    ok(await withdraw(deal, 'payer'));
    expect(await disputeFeed(deal, deal.payer, first.id)).toEqual([
      'dispute_raised',
      'dispute_proposal',
      'dispute_withdrawn',
    ]);
    expect(await disputeFeed(deal, deal.payee, first.id)).toEqual([
      'dispute_raised',
      'dispute_proposal_rejected',
      'dispute_withdrawn',
    ]);

    const second = ok(await raise(deal, 'payee', { reason_code: 'payment_not_released' }), 201);
    const refund = ok(await propose(deal, 'payer', { outcome: 'refund' }), 201).proposals[0];
    ok(await respond(deal, 'payee', refund!.id, true));
    expect(await disputeFeed(deal, deal.payer, second.id)).toEqual(['dispute_raised', 'dispute_resolved']);
    expect(await disputeFeed(deal, deal.payee, second.id)).toEqual([
      'dispute_raised',
      'dispute_proposal',
      'dispute_resolved',
    ]);

    // the action each one offers
    const feed = ok(
      await get(messageFeed, { token: deal.payee.accessToken, query: { conversation_id: deal.conversationId } }),
    );
    const labels = Object.fromEntries(
      feed.filter((i) => i.entity_type === 'dispute').map((i) => [i.event_type, i.action_label]),
    );
    expect(labels).toEqual({
      dispute_raised: 'View dispute',
      dispute_proposal: 'Respond to proposal',
      dispute_proposal_rejected: 'View dispute',
      dispute_withdrawn: 'View escrow',
      dispute_resolved: 'View dispute',
    });
    // and the same notifications in notification-list
    const listed = ok(
      await get(notificationList, { token: deal.payer.accessToken, query: { escrow_id: deal.escrowId } }),
    );
    expect(listed.filter((n) => n.entity_type === 'dispute').map((n) => n.event_type).sort()).toEqual(
      ['dispute_proposal', 'dispute_raised', 'dispute_raised', 'dispute_resolved', 'dispute_withdrawn'],
    );
  });
});
