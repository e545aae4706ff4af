// The admin queue through the real HTTP server: only admins see admin-dispute-list and
// admin-dispute-resolve (404 to everyone else, whatever they send), the queue's order and cursor,
// a resolution's money read back from the ledger, the audit row written with it, and a resolution
// racing the parties' own settlement: exactly one outcome.
import { describe, expect, it } from 'vitest';
import { type BodyOf, call, type DataOf, expectError as refused, expectOk as ok, get, post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { halfUp, stored } from '../support/disputes.ts';
import { type Deal, fundedDeal } from '../support/escrows.ts';
import { balances } from '../support/ledger.ts';
import { signUp, type TestUser } from '../support/users.ts';
import { newOperator } from '../support/operators.ts';
import adminDisputeList from '../../supabase/functions/admin-dispute-list/handler.ts';
import adminDisputeResolve from '../../supabase/functions/admin-dispute-resolve/handler.ts';
import disputeGet from '../../supabase/functions/dispute-get/handler.ts';
import disputePropose from '../../supabase/functions/dispute-propose/handler.ts';
import disputeRaise from '../../supabase/functions/dispute-raise/handler.ts';
import disputeRespond from '../../supabase/functions/dispute-respond/handler.ts';

async function newAdmin(): Promise<TestUser> {
  return await newOperator(['disputes']);
}

async function disputed(amount: number): Promise<{ deal: Deal; disputeId: string }> {
  const deal = await fundedDeal({ amount });
  const d = ok(
    await post(disputeRaise, {
      escrow_id: deal.escrowId,
      reason_code: 'item_not_received',
      reason: 'Nothing arrived after two weeks',
    }, { token: deal.payer.accessToken }),
    201,
  );
  return { deal, disputeId: d.id };
}

const resolve = (admin: TestUser, body: BodyOf<typeof adminDisputeResolve>) =>
  post(adminDisputeResolve, body, { token: admin.accessToken });

describe('admin endpoints', () => {
  it('answer 404 to a party, a stranger and no token, whatever the request', async () => {
    const { deal, disputeId } = await disputed(2_000);
    const stranger = await signUp();
    const body = { dispute_id: disputeId, outcome: 'refund', resolution: 'I decide this one myself' } as const;
    for (const token of [deal.payer.accessToken, deal.payee.accessToken, stranger.accessToken, undefined]) {
      const list = await get(adminDisputeList, { token });
      refused(list, 404);
      expect(list.body.error).toBe('No function named admin-dispute-list');
      refused(await post(adminDisputeResolve, body, { token }), 404);
      // @ts-expect-error a body the schema refuses: hidden endpoints answer 404 before any validation
      refused(await post(adminDisputeResolve, { nonsense: true }, { token }), 404);
      refused(await call(adminDisputeResolve, { method: 'DELETE', token }), 404);
    }
    expect(ok(await get(disputeGet, { token: deal.payer.accessToken, query: { escrow_id: deal.escrowId } })))
      .toMatchObject({ status: 'negotiation' });
  });

  describe('admin-dispute-list', () => {
    it('the queue: open disputes oldest first, with parties, money and proposals; after pages exactly', async () => {
      const admin = await newAdmin();
      const mine = [await disputed(1_000), await disputed(2_000), await disputed(3_000)];
      ok(
        await post(disputePropose, { escrow_id: mine[1]!.deal.escrowId, outcome: 'split', payee_amount: 500 }, {
          token: mine[1]!.deal.payee.accessToken,
        }),
        201,
      );
      const all: DataOf<typeof adminDisputeList> = [];
      let after: string | undefined;
      for (;;) {
        const page = ok(await get(adminDisputeList, { token: admin.accessToken, query: { limit: 2, after } }));
        all.push(...page);
        if (page.length < 2) break;
        after = page[page.length - 1]!.created_at;
      }
      const ids = all.map((d) => d.id);
      expect(new Set(ids).size).toBe(ids.length);
      const positions = mine.map((m) => ids.indexOf(m.disputeId));
      expect(positions.every((p) => p >= 0)).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      const second = all[positions[1]!];
      expect(second).toMatchObject({
        status: 'negotiation',
        escrow_status: 'disputed',
        escrow_amount: 2_000,
        unreleased_amount: 2_000,
        outcome: null,
        payer: { id: mine[1]!.deal.payer.id, first_name: 'Ini' },
        payee: { id: mine[1]!.deal.payee.id, first_name: 'Cou' },
      });
      expect(second!.proposals).toMatchObject([{ outcome: 'split', payee_amount: 500, status: 'open' }]);
      expect(refused(await get(adminDisputeList, { token: admin.accessToken, query: { limit: 51 } }), 400))
        .toEqual(['limit']);
      // every list is in the audit
      const [row] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.admin_audit where admin_id = ${admin.id} and action = 'dispute.list'`;
      expect(row?.n).toBeGreaterThanOrEqual(2);
    });
  });

  describe('admin-dispute-resolve', () => {
    it('a split resolution: the formulas, the hold at 0, resolved_by and the audit; a second one is 409', async () => {
      const admin = await newAdmin();
      const { deal, disputeId } = await disputed(7_777.77);
      const before = await balances(deal);
      const { amount, payerFee, vat, sellerFee } = await stored(deal.escrowId);
      const P = 300_003;
      // a split must leave the payer something: the whole amount is refused, naming payee_amount
      const whole = await resolve(admin, {
        dispute_id: disputeId,
        outcome: 'split',
        payee_amount: 7_777.77,
        resolution: 'All of it to the seller',
      });
      expect(whole.status).toBe(409);
      expect(whole.body).toMatchObject({
        code: 'split_exceeds_held',
        details: [{
          field: 'payee_amount',
          message: 'payee_amount must be from 0.01 to NGN 7,777.76 naira (what is still held, less 0.01)',
          code: 'split_exceeds_held',
        }],
      });
      const r = ok(
        await resolve(admin, {
          dispute_id: disputeId,
          outcome: 'split',
          payee_amount: 3_000.03,
          resolution: 'Partly delivered: the seller keeps what was delivered',
        }),
      );
      if ('approval' in r) throw new Error('below FOUR_EYES_MIN_AMOUNT the resolution is performed at once');
      expect(r).toMatchObject({
        status: 'resolved',
        outcome: 'split',
        payee_amount: 3_000.03,
        resolved_by: admin.id,
        resolution: 'Partly delivered: the seller keeps what was delivered',
        escrow_status: 'released',
      });
      const after = await balances(deal);
      expect(after.hold).toBe(0);
      expect(after.payee - before.payee).toBe(P - halfUp(sellerFee, P, amount));
      expect(after.payer - before.payer).toBe(
        amount - P + halfUp(payerFee, amount - P, amount) + halfUp(vat, amount - P, amount),
      );
      const [audit] = await testDb()<{ target_type: string; target_id: string; details: unknown }[]>`
      select action, target_type, target_id, details from private.admin_audit
       where admin_id = ${admin.id} and action = 'dispute.resolve'`;
      expect(audit).toMatchObject({ target_type: 'dispute', target_id: disputeId });
      expect(audit!.details).toMatchObject({ outcome: 'split', payee_amount: P, escrow_id: deal.escrowId });
      // the parties see the resolution
      expect(ok(await get(disputeGet, { token: deal.payee.accessToken, query: { escrow_id: deal.escrowId } })))
        .toMatchObject({ status: 'resolved', resolved_by: admin.id, resolution: r.resolution });
      refused(
        await resolve(admin, { dispute_id: disputeId, outcome: 'refund', resolution: 'Changed my mind again' }),
        409,
      );
      expect(
        refused(
          await resolve(admin, { dispute_id: crypto.randomUUID(), outcome: 'refund', resolution: 'No such dispute' }),
          404,
        ),
      ).toEqual([]);
      expect(
        refused(
          await resolve(admin, { dispute_id: disputeId, outcome: 'split', resolution: 'A split without an amount' }),
          400,
        ),
      )
        .toEqual(['payee_amount']);
      await expectLedgerInvariants();
    });

    describe('dispute-get', () => {
      it('an admin cannot resolve a dispute on their own escrow (403); reads any dispute with dispute-get', async () => {
        const { deal, disputeId } = await disputed(1_500);
        await newOperator(['disputes'], deal.payee);
        const own = await resolve(deal.payee, {
          dispute_id: disputeId,
          outcome: 'release',
          resolution: 'Paying myself, as an admin',
        });
        refused(own, 403);
        expect(own.body.error).toMatch(/own escrow/);
        expect((await balances(deal)).hold).toBeGreaterThan(0);
        const admin = await newAdmin();
        const seen = ok(await get(disputeGet, { token: admin.accessToken, query: { escrow_id: deal.escrowId } }));
        expect(seen).toMatchObject({ id: disputeId, status: 'negotiation' });
      });
    });

    it('20 at once, admin resolutions racing acceptances of the same proposal: one settlement', async () => {
      const admin = await newAdmin();
      const { deal, disputeId } = await disputed(4_000);
      const p = ok(
        await post(disputePropose, { escrow_id: deal.escrowId, outcome: 'release' }, {
          token: deal.payee.accessToken,
        }),
        201,
      ).proposals[0];
      const before = await balances(deal);
      const tries = await Promise.all(
        Array.from(
          { length: 20 },
          (_, i) =>
            i % 2
              ? resolve(admin, {
                dispute_id: disputeId,
                outcome: 'refund',
                resolution: 'Refund: nothing was delivered',
              })
              : post(disputeRespond, { escrow_id: deal.escrowId, proposal_id: p!.id, accept: true }, {
                token: deal.payer.accessToken,
              }),
        ),
      );
      const won = tries.filter((t) => t.status === 200);
      expect(won).toHaveLength(1);
      expect(tries.filter((t) => t.status !== 200).every((t) => t.status === 409)).toBe(true);
      const after = await balances(deal);
      expect(after.hold).toBe(0);
      const [row] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.ledger_transfers
       where idempotency_key in (${`dispute-release:${disputeId}`}, ${`dispute-refund:${disputeId}`}, ${`escrow-refund:${deal.escrowId}`})`;
      expect(row?.n).toBe(1);
      // either the payee got the release or the payer everything back, never both
      const payeeGot = after.payee - before.payee;
      const payerGot = after.payer - before.payer;
      expect(payeeGot > 0 !== payerGot > 0).toBe(true);
      await expectLedgerInvariants();
    });
  });
});
