// Every row of docs/escrow-states.md through the real endpoints: each transition's happy path and
// its refusals (403 the wrong party, 404 a stranger, 409 the wrong state, 409 a second execution
// with no second effect on any balance), the invite-token form of accept/decline, the
// notifications each transition writes, where the money goes, and races between transitions.
import { describe, expect, it } from 'vitest';
import { expectStatus, fieldsOf, get, post } from '../support/api.ts';
import { smsMatching, testDb } from '../support/db.ts';
import { kobo } from '../support/money.ts';
import { notes } from '../support/notifications.ts';
import {
  type Category,
  type Deal,
  escrowOp,
  escrowStatus,
  fundedDeal,
  fundWallet,
  newDeal,
  payerCanFund,
} from '../support/escrows.ts';
import { raiseTier } from '../support/kyc.ts';
import { balances, holdKobo, walletKobo } from '../support/ledger.ts';
import { signUp } from '../support/users.ts';
import escrowAccept from '../../supabase/functions/escrow-accept/handler.ts';
import escrowDecline from '../../supabase/functions/escrow-decline/handler.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';
import transactionList from '../../supabase/functions/transaction-list/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

/** What this escrow's ledger transfers booked to the platform fee and VAT accounts (kobo). */
async function feesBooked(escrowId: string) {
  const rows = await testDb()<{ kind: string; amount: string }[]>`
    select a.kind::text as kind, coalesce(sum(en.amount), 0)::text as amount
      from private.ledger_entries en
      join private.ledger_transfers t on t.id = en.transfer_id
      join private.ledger_accounts a on a.id = en.account_id
     where t.transaction_id in (select id from public.transactions where escrow_id = ${escrowId})
       and a.kind in ('platform_fees', 'vat_payable')
     group by a.kind`;
  const of = (k: string) => Number(rows.find((r) => r.kind === k)?.amount ?? 0);
  return { fees: of('platform_fees'), vat: of('vat_payable') };
}

const escrowRow = async (id: string) => {
  const [row] = await testDb()<
    {
      status: string;
      funded_at: string | null;
      accepted_at: string | null;
      delivered_at: string | null;
      released_amount: string;
    }[]
  >`
    select status, funded_at::text, accepted_at::text, delivered_at::text, released_amount::text from public.escrows where id = ${id}`;
  return row;
};

const fundingTxs = (escrowId: string) =>
  testDb()<{ id: string; user_id: string; status: string; amount: string; metadata: Record<string, unknown> }[]>`
    select id, user_id, status::text, amount::text, metadata from public.transactions
     where escrow_id = ${escrowId} and type = 'escrow_funding' order by created_at`;

const smsTo = smsMatching;

/**
 * draft -> active (funded, awaiting acceptance), paid from the payer's wallet (topped up by `extra`
 * more); the payer at the tier that lets them top up and fund it (tier 0 moves no money).
 */
