// deno-lint-ignore-file no-explicit-any -- answers of the real server are read as untyped JSON here
// Disputes through the real HTTP server: raising, negotiating, settling with the exact money of
// DESIGN §8.3 (read back from the ledger), withdrawing, and who may do what. The deadlines (the
// job) are in disputes.clock.test.ts.
import { describe, expect, it } from 'vitest';
import { expectError as refused, expectOk as ok, get, post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { balances, type Deal, escrowOp, escrowStatus, fundedDeal } from '../support/escrows.ts';
import { signUp } from '../support/users.ts';

const raise = (deal: Deal, by: 'payer' | 'payee', extra: Record<string, unknown> = {}) =>
  post('dispute-raise', {
    escrow_id: deal.escrowId,
    reason_code: 'item_not_as_described',
    reason: 'The phone has a cracked screen',
    ...extra,
  }, { token: deal[by].accessToken });
const propose = (deal: Deal, by: 'payer' | 'payee', body: Record<string, unknown>) =>
  post('dispute-propose', { escrow_id: deal.escrowId, ...body }, { token: deal[by].accessToken });
const respond = (deal: Deal, by: 'payer' | 'payee', proposalId: string, accept: boolean) =>
  post('dispute-respond', { escrow_id: deal.escrowId, proposal_id: proposalId, accept }, {
    token: deal[by].accessToken,
  });
const disputeOf = (deal: Deal, by: 'payer' | 'payee' = 'payer') =>
  get('dispute-get', { token: deal[by].accessToken, query: { escrow_id: deal.escrowId } });

/** half-up of total * part / whole, in kobo (the DESIGN's "fee on X"). */
const halfUp = (total: number, part: number, whole: number) => Math.floor((2 * total * part + whole) / (2 * whole));

async function stored(escrowId: string) {
  const [e] = await testDb()<any[]>`
    select amount, payer_fee, vat, seller_fee, released_amount, status from public.escrows where id = ${escrowId}`;
  return {
    amount: Number(e.amount),
    payerFee: Number(e.payer_fee),
    vat: Number(e.vat),
    sellerFee: Number(e.seller_fee),
    released: Number(e.released_amount),
    status: e.status as string,
  };
}

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
      await post('dispute-raise', {
        escrow_id: deal.escrowId,
        reason_code: 'other',
        reason: 'I am not even a party',
      }, { token: stranger.accessToken }),
      404,
    );
    refused(await get('dispute-get', { token: stranger.accessToken, query: { escrow_id: deal.escrowId } }), 404);
    expect(refused(await raise(deal, 'payer', { reason: 'short' }), 400)).toEqual(['reason']);
    expect(refused(await raise(deal, 'payer', { reason_code: 'bored' }), 400)).toEqual(['reason_code']);
    refused(await disputeOf(deal), 404);
  });
});

describe('settlement money', () => {
  it('split: the payee gets P less the seller fee on P; the payer R - P with fee and VAT on it; the hold ends at 0', async () => {
    const deal = await fundedDeal({ amount: 12_345.67 });
    const before = await balances(deal);
    const e = await stored(deal.escrowId);
    ok(await raise(deal, 'payee'), 201);
    const d = ok(await propose(deal, 'payee', { outcome: 'split', payee_amount: 7_000.01 }), 201);
    expect(d.proposals).toHaveLength(1);
    expect(d.proposals[0]).toMatchObject({ outcome: 'split', payee_amount: 7_000.01, status: 'open' });
    refused(await respond(deal, 'payee', d.proposals[0].id, true), 403);
    const settled = ok(await respond(deal, 'payer', d.proposals[0].id, true));
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
    ok(await respond(refundDeal, 'payee', p.id, true));
    expect(await balances(refundDeal)).toMatchObject({ hold: 0, payer: payerBefore + held });
    expect(await escrowStatus(refundDeal)).toBe('refunded');

    const releaseDeal = await fundedDeal({ amount: 9_999.99 });
    const e = await stored(releaseDeal.escrowId);
    const payeeBefore = (await balances(releaseDeal)).payee;
    ok(await raise(releaseDeal, 'payer'), 201);
    const q = ok(await propose(releaseDeal, 'payee', { outcome: 'release' }), 201).proposals[0];
    ok(await respond(releaseDeal, 'payer', q.id, true));
    expect(await balances(releaseDeal)).toMatchObject({ hold: 0, payee: payeeBefore + e.amount - e.sellerFee });
    expect(await escrowStatus(releaseDeal)).toBe('released');
    await expectLedgerInvariants();
  });

  it('a split outside 0.01 .. R - 0.01 is 400 naming payee_amount; a proposal without it is 400', async () => {
    const deal = await fundedDeal({ amount: 1_000 });
    ok(await raise(deal, 'payer'), 201);
    expect(refused(await propose(deal, 'payer', { outcome: 'split', payee_amount: 1_000 }), 400)).toEqual([
      'payee_amount',
    ]);
    expect(refused(await propose(deal, 'payer', { outcome: 'split' }), 400)).toEqual(['payee_amount']);
    expect(refused(await propose(deal, 'payer', { outcome: 'refund', payee_amount: 5 }), 400)).toEqual([
      'payee_amount',
    ]);
    ok(await propose(deal, 'payer', { outcome: 'split', payee_amount: 999.99 }), 201);
  });
});

describe('dispute-withdraw', () => {
  it('by the raiser only: the escrow returns to funded, proposals close', async () => {
    const deal = await fundedDeal({ amount: 3_000 });
    ok(await raise(deal, 'payer'), 201);
    const p = ok(await propose(deal, 'payee', { outcome: 'release' }), 201).proposals[0];
    refused(await post('dispute-withdraw', { escrow_id: deal.escrowId }, { token: deal.payee.accessToken }), 403);
    const d = ok(await post('dispute-withdraw', { escrow_id: deal.escrowId }, { token: deal.payer.accessToken }));
    expect(d).toMatchObject({ status: 'withdrawn', proposals: [] });
    expect(await escrowStatus(deal)).toBe('funded');
    refused(await respond(deal, 'payer', p.id, true), 409);
    // a new dispute can be raised; dispute-get answers the open one
    const again = ok(await raise(deal, 'payee'), 201);
    expect(ok(await disputeOf(deal)).id).toBe(again.id);
  });
});
