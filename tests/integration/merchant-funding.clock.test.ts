// Funding a merchant escrow (docs/merchants.md#funding-through-the-checkout) through the real
// server, the Paystack fake and the job: merchant-escrow-create's checkout_url (the hosted checkout
// with card, bank transfer and USSD, within the merchant owner's limits), the buyer's charge.success
// moving the escrow draft -> funded (once), the expiry of unfunded escrows by the job, a payment
// that arrives after a cancel or an expiry (recorded, never credited to a wallet), and
// merchant-escrow-deliver with tracking.
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb } from '../../shared/core/db.ts';
import { expectError, expectOk, get, post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { runJobs } from '../support/clock.ts';
import { holdKobo, walletKobo } from '../support/ledger.ts';
import { paystack } from '../support/paystack.ts';
import {
  checkoutOf,
  createMerchantEscrow as create,
  type Merchant,
  merchantEscrowBody as body,
  newMerchant as merchant,
  newMerchantEscrow as created,
  payCheckout as pay,
} from '../support/merchants.ts';
import { signUp } from '../support/users.ts';

afterAll(() => closeDb());

// ---- helpers -------------------------------------------------------------------------------

const statusOf = async (escrowId: string) =>
  (await testDb()<{ status: string }[]>`select status from public.escrows where id = ${escrowId}`)[0]!.status;

/** The buyer's user id (the merchant reads its parties under ids of its own). */
const buyerOf = async (escrowId: string) =>
  (await testDb()<{ id: string }[]>`select initiator_id as id from public.escrows where id = ${escrowId}`)[0]!.id;

const deliver = (m: Merchant, b: Record<string, unknown>) => post('merchant-escrow-deliver', b, { token: m.key });

// ---- merchant-escrow-create -------------------------------------------------------------------

describe('merchant-escrow-create', () => {
  it("answers the provider's checkout for the total charge, with card, bank transfer and USSD", async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    expect(escrow.checkout_url).toMatch(/^https:\/\/checkout\.paystack\.test\//);
    expect(escrow.tracking).toBeNull();
    const reference = await checkoutOf(escrow.id);
    const charge = (await paystack.charges()).find((c) => c.reference === reference);
    expect(charge).toMatchObject({
      amount: Math.round(escrow.fee_breakdown.total_charge * 100),
      status: null,
      channels: ['card', 'bank_transfer', 'ussd'],
    });
    // the buyer's pending charge, counted in the owner's day and not in the buyer's
    const [tx] = await testDb()<{ user_id: string; status: string; kind: string; limit_user: string }[]>`
      select user_id, status::text, metadata->>'kind' as kind, metadata->>'limit_user' as limit_user
        from public.transactions where id = ${reference}`;
    expect(tx).toEqual({
      user_id: await buyerOf(escrow.id),
      status: 'pending',
      kind: 'escrow_charge',
      limit_user: m.owner.id,
    });
    const [used] = await testDb()<{ owner: string; buyer: string }[]>`
      select private.kyc_used_today(${m.owner.id}, now())::text as owner,
             private.kyc_used_today(${await buyerOf(escrow.id)}, now())::text as buyer`;
    expect(used).toEqual({ owner: String(charge!.amount), buyer: '0' });
  });

  it('answers the same checkout again on a replay, without a second charge', async () => {
    const m = await merchant();
    const { body: b, escrow } = await created(m);
    const again = expectOk(await create(m, b), 200);
    expect(again.checkout_url).toBe(escrow.checkout_url);
    const reference = await checkoutOf(escrow.id);
    const initialized = (await paystack.requests('/transaction/initialize'))
      .filter((r) => r.body?.metadata?.escrow_id === escrow.id);
    expect(initialized.map((r) => r.body.reference)).toEqual([reference]);
  });

  it('starts the checkout under an Idempotency-Key too, and a repeat with the key answers the same page', async () => {
    const m = await merchant();
    const b = body();
    const headers = { 'Idempotency-Key': `checkout-${b.reference}` };
    const first = expectOk(await post('merchant-escrow-create', b, { token: m.key, headers }), 201);
    expect(first.checkout_url).toMatch(/^https:\/\//);
    const again = await post('merchant-escrow-create', b, { token: m.key, headers });
    expect(again.body.data.checkout_url).toBe(first.checkout_url);
  });

  it("refuses a charge over the owner's single limit (403), and creates nothing", async () => {
    const m = await merchant();
    const b = body({ amount: 60_000_000 }); // tier 4's single limit is 50,000,000 naira
    expectError(await create(m, b), 403, 'kyc_limit_exceeded');
    expectError(await get('merchant-escrow-get', { token: m.key, query: { reference: b.reference } }), 404);
  });

  it('is 402 charge_refused when the provider refuses to start the checkout; the draft stays, without a checkout', async () => {
    const m = await merchant();
    // a buyer with an account: the charge is asked for with their customer email
    const buyer = await signUp();
    await paystack.fail(
      { path: '/transaction/initialize', field: 'email', value: `${buyer.id}@customers.escrow.ng` },
      'refuse',
    );
    const b = body({ buyer_phone: buyer.phone });
    expectError(await create(m, b), 402, 'charge_refused');
    // the escrow was committed before the provider was asked (the provider mode): it stays a draft
    // with no checkout, which the job expires if nothing else happens
    const read = await get('merchant-escrow-get', { token: m.key, query: { reference: b.reference } });
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ status: 'draft', checkout_url: null });
  });

  it('starts a new checkout on a replay after the provider could not start one', async () => {
    const m = await merchant();
    const b = body();
    await paystack.outage('unavailable', 3);
    const first = await create(m, b);
    await paystack.outage('none');
    expectError(first, 503, 'provider_unavailable');
    const draft = await get('merchant-escrow-get', { token: m.key, query: { reference: b.reference } });
    expect(draft.body.data).toMatchObject({ status: 'draft', checkout_url: null });
    const failedCharge = await checkoutOf(draft.body.data.id);
    // the same request again: the same escrow, with a new charge and its page
    const replay = expectOk(await create(m, b), 200);
    expect(replay).toMatchObject({ id: draft.body.data.id, status: 'draft' });
    expect(replay.checkout_url).toMatch(/^https:\/\/checkout\.paystack\.test\//);
    const charge = await checkoutOf(replay.id);
    expect(charge).not.toBe(failedCharge);
    const [old] = await testDb()<
      { status: string }[]
    >`select status::text from public.transactions where id = ${failedCharge}`;
    expect(old?.status).toBe('failed');
    // and paying it funds the escrow
    await pay(replay.id);
    expect(await statusOf(replay.id)).toBe('funded');
  });

  it("counts each checkout in the owner's daily sum", async () => {
    const m = await merchant();
    await created(m, { amount: 30_000_000 });
    // 30 + 30 million is over tier 4's daily 50 million, though each is within the single limit
    const res = await create(m, body({ amount: 30_000_000 }));
    expectError(res, 403, 'kyc_limit_exceeded');
    expect(res.body.error).toMatch(/daily limit/);
  });
});

// ---- funding by the payments webhook ----------------------------------------------------------

describe('webhook-payments', () => {
  it("funds the escrow draft -> funded on the buyer's charge.success, once", async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    const totalKobo = Math.round(escrow.fee_breakdown.total_charge * 100);
    await pay(escrow.id);
    const funded = expectOk(await get('merchant-escrow-get', { token: m.key, query: { escrow_id: escrow.id } }));
    expect(funded.status).toBe('funded');
    expect(funded.checkout_url).toBeNull();
    expect(await holdKobo(escrow.id)).toBe(totalKobo);
    // the merchant hears escrow.funded
    const types = await testDb()<{ type: string | null }[]>`
      select private.webhook_event_type(e.kind, e.data) as type from private.events e
        join private.event_recipients r on r.event_id = e.id
       where e.escrow_id = ${escrow.id} and r.user_id = ${m.id} order by e.id`;
    expect(types.map((t) => t.type)).toEqual(['escrow.created', 'escrow.funded']);

    // the same charge again, as a new event (another id): nothing changes
    const reference = await checkoutOf(escrow.id);
    const d = await paystack.deliver('charge.success', {
      id: 987_654_321,
      status: 'success',
      reference,
      amount: totalKobo,
      currency: 'NGN',
      channel: 'card',
      metadata: { kind: 'escrow_charge', transaction_id: reference, escrow_id: escrow.id },
    });
    expect(d.responses[0]?.status).toBe(200);
    expect(await statusOf(escrow.id)).toBe('funded');
    expect(await holdKobo(escrow.id)).toBe(totalKobo);
    expect(await walletKobo(await buyerOf(escrow.id))).toBe(0);
    await expectLedgerInvariants();
  });
});