async function fundedUnaccepted(opts: { category?: Category; extraNaira?: number } = {}): Promise<Deal> {
  const deal = await newDeal({ category: opts.category });
  const topUp = deal.feeBreakdown.total_charge + (opts.extraNaira ?? 0);
  await payerCanFund(deal, topUp);
  await fundWallet(deal.payer, topUp);
  expectStatus(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' }), 200);
  expect(await escrowStatus(deal)).toBe('active');
  return deal;
}

/** invite_pending -> active (accepted, awaiting funding); `payerTier` for tests that fund it afterwards. */
async function acceptedUnfunded(opts: { category?: Category; payerTier?: number } = {}): Promise<Deal> {
  const deal = await newDeal({ category: opts.category, payerRole: 'counterparty', payerTier: opts.payerTier });
  expectStatus(await escrowOp('escrow-accept', deal.counterparty, deal.escrowId), 200);
  return deal;
}

// ---- creation --------------------------------------------------------------------------------

describe('escrow-create', () => {
  describe('(new) -> draft / invite_pending', () => {
    it('payer_role initiator: draft, fee breakdown stored, conversation created, nobody invited yet', async () => {
      const deal = await newDeal({ amount: 10_000 });
      const got = await get(escrowGet, { token: deal.initiator.accessToken, query: { escrow_id: deal.escrowId } });
      expect(got.body.data).toMatchObject({ status: 'draft', funded_at: null, fee_breakdown: deal.feeBreakdown });
      const [conv] = await testDb()<
        { id: string }[]
      >`select id from public.conversations where escrow_id = ${deal.escrowId}`;
      expect(conv?.id).toBe(deal.conversationId);
      expect(await notes(deal.counterparty, deal.escrowId)).toEqual([]);
      expect((await notes(deal.initiator, deal.escrowId)).map((n) => n.event_type)).toEqual(['escrow_created']);
    });

    it('payer_role counterparty: invite_pending, invite SMS and notification to the counterparty', async () => {
      const deal = await newDeal({ payerRole: 'counterparty', title: 'Invite row' });
      expect(await escrowStatus(deal)).toBe('invite_pending');
      expect(await smsTo(deal.counterparty.phone, 'Ini invited you to a goods escrow of NGN 10,000.00 as the Buyer.%'))
        .toBe(1);
      // never the title: SMS carry no text the inviter wrote but a safe first name
      expect(await smsTo(deal.counterparty.phone, '%Invite row%')).toBe(0);
      const n = await notes(deal.counterparty, deal.escrowId);
      expect(n).toHaveLength(1);
      expect(n[0]).toMatchObject({
        event_type: 'invite_received',
        entity_type: 'escrow',
        entity_id: deal.escrowId,
        user_id: deal.counterparty.id,
      });
    });
  });
});

// ---- funding ---------------------------------------------------------------------------------

describe('escrow-fund', () => {
  describe('draft -> active (funded, awaiting acceptance): from the wallet', () => {
    it('locks the total charge in the hold, takes it from the payer, invites the counterparty by SMS', async () => {
      const deal = await newDeal({ title: 'Fund row' });
      const total = kobo(deal.feeBreakdown.total_charge);
      // enough for a second funding, in one top-up of twice the total charge (the payer at the tier
      // that allows it: tier 0 moves no money)
      await payerCanFund(deal, 2 * deal.feeBreakdown.total_charge);
      await fundWallet(deal.payer, 2 * deal.feeBreakdown.total_charge);
      const before = await balances(deal);
      expect(before).toEqual({ payer: 2 * total, payee: 0, hold: 0 });

      const res = await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' });
      expectStatus(res, 200);
      expect(res.body.data).toMatchObject({ id: deal.escrowId, status: 'active' });
      expect(res.body.data.funded_at).not.toBeNull();
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: total });
      expect(await smsTo(deal.counterparty.phone, '%invited you%already in escrow%')).toBe(1);
      expect(await smsTo(deal.counterparty.phone, '%Fund row%')).toBe(0); // SMS never quote the title
      const txs = await fundingTxs(deal.escrowId);
      expect(txs.map((t) => [t.user_id, t.status, Number(t.amount)])).toEqual([[deal.payer.id, 'succeeded', total]]);
      expect((await notes(deal.counterparty, deal.escrowId)).map((n) => n.event_type)).toContain('invite_received');
      expect((await notes(deal.payer, deal.escrowId)).map((n) => n.event_type)).toContain('funded');

      // a second funding: 409, nothing moves, no second SMS
      const again = await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' });
      expectStatus(again, 409);
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: total });
      expect(await smsTo(deal.counterparty.phone, '%invited you%already in escrow%')).toBe(1);
      expect(await fundingTxs(deal.escrowId)).toHaveLength(1);
    });

    it('the payee may not fund (403), a stranger gets 404, and neither moves money', async () => {
      // both at tier 1, with money in the wallet: what refuses them is their role, not the identity floor
      const [deal, stranger] = await Promise.all([newDeal(), signUp({ tier: 1 })]);
      expect(await raiseTier(deal.payee.id, 1)).toBe(1);
      await Promise.all([fundWallet(deal.payee, 20_000), fundWallet(stranger, 20_000)]);
      expectStatus(await escrowOp('escrow-fund', deal.payee, deal.escrowId, { method: 'wallet' }), 403);
      expectStatus(await escrowOp('escrow-fund', stranger, deal.escrowId, { method: 'wallet' }), 404);
      expect(await walletKobo(deal.payee.id)).toBe(2_000_000);
      expect(await walletKobo(stranger.id)).toBe(2_000_000);
      expect(await holdKobo(deal.escrowId)).toBe(0);
      expect(await escrowStatus(deal)).toBe('draft');
    });

    it('a wallet short of the total charge is 409 and nothing changes', async () => {
      const deal = await newDeal({ amount: 10_000, payerTier: 1 });
      await fundWallet(deal.payer, 10_000); // the amount, but not the fee and VAT on top
      const res = await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' });
      expectStatus(res, 409);
      // names what the request sent (escrow_id) and what is missing, in naira
      const total = deal.feeBreakdown.total_charge; // naira
      const short = (total * 100 - 1_000_000) / 100;
      const ngn = (n: number) => `NGN ${n.toLocaleString('en-US', { minimumFractionDigits: 2 })}`;
      expect(res.body.error).toBe(
        `Insufficient funds: this escrow needs ${ngn(total)} from your wallet, which holds NGN 10,000.00 (${
          ngn(short)
        } short); top up the wallet or pay by card`,
      );
      expect(res.body.details).toEqual([{ field: 'escrow_id', message: `needs ${ngn(short)} more in the wallet` }]);
      expect(await balances(deal)).toEqual({ payer: 1_000_000, payee: 0, hold: 0 });
      expect(await escrowRow(deal.escrowId)).toMatchObject({ status: 'draft', funded_at: null });
      expect(await fundingTxs(deal.escrowId)).toEqual([]);
      expect(await smsTo(deal.counterparty.phone, '%already in escrow%')).toBe(0);
    });

    it('funding a funded, cancelled or deleted escrow is 409', async () => {
      const funded = await fundedDeal();
      await fundWallet(funded.payer, funded.feeBreakdown.total_charge);
      expectStatus(await escrowOp('escrow-fund', funded.payer, funded.escrowId, { method: 'wallet' }), 409);
      const cancelled = await newDeal({ payerTier: 1 });
      expectStatus(await escrowOp('escrow-cancel', cancelled.initiator, cancelled.escrowId), 200);
      await fundWallet(cancelled.payer, cancelled.feeBreakdown.total_charge);
      expectStatus(await escrowOp('escrow-fund', cancelled.payer, cancelled.escrowId, { method: 'wallet' }), 409);
      expect(await walletKobo(cancelled.payer.id)).toBe(kobo(cancelled.feeBreakdown.total_charge));
      // invite_pending: the payer (counterparty) must accept first
      const pending = await newDeal({ payerRole: 'counterparty', payerTier: 1 });
      await fundWallet(pending.payer, pending.feeBreakdown.total_charge);
      expectStatus(await escrowOp('escrow-fund', pending.payer, pending.escrowId, { method: 'wallet' }), 409);
      expect(await holdKobo(pending.escrowId)).toBe(0);
    });
  });

  describe('active (accepted, awaiting funding) -> funded: by the payer', () => {
    it('locks the total charge and the payment request transaction becomes succeeded', async () => {
      const deal = await acceptedUnfunded({ payerTier: 1 });
      const total = kobo(deal.feeBreakdown.total_charge);
      const [request] = await fundingTxs(deal.escrowId);
      await fundWallet(deal.payer, deal.feeBreakdown.total_charge);

      expectStatus(await escrowOp('escrow-fund', deal.payee, deal.escrowId, { method: 'wallet' }), 403);
      const res = await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' });
      expectStatus(res, 200);
      expect(res.body.data.status).toBe('funded');
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });

      const txs = await fundingTxs(deal.escrowId);
      expect(txs.find((t) => t.id === request!.id)?.status).toBe('succeeded');
      // one funding movement, not a request plus a second debit
      expect(txs.filter((t) => t.status === 'succeeded')).toHaveLength(1);
      expect(txs.filter((t) => t.status === 'pending')).toHaveLength(0);
      expect((await notes(deal.payee, deal.escrowId)).map((n) => n.event_type)).toContain('funded');

      await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
      expectStatus(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' }), 409);
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: total });
    });
  });

  describe('concurrency', () => {
    it('concurrent wallet fundings of one draft: one 200, the rest 409, the wallet debited once', async () => {
      const deal = await newDeal({ amount: 1_000, payerTier: 1 });
      const total = kobo(deal.feeBreakdown.total_charge);
      await fundWallet(deal.payer, deal.feeBreakdown.total_charge * 3);
      const results = await Promise.all(
        Array.from({ length: 4 }, () => escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
      expect(await balances(deal)).toEqual({ payer: 2 * total, payee: 0, hold: total });
    });
  });
});

