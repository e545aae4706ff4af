// Refunds to a merchant escrow's buyer (docs/merchants.md#refunds-to-the-buyer) through the real
// server, the Paystack fake and the job: every path that gives a merchant escrow's money back to
// its payer (escrow-refund by the payee, a dispute's refund and a split's refund part, a payment
// that arrives after a cancel or an expiry) sends one refund by the checkout charge's reference
// and credits no wallet; refund.processed settles it once, refund.failed holds it for review; a
// refund committed but never sent is picked up by the job; races keep the ledger and send at most
// one refund per escrow; escrow-fund refuses a merchant escrow; app escrows still refund to the
// wallet.
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb } from '../../shared/core/db.ts';
import { REFUND_MAX_RESENDS } from '../../shared/money/refunds.ts';
import { expectError, expectOk, post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { runJobs } from '../support/clock.ts';
import { holdKobo, walletKobo } from '../support/ledger.ts';
import { paystack } from '../support/paystack.ts';
import {
  checkoutOf,
  type Merchant,
  newMerchant as merchant,
  newMerchantEscrow as created,
  payCheckout as pay,
} from '../support/merchants.ts';
import { fundedDeal, fundWallet } from '../support/escrows.ts';
import { signUp, type TestUser } from '../support/users.ts';
import { newOperator } from '../support/operators.ts';

afterAll(() => closeDb());

// ---- helpers -------------------------------------------------------------------------------

const statusOf = async (escrowId: string) =>
  (await testDb()<{ status: string }[]>`select status from public.escrows where id = ${escrowId}`)[0]!.status;

interface RefundRow {
  id: string;
  user_id: string;
  amount: string;
  status: string;
  provider: string;
  charge_reference: string;
  channel: string | null;
  attempted: boolean;
  review: string | null;
  transfers: number;
}

/** The escrow's refunds through the provider, oldest first, with their ledger transfers. */
const refundsOf = (escrowId: string) =>
  testDb()<RefundRow[]>`
    select t.id, t.user_id, t.amount::text, t.status::text, t.provider, t.metadata ->> 'charge_reference' as charge_reference,
           t.metadata ->> 'channel' as channel, t.metadata ? 'refund_attempted_at' as attempted,
           t.metadata -> 'review' ->> 'reason' as review,
           (select count(*)::int from private.ledger_transfers lt where lt.transaction_id = t.id) as transfers
      from public.transactions t
     where t.escrow_id = ${escrowId} and t.type = 'escrow_refund'
     order by t.created_at`;

/** The refunds the fake was asked for, of this charge. */
const providerRefundsOf = async (chargeReference: string) =>
  (await paystack.refunds()).filter((r) => r.reference === chargeReference);

/** Waits until `check` holds (work that follows the answer, e.g. a webhook's refund). */
async function eventually(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A funded merchant escrow between a buyer and a seller with accounts (both tier 3). */
async function fundedMerchantEscrow(m?: Merchant, amount = 50_000) {
  const mm = m ?? await merchant();
  const [buyer, seller] = await Promise.all([signUp({ tier: 3 }), signUp({ tier: 3 })]);
  const { escrow } = await created(mm, { amount, buyer_phone: buyer.phone, seller_phone: seller.phone });
  await pay(escrow.id);
  expect(await statusOf(escrow.id)).toBe('funded');
  const charge = await checkoutOf(escrow.id);
  const total = Math.round(escrow.fee_breakdown.total_charge * 100);
  return { m: mm, escrow, buyer, seller, charge, total };
}

/** The job run `ms` from now (the answer's data). */
const jobsIn = async (ms: number) => expectOk(await runJobs(new Date(Date.now() + ms).toISOString()));

const refund = (payee: TestUser, escrowId: string) =>
  post('escrow-refund', { escrow_id: escrowId }, { token: payee.accessToken });

// ---- escrow-refund -------------------------------------------------------------------------

describe('escrow-refund', () => {
  it("sends one refund of the total charge by the charge's reference and credits no wallet", async () => {
    const { escrow, buyer, seller, charge, total } = await fundedMerchantEscrow();
    const before = await walletKobo(buyer.id);
    const answer = expectOk(await refund(seller, escrow.id));
    expect(answer.status).toBe('refunded');
    expect(await holdKobo(escrow.id)).toBe(0);
    expect(await walletKobo(buyer.id)).toBe(before);
    // one pending refund of the buyer, naming the charge and the channel it goes back to
    const [r, ...more] = await refundsOf(escrow.id);
    expect(more).toEqual([]);
    expect(r).toMatchObject({
      user_id: buyer.id,
      amount: String(total),
      status: 'pending',
      provider: 'paystack',
      charge_reference: charge,
      channel: 'card',
      attempted: true,
      transfers: 1,
    });
    // the provider was asked once, for the whole charge, by its reference
    const asked = (await paystack.requests('/refund')).filter((q) => q.body?.transaction === charge);
    expect(asked.map((q) => q.body.amount)).toEqual([total]);
    expect(await providerRefundsOf(charge)).toMatchObject([{ amount: total, status: 'pending' }]);
    await expectLedgerInvariants();
  });

  it('refund.processed settles it once; a duplicate changes nothing; a tampered signature is refused', async () => {
    const { escrow, seller, charge, total } = await fundedMerchantEscrow();
    expectOk(await refund(seller, escrow.id));
    // a forged event is refused before anything is read
    const forged = await paystack.refundOutcome(charge, 'refund.processed', { signature: 'deadbeef'.repeat(16) });
    expect(forged.responses.map((x) => x.status)).toEqual([401]);
    expect((await refundsOf(escrow.id))[0]!.status).toBe('pending');
    // the real one, delivered three times at once: succeeded once
    const d = await paystack.refundOutcome(charge, 'refund.processed', { times: 3, concurrent: true });
    expect(d.responses.map((x) => x.status)).toEqual([200, 200, 200]);
    const [r] = await refundsOf(escrow.id);
    expect(r).toMatchObject({ status: 'succeeded', amount: String(total), transfers: 1 });
    const outcomes = await testDb()<{ outcome: string }[]>`
      select outcome from private.webhook_inbox where provider = 'payments' and event_key = ${`refund.processed:${charge}`}`;
    expect(outcomes).toEqual([{ outcome: 'refund.processed:succeeded' }]);
    // a later failure of the same refund changes nothing either
    await paystack.refundOutcome(charge, 'refund.failed');
    expect((await refundsOf(escrow.id))[0]!.status).toBe('succeeded');
    await expectLedgerInvariants();
  });

  it('refund.processed of another amount settles nothing and is flagged', async () => {
    const { escrow, seller, charge, total } = await fundedMerchantEscrow();
    expectOk(await refund(seller, escrow.id));
    await paystack.refundOutcome(charge, 'refund.processed', { amount: total - 100 });
    const [r] = await refundsOf(escrow.id);
    expect(r).toMatchObject({ status: 'pending', review: 'refund_amount_mismatch' });
    const flags = await testDb()<{ reason: string }[]>`
      select reason from private.payment_flags where transaction_id = ${r!.id}`;
    expect(flags).toEqual([{ reason: 'refund_amount_mismatch' }]);
  });

  it('refund.failed fails it and holds it for review: the money stays booked, no wallet is credited', async () => {
    const { escrow, buyer, seller, charge } = await fundedMerchantEscrow();
    const before = await walletKobo(buyer.id);
    expectOk(await refund(seller, escrow.id));
    await paystack.refundOutcome(charge, 'refund.pending');
    expect((await refundsOf(escrow.id))[0]!.status).toBe('pending');
    await paystack.refundOutcome(charge, 'refund.failed');
    const [r] = await refundsOf(escrow.id);
    expect(r).toMatchObject({ status: 'failed', review: 'refund_failed', transfers: 1 });
    expect(await walletKobo(buyer.id)).toBe(before);
    expect(await holdKobo(escrow.id)).toBe(0);
    const flags = await testDb()<{ reason: string }[]>`
      select reason from private.payment_flags where transaction_id = ${r!.id}`;
    expect(flags).toEqual([{ reason: 'refund_failed' }]);
    // never sent again
    expect(await providerRefundsOf(charge)).toHaveLength(1);
    await expectLedgerInvariants();
  });

  it('a refund the provider refuses is failed and held for review, not sent again', async () => {
    const { escrow, seller, charge } = await fundedMerchantEscrow();
    await paystack.fail({ path: '/refund', field: 'transaction', value: charge }, 'refuse');
    expectOk(await refund(seller, escrow.id));
    const [r] = await refundsOf(escrow.id);
    expect(r).toMatchObject({ status: 'failed', review: 'refund_failed', attempted: true });
    await expectLedgerInvariants();
  });

  it("an app escrow still refunds to the payer's wallet, with no provider call", async () => {
    const deal = await fundedDeal({ amount: 10_000 });
    const before = await walletKobo(deal.payer.id);
    expectOk(await post('escrow-refund', { escrow_id: deal.escrowId }, { token: deal.payee.accessToken }));
    expect(await walletKobo(deal.payer.id)).toBe(before + Math.round(deal.feeBreakdown.total_charge * 100));
    const rows = await testDb()<{ status: string; provider: string; has_charge: boolean }[]>`
      select status::text, provider, metadata ? 'charge_reference' as has_charge from public.transactions
       where escrow_id = ${deal.escrowId} and type = 'escrow_refund'`;
    expect(rows).toEqual([{ status: 'succeeded', provider: 'wallet', has_charge: false }]);
    await expectLedgerInvariants();
  });
});

// ---- escrow-fund ---------------------------------------------------------------------------

describe('escrow-fund', () => {
  it("refuses a merchant escrow (409 merchant_escrow_checkout_only): it is paid through the merchant's checkout", async () => {
    const m = await merchant();
    const buyer = await signUp({ tier: 3 });
    const { escrow } = await created(m, { amount: 5_000, buyer_phone: buyer.phone });
    // a wallet that could pay it: only the refusal keeps the wallet's money out of it
    await fundWallet(buyer, 6_000);
    const before = await walletKobo(buyer.id);
    for (const method of ['wallet', 'card', 'bank_transfer'] as const) {
      const res = await post('escrow-fund', { escrow_id: escrow.id, method }, { token: buyer.accessToken });
      expectError(res, 409);
      expect(res.body).toMatchObject({ code: 'merchant_escrow_checkout_only' });
    }
    expect(await statusOf(escrow.id)).toBe('draft');
    expect(await walletKobo(buyer.id)).toBe(before);
  });
});

// ---- disputes ------------------------------------------------------------------------------

async function disputedMerchantEscrow() {
  const f = await fundedMerchantEscrow();
  expectOk(
    await post('dispute-raise', {
      escrow_id: f.escrow.id,
      reason_code: 'item_not_received',
      reason: 'Nothing arrived after two weeks',
    }, { token: f.buyer.accessToken }),
    201,
  );
  return f;
}

describe('dispute-respond', () => {
  it("a dispute settled by refund sends the whole charge back through the provider, not to the buyer's wallet", async () => {
    const { escrow, buyer, seller, charge, total } = await disputedMerchantEscrow();
    const before = await walletKobo(buyer.id);
    const d = expectOk(
      await post('dispute-propose', { escrow_id: escrow.id, outcome: 'refund' }, { token: seller.accessToken }),
      201,
    );
    expectOk(
      await post('dispute-respond', { escrow_id: escrow.id, proposal_id: d.proposals[0].id, accept: true }, {
        token: buyer.accessToken,
      }),
    );
    expect(await statusOf(escrow.id)).toBe('refunded');
    expect(await walletKobo(buyer.id)).toBe(before);
    expect(await refundsOf(escrow.id)).toMatchObject([{ amount: String(total), status: 'pending', attempted: true }]);
    expect(await providerRefundsOf(charge)).toMatchObject([{ amount: total }]);
    await paystack.refundOutcome(charge, 'refund.processed');
    expect((await refundsOf(escrow.id))[0]!.status).toBe('succeeded');
    await expectLedgerInvariants();
  });

  it("a split's refund part goes back through the provider; the seller's part is released as before", async () => {
    const { escrow, buyer, seller, charge } = await disputedMerchantEscrow();
    const before = await walletKobo(buyer.id);
    const d = expectOk(
      await post('dispute-propose', { escrow_id: escrow.id, outcome: 'split', payee_amount: 30_000 }, {
        token: buyer.accessToken,
      }),
      201,
    );
    expectOk(
      await post('dispute-respond', { escrow_id: escrow.id, proposal_id: d.proposals[0].id, accept: true }, {
        token: seller.accessToken,
      }),
    );
    expect(await statusOf(escrow.id)).toBe('released');
    expect(await holdKobo(escrow.id)).toBe(0);
    expect(await walletKobo(buyer.id)).toBe(before);
    const [r, ...more] = await refundsOf(escrow.id);
    expect(more).toEqual([]);
    // R - P = 20,000 naira with the payer fee and VAT on it
    const [part] = await testDb()<{ refunded_amount: string; payer_fee: string; vat: string }[]>`
      select metadata ->> 'refunded_amount' as refunded_amount, metadata ->> 'payer_fee' as payer_fee,
             metadata ->> 'vat' as vat from public.transactions where id = ${r!.id}`;
    expect(Number(part!.refunded_amount)).toBe(20_000_00);
    expect(Number(r!.amount)).toBe(20_000_00 + Number(part!.payer_fee) + Number(part!.vat));
    expect(await providerRefundsOf(charge)).toMatchObject([{ amount: Number(r!.amount) }]);
    await expectLedgerInvariants();
  });
});

describe('admin-dispute-resolve', () => {
  it("an operator's refund goes back through the provider", async () => {
    const { escrow, charge, total } = await disputedMerchantEscrow();
    const admin = await newOperator(['disputes']);
    const [dispute] = await testDb()<{ id: string }[]>`select id from public.disputes where escrow_id = ${escrow.id}`;
    expectOk(
      await post('admin-dispute-resolve', {
        dispute_id: dispute!.id,
        outcome: 'refund',
        resolution: 'The seller never shipped',
      }, { token: admin.accessToken }),
    );
    expect(await providerRefundsOf(charge)).toMatchObject([{ amount: total }]);
    await expectLedgerInvariants();
  });
});

// ---- a payment after cancel or expiry ------------------------------------------------------

describe('webhook-payments', () => {
  it('a payment after merchant-escrow-cancel is refunded whole, with nothing posted and no wallet credited', async () => {
    const m = await merchant();
    const buyer = await signUp({ tier: 3 });
    const { escrow } = await created(m, { buyer_phone: buyer.phone });
    const charge = await checkoutOf(escrow.id);
    expectOk(await post('merchant-escrow-cancel', { escrow_id: escrow.id }, { token: m.key }));
    await pay(escrow.id);
    const total = Math.round(escrow.fee_breakdown.total_charge * 100);
    await eventually(async () => (await providerRefundsOf(charge)).length > 0, 'the late charge refund');
    expect(await providerRefundsOf(charge)).toMatchObject([{ amount: total }]);
    expect(await statusOf(escrow.id)).toBe('cancelled');
    expect(await walletKobo(buyer.id)).toBe(0);
    const [r] = await refundsOf(escrow.id);
    // never entered a hold: the refund has no ledger transfer
    expect(r).toMatchObject({ amount: String(total), status: 'pending', charge_reference: charge, transfers: 0 });
    // a redelivered charge.success refunds nothing more
    await pay(escrow.id);
    await paystack.refundOutcome(charge, 'refund.processed');
    expect((await refundsOf(escrow.id)).map((x) => x.status)).toEqual(['succeeded']);
    expect(await providerRefundsOf(charge)).toHaveLength(1);
    await expectLedgerInvariants();
  });
});

describe('jobs-run', () => {
  it('a payment after the expiry (the job with an explicit now) is refunded whole', async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    const charge = await checkoutOf(escrow.id);
    await jobsIn(73 * 3600_000);
    expect(await statusOf(escrow.id)).toBe('cancelled');
    await pay(escrow.id);
    await eventually(async () => (await providerRefundsOf(charge)).length > 0, 'the late charge refund');
    expect(await refundsOf(escrow.id)).toMatchObject([{ status: 'pending', attempted: true, transfers: 0 }]);
    await expectLedgerInvariants();
  });

  it('picks up a refund committed but never sent (a crash between the commit and the call), once', async () => {
    const { escrow, seller, charge, total } = await fundedMerchantEscrow();
    // the crash: the refund is committed, and the provider call never happens
    await testDb()`select private.escrow_refund(${escrow.id}, ${seller.id})`;
    expect(await refundsOf(escrow.id)).toMatchObject([{ status: 'pending', attempted: false }]);
    expect(await providerRefundsOf(charge)).toEqual([]);
    const run = await jobsIn(2 * 60_000);
    expect(run.refunds_started).toBeGreaterThanOrEqual(1);
    expect(await providerRefundsOf(charge)).toMatchObject([{ amount: total }]);
    expect(await refundsOf(escrow.id)).toMatchObject([{ attempted: true }]);
    await jobsIn(3 * 60_000);
    expect(await providerRefundsOf(charge)).toHaveLength(1);
  });

  it('sends again a refund the provider never received, then holds it for an operator', async () => {
    const { escrow, seller, charge } = await fundedMerchantEscrow();
    await paystack.fail({ path: '/refund', field: 'transaction', value: charge }, 'unavailable');
    expectOk(await refund(seller, escrow.id));
    expect(await refundsOf(escrow.id)).toMatchObject([{ status: 'pending', attempted: true }]);
    const posts = async () =>
      (await paystack.requests('/refund')).filter((q) => q.method === 'POST' && q.body?.transaction === charge).length;
    expect(await posts()).toBe(1);
    // too early to ask the provider: nothing is sent again
    await jobsIn(5 * 60_000);
    expect(await posts()).toBe(1);
    // each lookup a quarter of an hour on finds no refund of the charge: the request never arrived,
    // so it is sent again, REFUND_MAX_RESENDS times at most; then an operator is asked
    for (let i = 1; i <= REFUND_MAX_RESENDS + 2; i++) await jobsIn(i * 20 * 60_000);
    expect(await posts()).toBe(1 + REFUND_MAX_RESENDS);
    expect(await refundsOf(escrow.id)).toMatchObject([{ status: 'pending', review: 'refund_not_at_provider' }]);
    // a lookup names the charge by the provider's id for it (or our reference when it has none)
    const [row] = await testDb()<{ charge_id: string }[]>`
      select coalesce(provider_charge_id, id::text) as charge_id from public.transactions where id = ${charge}`;
    const lookups = async () =>
      (await paystack.requests('/refund')).filter((q) => q.method === 'GET' && q.query.transaction === row?.charge_id)
        .length;
    expect(await lookups()).toBe(REFUND_MAX_RESENDS + 1);
    const before = await lookups();
    await jobsIn(10 * 20 * 60_000);
    expect(await posts()).toBe(1 + REFUND_MAX_RESENDS);
    expect(await lookups()).toBe(before);
    await expectLedgerInvariants();
  });

  it('sends again a refund lost on the way, once, and the resent one settles it', async () => {
    const { escrow, seller, charge, total } = await fundedMerchantEscrow();
    await paystack.outage('unavailable', 5);
    expectOk(await refund(seller, escrow.id));
    await paystack.outage('none');
    expect(await providerRefundsOf(charge)).toEqual([]);
    await jobsIn(20 * 60_000); // the lookup: none, so it goes out again
    await jobsIn(21 * 60_000);
    expect(await providerRefundsOf(charge)).toMatchObject([{ amount: total }]);
    expect((await paystack.refundOutcome(charge, 'refund.processed')).responses[0]?.status).toBe(200);
    expect(await refundsOf(escrow.id)).toMatchObject([{ status: 'succeeded' }]);
    await jobsIn(60 * 60_000);
    expect(await providerRefundsOf(charge)).toHaveLength(1);
  });

  it('settles a refund whose webhooks never came by looking it up at the provider', async () => {
    const { escrow, seller, charge } = await fundedMerchantEscrow();
    expectOk(await refund(seller, escrow.id));
    // the provider processed it, and its webhook was lost
    await paystack.refundStatus(charge, 'processed');
    await jobsIn(5 * 60_000);
    expect((await refundsOf(escrow.id))[0]!.status).toBe('pending'); // too early to ask
    const run = await jobsIn(20 * 60_000);
    expect(run.refunds_checked).toBeGreaterThanOrEqual(1);
    expect((await refundsOf(escrow.id))[0]!.status).toBe('succeeded');
    const lookups = (await paystack.requests('/refund')).filter((q) => q.method === 'GET');
    expect(lookups.length).toBeGreaterThanOrEqual(1);
    expect(await providerRefundsOf(charge)).toHaveLength(1);
    await expectLedgerInvariants();
  });
});

// ---- races ---------------------------------------------------------------------------------

describe('escrow-release', () => {
  it('20-way races of refund, release, dispute and a late payment keep the ledger and send at most one refund per escrow', async () => {
    const m = await merchant();
    const escrows = await Promise.all(Array.from({ length: 4 }, () => fundedMerchantEscrow(m, 20_000)));
    await Promise.all(escrows.map(async (f) => {
      const calls = Array.from({ length: 20 }, (_, i) => {
        switch (i % 4) {
          case 0:
            return refund(f.seller, f.escrow.id);
          case 1:
            return post('escrow-release', { escrow_id: f.escrow.id }, { token: f.buyer.accessToken });
          case 2:
            return post('dispute-raise', {
              escrow_id: f.escrow.id,
              reason_code: 'item_not_received',
              reason: 'Nothing arrived after two weeks',
            }, { token: f.buyer.accessToken });
          default:
            return paystack.chargeSuccess(f.charge);
        }
      });
      const answers = await Promise.all(calls);
      for (const a of answers) expect((a as { status?: number }).status ?? 200).toBeLessThan(500);
    }));
    for (const f of escrows) {
      const rows = await refundsOf(f.escrow.id);
      expect(rows.length).toBeLessThanOrEqual(1);
      expect((await providerRefundsOf(f.charge)).length).toBe(rows.length);
      const status = await statusOf(f.escrow.id);
      expect(rows.length === 1).toBe(status === 'refunded');
    }
    await expectLedgerInvariants();
  });
});

describe('merchant-escrow-cancel', () => {
  it('20-way races of cancel and a late payment: funded with no refund, or cancelled with exactly one', async () => {
    const m = await merchant();
    const drafts = await Promise.all(Array.from({ length: 4 }, () => created(m, { amount: 20_000 })));
    await Promise.all(drafts.map(async ({ escrow }) => {
      const charge = await checkoutOf(escrow.id);
      await Promise.all(
        Array.from(
          { length: 20 },
          (_, i) =>
            i % 2 === 0
              ? post('merchant-escrow-cancel', { escrow_id: escrow.id }, { token: m.key })
              : paystack.chargeSuccess(charge),
        ),
      );
    }));
    for (const { escrow } of drafts) {
      const charge = await checkoutOf(escrow.id);
      const status = await statusOf(escrow.id);
      expect(['funded', 'cancelled']).toContain(status);
      if (status === 'cancelled') {
        await eventually(async () => (await providerRefundsOf(charge)).length > 0, 'the late charge refund');
      }
      expect((await refundsOf(escrow.id)).length).toBe(status === 'cancelled' ? 1 : 0);
      expect((await providerRefundsOf(charge)).length).toBe(status === 'cancelled' ? 1 : 0);
    }
    await expectLedgerInvariants();
  });
});