// ---- expiry ---------------------------------------------------------------------------------

describe('jobs-run', () => {
  it('cancels a merchant escrow still unfunded 72 hours after its creation, not before', async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    const at = (hours: number) => new Date(Date.parse(escrow.created_at) + hours * 3_600_000).toISOString();
    expectOk(await runJobs(at(71.9)));
    expect(await statusOf(escrow.id)).toBe('draft');
    // (created_at as answered is to the millisecond: a second on, 72 hours have surely passed)
    const run = expectOk(await runJobs(at(72 + 1 / 3600)));
    expect(run.merchant_escrows_expired).toBeGreaterThanOrEqual(1);
    expect(await statusOf(escrow.id)).toBe('cancelled');
    const [tx] = await testDb()<{ status: string }[]>`
      select status::text from public.transactions where id = ${await checkoutOf(escrow.id)}`;
    expect(tx?.status).toBe('canceled');
  });

  it('keeps the checkout open until the expiry: reconciliation does not abandon it after a day', async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    expectOk(await runJobs(new Date(Date.parse(escrow.created_at) + 30 * 3_600_000).toISOString()));
    const [tx] = await testDb()<{ status: string }[]>`
      select status::text from public.transactions where id = ${await checkoutOf(escrow.id)}`;
    expect(tx?.status).toBe('pending');
    await pay(escrow.id);
    expect(await statusOf(escrow.id)).toBe('funded');
  });

  it('leaves a funded merchant escrow alone', async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    await pay(escrow.id);
    expectOk(await runJobs(new Date(Date.parse(escrow.created_at) + 100 * 3_600_000).toISOString()));
    expect(await statusOf(escrow.id)).toBe('funded');
  });

  it('records a payment that arrives after the expiry, leaves the escrow cancelled and credits no wallet', async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    expectOk(await runJobs(new Date(Date.parse(escrow.created_at) + 73 * 3_600_000).toISOString()));
    await pay(escrow.id);
    expect(await statusOf(escrow.id)).toBe('cancelled');
    expect(await walletKobo(await buyerOf(escrow.id))).toBe(0);
    expect(await holdKobo(escrow.id)).toBe(0);
    const [tx] = await testDb()<{ status: string; refund_due: boolean }[]>`
      select status::text, (metadata ? 'refund_due') as refund_due from public.transactions
       where id = ${await checkoutOf(escrow.id)}`;
    expect(tx).toEqual({ status: 'failed', refund_due: true });
    await expectLedgerInvariants();
  });
});