// ---- accept ----------------------------------------------------------------------------------

describe('escrow-accept', () => {
  describe('invite_pending -> active (accepted, awaiting funding): by the counterparty (the payer)', () => {
    it("writes 'active' to the initiator and 'payment_requested' to the payer, tied to a pending funding transaction", async () => {
      const deal = await newDeal({ payerRole: 'counterparty', title: 'Accept row' });
      const res = await escrowOp('escrow-accept', deal.counterparty, deal.escrowId);
      expectStatus(res, 200);
      expect(res.body.data).toMatchObject({ id: deal.escrowId, status: 'active', funded_at: null });
      expect(res.body.data.accepted_at).not.toBeNull();

      const ini = await notes(deal.initiator, deal.escrowId);
      const active = ini.filter((n) => n.event_type === 'active');
      expect(active).toHaveLength(1);
      expect(active[0]?.content).toMatch(/accepted/);

      const txs = await fundingTxs(deal.escrowId);
      expect(txs).toHaveLength(1);
      const request = txs[0]!;
      expect(request).toMatchObject({ user_id: deal.payer.id, status: 'pending' });
      expect(Number(request.amount)).toBe(kobo(deal.feeBreakdown.total_charge));
      const asked = (await notes(deal.payer, deal.escrowId)).filter((n) => n.event_type === 'payment_requested');
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ user_id: deal.payer.id, entity_type: 'transaction', entity_id: request.id });
      expect(asked[0]?.action_label).toEqual(expect.any(String));
      expect(asked[0]?.action_label?.length).toBeGreaterThan(0);

      // the pending request is visible to the payer in transaction-list
      const listed = await get(transactionList, {
        token: deal.payer.accessToken,
        query: { escrow_id: deal.escrowId },
      });
      expect(listed.body.data.data.map((t: { id: string; status: string }) => [t.id, t.status])).toEqual([[
        request.id,
        'pending',
      ]]);
    });

    it('the initiator may not accept (403), a stranger gets 404, a second accept is 409', async () => {
      const [deal, stranger] = await Promise.all([newDeal({ payerRole: 'counterparty' }), signUp()]);
      expectStatus(await escrowOp('escrow-accept', deal.initiator, deal.escrowId), 403);
      expectStatus(await escrowOp('escrow-accept', stranger, deal.escrowId), 404);
      expect(await escrowStatus(deal)).toBe('invite_pending');
      expectStatus(await escrowOp('escrow-accept', deal.counterparty, deal.escrowId), 200);
      const again = await escrowOp('escrow-accept', deal.counterparty, deal.escrowId);
      expectStatus(again, 409);
      // no second payment request, no second 'active'
      expect(await fundingTxs(deal.escrowId)).toHaveLength(1);
      expect((await notes(deal.initiator, deal.escrowId)).filter((n) => n.event_type === 'active')).toHaveLength(1);
      expect((await notes(deal.payer, deal.escrowId)).filter((n) => n.event_type === 'payment_requested')).toHaveLength(
        1,
      );
    });

    it('accepting a draft nobody funded yet is 409, saying what comes first', async () => {
      const deal = await newDeal();
      const res = await escrowOp('escrow-accept', deal.counterparty, deal.escrowId);
      expectStatus(res, 409);
      expect(res.body.error).toBe(
        'cannot accept an escrow that is draft: the initiator funds it first (escrow-fund), then you can accept it',
      );
      expect(await escrowStatus(deal)).toBe('draft');
    });
  });

  describe('active (funded, awaiting acceptance) -> funded: by the counterparty (the payee)', () => {
    it("writes 'active' to the initiator; the payer may not accept (403); a second accept is 409", async () => {
      const [deal, stranger] = await Promise.all([fundedUnaccepted(), signUp()]);
      const total = kobo(deal.feeBreakdown.total_charge);
      expectStatus(await escrowOp('escrow-accept', deal.initiator, deal.escrowId), 403);
      expectStatus(await escrowOp('escrow-accept', stranger, deal.escrowId), 404);
      const res = await escrowOp('escrow-accept', deal.counterparty, deal.escrowId);
      expectStatus(res, 200);
      expect(res.body.data.status).toBe('funded');
      const active = (await notes(deal.initiator, deal.escrowId)).filter((n) => n.event_type === 'active');
      expect(active).toHaveLength(1);
      expect(active[0]).toMatchObject({ user_id: deal.initiator.id, escrow_id: deal.escrowId });
      expect(active[0]?.content).toMatch(/accepted/);
      // no payment request here: the money is already in
      expect((await notes(deal.payer, deal.escrowId)).filter((n) => n.event_type === 'payment_requested')).toEqual([]);
      expectStatus(await escrowOp('escrow-accept', deal.counterparty, deal.escrowId), 409);
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
    });
  });

  describe('by invite token', () => {
    it('the invited counterparty accepts with {invite_token}', async () => {
      const deal = await newDeal({ payerRole: 'counterparty' });
      const res = await post(escrowAccept, { invite_token: deal.inviteToken }, {
        token: deal.counterparty.accessToken,
      });
      expectStatus(res, 200);
      expect(res.body.data).toMatchObject({ id: deal.escrowId, status: 'active' });
    });
  });
});

describe('escrow-accept / escrow-decline by invite token', () => {
  it('another logged-in user holding the token cannot accept or decline; the initiator with it gets 403', async () => {
    const [deal, stranger] = await Promise.all([newDeal({ payerRole: 'counterparty' }), signUp()]);
    for (const op of ['escrow-accept', 'escrow-decline']) {
      const r = await post(op, { invite_token: deal.inviteToken }, { token: stranger.accessToken });
      expect([403, 404], JSON.stringify(r.body)).toContain(r.status);
      expect(r.body.success).toBe(false);
      const byInitiator = await post(op, { invite_token: deal.inviteToken }, { token: deal.initiator.accessToken });
      expectStatus(byInitiator, 403);
    }
    const row = await testDb()<
      { status: string; counterparty_id: string }[]
    >`select status, counterparty_id from public.escrows where id = ${deal.escrowId}`;
    expect(row[0]).toMatchObject({ status: 'invite_pending', counterparty_id: deal.counterparty.id });
    // the stranger still cannot read it
    expect((await get(escrowGet, { token: stranger.accessToken, query: { escrow_id: deal.escrowId } })).status).toBe(
      404,
    );
  });

  it('an unknown token is 404; both escrow_id and invite_token, or neither, is 400', async () => {
    const deal = await newDeal({ payerRole: 'counterparty' });
    const t = deal.counterparty.accessToken;
    for (const op of ['escrow-accept', 'escrow-decline']) {
      expectStatus(await post(op, { invite_token: 'x'.repeat(32) }, { token: t }), 404);
      const both = await post(op, { escrow_id: deal.escrowId, invite_token: deal.inviteToken }, { token: t });
      expectStatus(both, 400);
      expect(fieldsOf(both).length).toBeGreaterThan(0);
      const neither = await post(op, {}, { token: t });
      expectStatus(neither, 400);
      expect(fieldsOf(neither).length).toBeGreaterThan(0);
      expectStatus(await post(op, { escrow_id: 'nope' }, { token: t }), 400);
    }
    expect(await escrowStatus(deal)).toBe('invite_pending');
  });
});

// ---- decline: before the money is in (cancelled), after it (refunded) ------------------------