describe('merchant-escrow-cancel', () => {
  it('a payment after the cancel leaves the escrow cancelled and credits no wallet', async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    expectOk(await post('merchant-escrow-cancel', { escrow_id: escrow.id }, { token: m.key }));
    await pay(escrow.id);
    expect(await statusOf(escrow.id)).toBe('cancelled');
    expect(await walletKobo(await buyerOf(escrow.id))).toBe(0);
    const got = expectOk(await get('merchant-escrow-get', { token: m.key, query: { escrow_id: escrow.id } }));
    expect(got.checkout_url).toBeNull();
    await expectLedgerInvariants();
  });
});

// ---- merchant-escrow-deliver ----------------------------------------------------------------

describe('merchant-escrow-deliver', () => {
  it("records the delivery with its tracking and starts the category's inspection", async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    await pay(escrow.id);
    const tracking = { carrier: 'GIG Logistics', number: 'GIG-123456', url: 'https://track.example.com/GIG-123456' };
    const delivered = expectOk(await deliver(m, { escrow_id: escrow.id, tracking }));
    expect(delivered.status).toBe('inspection');
    expect(delivered.tracking).toEqual(tracking);
    expect(delivered.delivered_at).not.toBeNull();
    // goods_products: a day of inspection
    expect(Date.parse(delivered.inspection_ends_at) - Date.parse(delivered.delivered_at)).toBe(86_400_000);
    const got = expectOk(await get('merchant-escrow-get', { token: m.key, query: { escrow_id: escrow.id } }));
    expect(got.tracking).toEqual(tracking);
    // a second delivery is refused
    expectError(await deliver(m, { escrow_id: escrow.id }), 409, 'escrow_wrong_state');
  });

  it('records a delivery without tracking', async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    await pay(escrow.id);
    const delivered = expectOk(await deliver(m, { escrow_id: escrow.id }));
    expect(delivered).toMatchObject({ status: 'inspection', tracking: null });
  });

  it('refuses an escrow that is not funded (409)', async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    expectError(await deliver(m, { escrow_id: escrow.id }), 409, 'escrow_wrong_state');
    expect(await statusOf(escrow.id)).toBe('draft');
  });

  it("answers another merchant's escrow 404, and changes nothing", async () => {
    const m = await merchant();
    const other = await merchant('Bola Cars');
    const { escrow } = await created(m);
    await pay(escrow.id);
    expectError(await deliver(other, { escrow_id: escrow.id }), 404, 'escrow_not_found');
    expect(await statusOf(escrow.id)).toBe('funded');
  });

  it('refuses malformed tracking (400)', async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    expectError(await deliver(m, { escrow_id: escrow.id, tracking: { carrier: 'GIG' } }), 400);
    expectError(
      await deliver(m, { escrow_id: escrow.id, tracking: { carrier: 'GIG', number: '1', url: 'http://x.test/' } }),
      400,
    );
  });
});