describe('escrow-decline', () => {
  describe('by invite token', () => {
    it('the invited counterparty declines with {invite_token}', async () => {
      const deal = await newDeal({ payerRole: 'counterparty' });
      const res = await post(escrowDecline, { invite_token: deal.inviteToken }, {
        token: deal.counterparty.accessToken,
      });
      expectStatus(res, 200);
      expect(res.body.data).toMatchObject({ id: deal.escrowId, status: 'cancelled' });
    });
  });

  describe('draft, invite_pending, active (unfunded) -> cancelled', () => {
    it('escrow-decline by the counterparty of a draft, an invite_pending and an accepted unfunded escrow', async () => {
      const draft = await newDeal();
      const pending = await newDeal({ payerRole: 'counterparty' });
      const accepted = await acceptedUnfunded();
      for (const deal of [draft, pending, accepted]) {
        expectStatus(await escrowOp('escrow-decline', deal.initiator, deal.escrowId), 403);
        const res = await escrowOp('escrow-decline', deal.counterparty, deal.escrowId);
        expectStatus(res, 200);
        expect(res.body.data.status).toBe('cancelled');
        expectStatus(await escrowOp('escrow-decline', deal.counterparty, deal.escrowId), 409);
        expect((await notes(deal.initiator, deal.escrowId)).filter((n) => n.event_type === 'declined')).toHaveLength(1);
      }
      expect((await fundingTxs(accepted.escrowId)).map((t) => t.status)).toEqual(['canceled']);
    });

    it('a stranger declining gets 404', async () => {
      const [deal, stranger] = await Promise.all([newDeal({ payerRole: 'counterparty' }), signUp()]);
      expectStatus(await escrowOp('escrow-decline', stranger, deal.escrowId), 404);
      expect(await escrowStatus(deal)).toBe('invite_pending');
    });
  });

  describe('active (funded, awaiting acceptance) -> refunded', () => {
    it('escrow-decline by the counterparty returns the hold to the payer; a second decline is 409 with no second refund', async () => {
      const [deal, stranger] = await Promise.all([fundedUnaccepted(), signUp()]);
      const total = kobo(deal.feeBreakdown.total_charge);
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
      expectStatus(await escrowOp('escrow-decline', deal.initiator, deal.escrowId), 403);
      expectStatus(await escrowOp('escrow-decline', stranger, deal.escrowId), 404);
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
      const res = await escrowOp('escrow-decline', deal.counterparty, deal.escrowId);
      expectStatus(res, 200);
      expect(res.body.data.status).toBe('refunded');
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: 0 });
      expectStatus(await escrowOp('escrow-decline', deal.counterparty, deal.escrowId), 409);
      expectStatus(await escrowOp('escrow-cancel', deal.payer, deal.escrowId), 409);
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: 0 });
      expect(await feesBooked(deal.escrowId)).toEqual({ fees: 0, vat: 0 });
      const refunds = await testDb()<{ status: string; amount: string; user_id: string }[]>`
      select status::text, amount::text, user_id from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_refund'`;
      expect(refunds.map((r) => [r.user_id, r.status, Number(r.amount)])).toEqual([[
        deal.payer.id,
        'succeeded',
        total,
      ]]);
    });
  });
});

// ---- cancel: before the money is in (cancelled), after it (refunded) -------------------------

describe('escrow-cancel', () => {
  describe('draft, invite_pending, active (unfunded) -> cancelled', () => {
    it('escrow-cancel of a draft by either party; a stranger 404; a second cancel 409', async () => {
      for (const who of ['initiator', 'counterparty'] as const) {
        const [deal, stranger] = await Promise.all([newDeal(), signUp()]);
        expectStatus(await escrowOp('escrow-cancel', stranger, deal.escrowId), 404);
        const res = await escrowOp('escrow-cancel', deal[who], deal.escrowId);
        expectStatus(res, 200);
        expect(res.body.data.status).toBe('cancelled');
        expectStatus(await escrowOp('escrow-cancel', deal[who], deal.escrowId), 409);
        expectStatus(
          await escrowOp('escrow-cancel', deal[who === 'initiator' ? 'counterparty' : 'initiator'], deal.escrowId),
          409,
        );
        for (const u of [deal.initiator, deal.counterparty]) {
          expect((await notes(u, deal.escrowId)).filter((n) => n.event_type === 'cancelled')).toHaveLength(1);
        }
      }
    });

    it('escrow-cancel of an invite_pending escrow by either party', async () => {
      for (const who of ['initiator', 'counterparty'] as const) {
        const deal = await newDeal({ payerRole: 'counterparty' });
        const res = await escrowOp('escrow-cancel', deal[who], deal.escrowId);
        expectStatus(res, 200);
        expect(res.body.data.status).toBe('cancelled');
      }
    });

    it('escrow-cancel of an accepted, unfunded escrow cancels the pending payment request; funding afterwards is 409', async () => {
      for (const who of ['initiator', 'counterparty'] as const) {
        const deal = await acceptedUnfunded({ payerTier: 1 });
        const res = await escrowOp('escrow-cancel', deal[who], deal.escrowId);
        expectStatus(res, 200);
        expect(res.body.data.status).toBe('cancelled');
        expect((await fundingTxs(deal.escrowId)).map((t) => t.status)).toEqual(['canceled']);
        await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
        expectStatus(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' }), 409);
        expect(await walletKobo(deal.payer.id)).toBe(kobo(deal.feeBreakdown.total_charge));
      }
    });
  });

  describe('active (funded, awaiting acceptance) -> refunded', () => {
    it('escrow-cancel by the payer refunds; by the payee it is 403', async () => {
      const [deal, stranger] = await Promise.all([fundedUnaccepted(), signUp()]);
      const total = kobo(deal.feeBreakdown.total_charge);
      expectStatus(await escrowOp('escrow-cancel', deal.payee, deal.escrowId), 403);
      expectStatus(await escrowOp('escrow-cancel', stranger, deal.escrowId), 404);
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
      const res = await escrowOp('escrow-cancel', deal.payer, deal.escrowId);
      expectStatus(res, 200);
      expect(res.body.data.status).toBe('refunded');
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: 0 });
      expectStatus(await escrowOp('escrow-cancel', deal.payer, deal.escrowId), 409);
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: 0 });
      expectStatus(await escrowOp('escrow-accept', deal.counterparty, deal.escrowId), 409);
    });
  });
});

describe('active (funded, awaiting acceptance) -> refunded', () => {
  it('once accepted (funded), neither cancel nor decline is allowed', async () => {
    const deal = await fundedDeal();
    const total = kobo(deal.feeBreakdown.total_charge);
    expectStatus(await escrowOp('escrow-cancel', deal.payer, deal.escrowId), 409);
    expectStatus(await escrowOp('escrow-cancel', deal.payee, deal.escrowId), 409);
    expectStatus(await escrowOp('escrow-decline', deal.counterparty, deal.escrowId), 409);
    expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
    expect(await escrowStatus(deal)).toBe('funded');
  });
});

// ---- delete ----------------------------------------------------------------------------------

describe('escrow-delete', () => {
  describe('draft -> deleted: by the initiator', () => {
    it('deletes a draft; the counterparty 403, a stranger 404, a second delete 409', async () => {
      const [deal, stranger] = await Promise.all([newDeal({ payerTier: 1 }), signUp()]);
      expectStatus(await escrowOp('escrow-delete', deal.counterparty, deal.escrowId), 403);
      expectStatus(await escrowOp('escrow-delete', stranger, deal.escrowId), 404);
      const res = await escrowOp('escrow-delete', deal.initiator, deal.escrowId);
      expectStatus(res, 200);
      expect(res.body.data.status).toBe('deleted');
      expectStatus(await escrowOp('escrow-delete', deal.initiator, deal.escrowId), 409);
      await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
      expectStatus(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' }), 409);
      expect(await holdKobo(deal.escrowId)).toBe(0);
    });

    it('only a draft can be deleted: invite_pending, funded-awaiting-acceptance and cancelled are 409', async () => {
      const pending = await newDeal({ payerRole: 'counterparty' });
      expectStatus(await escrowOp('escrow-delete', pending.initiator, pending.escrowId), 409);
      const active = await fundedUnaccepted();
      expectStatus(await escrowOp('escrow-delete', active.initiator, active.escrowId), 409);
      expect(await holdKobo(active.escrowId)).toBe(kobo(active.feeBreakdown.total_charge));
      const cancelled = await newDeal();
      expectStatus(await escrowOp('escrow-cancel', cancelled.initiator, cancelled.escrowId), 200);
      expectStatus(await escrowOp('escrow-delete', cancelled.initiator, cancelled.escrowId), 409);
    });
  });
});

// ---- deliver ---------------------------------------------------------------------------------

describe('escrow-deliver', () => {
  describe('funded, not yet delivered: by the payee', () => {
    it('goods_products goes to inspection; hiring, auto_dealership and p2p_crypto stay funded with the delivery recorded', async () => {
      for (const category of ['goods_products', 'hiring', 'auto_dealership', 'p2p_crypto'] as const) {
        const deal = await fundedDeal({ category });
        const res = await escrowOp('escrow-deliver', deal.payee, deal.escrowId);
        expectStatus(res, 200);
        expect(res.body.data.status).toBe(category === 'goods_products' ? 'inspection' : 'funded');
        expect(res.body.data.delivered_at).not.toBeNull();
        expect(res.body.data.inspection_ends_at === null).toBe(category !== 'goods_products');
        const delivered = (await notes(deal.payer, deal.escrowId)).filter((n) => n.event_type === 'delivered');
        expect(delivered).toHaveLength(1);
        // a second delivery is 409 and changes nothing
        const again = await escrowOp('escrow-deliver', deal.payee, deal.escrowId);
        expectStatus(again, 409);
        const after = await get(escrowGet, { token: deal.payee.accessToken, query: { escrow_id: deal.escrowId } });
        expect(after.body.data.delivered_at).toBe(res.body.data.delivered_at);
        expect((await notes(deal.payer, deal.escrowId)).filter((n) => n.event_type === 'delivered')).toHaveLength(1);
      }
    });

    it('the payer may not deliver (403), a stranger 404, and an unfunded or unaccepted escrow is 409', async () => {
      const [deal, stranger] = await Promise.all([fundedDeal(), signUp()]);
      expectStatus(await escrowOp('escrow-deliver', deal.payer, deal.escrowId), 403);
      expectStatus(await escrowOp('escrow-deliver', stranger, deal.escrowId), 404);
      expect(await escrowStatus(deal)).toBe('funded');
      const draft = await newDeal();
      expectStatus(await escrowOp('escrow-deliver', draft.payee, draft.escrowId), 409);
      const unaccepted = await fundedUnaccepted();
      expectStatus(await escrowOp('escrow-deliver', unaccepted.payee, unaccepted.escrowId), 409);
    });
  });
});

// ---- release ---------------------------------------------------------------------------------

describe('escrow-release', () => {
  describe('funded / inspection -> released: by the payer', () => {
    it('credits the payee the seller payout, books fees and VAT, empties the hold; a second release is 409 with no second credit', async () => {
      const deal = await fundedDeal({ amount: 10_000 });
      const fb = deal.feeBreakdown;
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: kobo(fb.total_charge) });
      const res = await escrowOp('escrow-release', deal.payer, deal.escrowId);
      expectStatus(res, 200);
      expect(res.body.data.status).toBe('released');
      expect(res.body.data.released_at).not.toBeNull();
      expect(await balances(deal)).toEqual({ payer: 0, payee: kobo(fb.seller_payout), hold: 0 });
      expect(await feesBooked(deal.escrowId)).toEqual({
        fees: kobo(fb.payer_fee) + kobo(fb.seller_fee),
        vat: kobo(fb.vat),
      });
      expect(await balances(deal)).toEqual({ payer: 0, payee: 992_500, hold: 0 });
      expect(await feesBooked(deal.escrowId)).toEqual({ fees: 15_000, vat: 563 });
      const releaseTx = await testDb()<{ user_id: string; status: string; amount: string }[]>`
      select user_id, status::text, amount::text from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_release'`;
      expect(releaseTx.map((t) => [t.user_id, t.status, Number(t.amount)])).toEqual([[
        deal.payee.id,
        'succeeded',
        992_500,
      ]]);
      expect((await notes(deal.payee, deal.escrowId)).filter((n) => n.event_type === 'released')).toHaveLength(1);
      expect((await notes(deal.payer, deal.escrowId)).filter((n) => n.event_type === 'released')).toHaveLength(1);

      expectStatus(await escrowOp('escrow-release', deal.payer, deal.escrowId), 409);
      expectStatus(await escrowOp('escrow-refund', deal.payee, deal.escrowId), 409);
      expectStatus(await escrowOp('escrow-cancel', deal.payer, deal.escrowId), 409);
      expect(await balances(deal)).toEqual({ payer: 0, payee: 992_500, hold: 0 });
      expect(await feesBooked(deal.escrowId)).toEqual({ fees: 15_000, vat: 563 });
    });

    it('the payee may not release (403), a stranger 404; nothing moves', async () => {
      const [deal, stranger] = await Promise.all([fundedDeal(), signUp()]);
      const total = kobo(deal.feeBreakdown.total_charge);
      expectStatus(await escrowOp('escrow-release', deal.payee, deal.escrowId), 403);
      expectStatus(await escrowOp('escrow-release', stranger, deal.escrowId), 404);
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
      expect(await escrowStatus(deal)).toBe('funded');
    });

    it('releasing a draft, an accepted-unfunded or a funded-unaccepted escrow is 409', async () => {
      const draft = await newDeal();
      expectStatus(await escrowOp('escrow-release', draft.payer, draft.escrowId), 409);
      const accepted = await acceptedUnfunded();
      expectStatus(await escrowOp('escrow-release', accepted.payer, accepted.escrowId), 409);
      const unaccepted = await fundedUnaccepted();
      expectStatus(await escrowOp('escrow-release', unaccepted.payer, unaccepted.escrowId), 409);
      expect(await balances(unaccepted)).toEqual({
        payer: 0,
        payee: 0,
        hold: kobo(unaccepted.feeBreakdown.total_charge),
      });
    });

    it('payer_role counterparty: the counterparty releases to the initiator', async () => {
      const deal = await fundedDeal({ payerRole: 'counterparty', category: 'p2p_crypto' });
      expectStatus(await escrowOp('escrow-release', deal.initiator, deal.escrowId), 403);
      expectStatus(await escrowOp('escrow-release', deal.counterparty, deal.escrowId), 200);
      expect(await walletKobo(deal.initiator.id)).toBe(kobo(deal.feeBreakdown.seller_payout));
    });
  });

  describe('concurrency', () => {
    it('5 concurrent releases by the payer: one 200, four 409, the payee credited once', async () => {
      const deal = await fundedDeal({ amount: 3_333.33, category: 'p2p_crypto' });
      const results = await Promise.all(
        Array.from({ length: 5 }, () => escrowOp('escrow-release', deal.payer, deal.escrowId)),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409, 409, 409, 409]);
      expect(await balances(deal)).toEqual({ payer: 0, payee: kobo(deal.feeBreakdown.seller_payout), hold: 0 });
      const releases = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_release'`;
      expect(releases[0]?.n).toBe(1);
      expect((await notes(deal.payee, deal.escrowId)).filter((n) => n.event_type === 'released')).toHaveLength(1);
    });
  });
});

// ---- refund ----------------------------------------------------------------------------------

describe('escrow-refund', () => {
  describe('funded / inspection -> refunded: by the payee', () => {
    it('returns the whole total charge to the payer; a second refund is 409 with no second credit', async () => {
      const [deal, stranger] = await Promise.all([fundedDeal(), signUp()]);
      const total = kobo(deal.feeBreakdown.total_charge);
      expectStatus(await escrowOp('escrow-refund', deal.payer, deal.escrowId), 403);
      expectStatus(await escrowOp('escrow-refund', stranger, deal.escrowId), 404);
      const res = await escrowOp('escrow-refund', deal.payee, deal.escrowId);
      expectStatus(res, 200);
      expect(res.body.data.status).toBe('refunded');
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: 0 });
      expect(await feesBooked(deal.escrowId)).toEqual({ fees: 0, vat: 0 });
      for (const u of [deal.payer, deal.payee]) {
        expect((await notes(u, deal.escrowId)).filter((n) => n.event_type === 'refunded')).toHaveLength(1);
      }
      expectStatus(await escrowOp('escrow-refund', deal.payee, deal.escrowId), 409);
      expectStatus(await escrowOp('escrow-release', deal.payer, deal.escrowId), 409);
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: 0 });
    });

    it('refunds from inspection too', async () => {
      const deal = await fundedDeal({ category: 'goods_products' });
      expectStatus(await escrowOp('escrow-deliver', deal.payee, deal.escrowId), 200);
      const res = await escrowOp('escrow-refund', deal.payee, deal.escrowId);
      expectStatus(res, 200);
      expect(res.body.data.status).toBe('refunded');
      expect(await balances(deal)).toEqual({ payer: kobo(deal.feeBreakdown.total_charge), payee: 0, hold: 0 });
    });

    it('refunding a draft or a funded-unaccepted escrow is 409', async () => {
      const draft = await newDeal();
      expectStatus(await escrowOp('escrow-refund', draft.payee, draft.escrowId), 409);
      const unaccepted = await fundedUnaccepted();
      expectStatus(await escrowOp('escrow-refund', unaccepted.payee, unaccepted.escrowId), 409);
      expect(await holdKobo(unaccepted.escrowId)).toBe(kobo(unaccepted.feeBreakdown.total_charge));
    });
  });
});

// ---- races -----------------------------------------------------------------------------------

describe('concurrency', () => {
  it(
    'release, refund and cancel at once on a funded escrow: exactly one of release/refund wins, money is conserved (10 rounds)',
    { timeout: 240_000 },
    async () => {
      const deals: Deal[] = [];
      for (let batch = 0; batch < 2; batch++) {
        deals.push(...(await Promise.all(Array.from({ length: 5 }, () => fundedDeal({ amount: 7_777.77 })))));
      }
      const winners: string[] = [];
      for (const [round, deal] of deals.entries()) {
        const total = kobo(deal.feeBreakdown.total_charge);
        expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
        const canceller = round % 2 === 0 ? deal.payer : deal.payee;
        const [release, refund, cancel] = await Promise.all([
          escrowOp('escrow-release', deal.payer, deal.escrowId),
          escrowOp('escrow-refund', deal.payee, deal.escrowId),
          escrowOp('escrow-cancel', canceller, deal.escrowId),
        ]);
        const statuses = [release.status, refund.status, cancel.status];
        expect(cancel.status, JSON.stringify(cancel.body)).toBe(409);
        expect(statuses.filter((s) => s === 200), JSON.stringify(statuses)).toHaveLength(1);
        expect(statuses.filter((s) => s === 409), JSON.stringify(statuses)).toHaveLength(2);
        const winner = release.status === 200 ? 'released' : 'refunded';
        winners.push(winner);
        expect(await escrowStatus(deal)).toBe(winner);

        const after = await balances(deal);
        const booked = await feesBooked(deal.escrowId);
        expect(after.hold).toBe(0);
        expect(after.payer + after.payee + after.hold + booked.fees + booked.vat).toBe(total);
        if (winner === 'released') {
          expect(after).toEqual({ payer: 0, payee: kobo(deal.feeBreakdown.seller_payout), hold: 0 });
          expect(booked.fees + booked.vat).toBe(total - kobo(deal.feeBreakdown.seller_payout));
        } else {
          expect(after).toEqual({ payer: total, payee: 0, hold: 0 });
          expect(booked).toEqual({ fees: 0, vat: 0 });
        }
      }
      expect(winners).toHaveLength(10);
    },
  );

  it('accept and decline at once on a funded, unaccepted escrow: exactly one wins and the money follows it', async () => {
    const deal = await fundedUnaccepted();
    const total = kobo(deal.feeBreakdown.total_charge);
    const [accept, decline, cancel] = await Promise.all([
      escrowOp('escrow-accept', deal.counterparty, deal.escrowId),
      escrowOp('escrow-decline', deal.counterparty, deal.escrowId),
      escrowOp('escrow-cancel', deal.payer, deal.escrowId),
    ]);
    const oks = [accept, decline, cancel].filter((r) => r.status === 200);
    expect(oks, JSON.stringify([accept.status, decline.status, cancel.status])).toHaveLength(1);
    const status = await escrowStatus(deal);
    if (accept.status === 200) {
      expect(status).toBe('funded');
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
    } else {
      expect(status).toBe('refunded');
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: 0 });
    }
  });
});
