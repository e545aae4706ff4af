// escrow-fund by card, saved card and bank transfer, through the real server and the Paystack
// fake: the charge carries our funding transaction id as its reference, the webhooks complete it
// exactly once, the expected money that can no longer fund the escrow lands in the payer's wallet,
// a wrong amount credits nothing (flagged, held for review), and transfers into the virtual
// account fund the escrow once they cover it. Tier 0 moves no money (the identity floor,
// tests/integration/kyc-floor.test.ts), so every payer who funds, and every user who saves a card
// or gets a virtual account, is raised to tier 1 (single limit NGN 50,000, above every total here).
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type ApiResult, fieldsOf, get, post } from '../support/api.ts';
import { smsMatching, testDb } from '../support/db.ts';
import { kobo } from '../support/money.ts';
import { notes } from '../support/notifications.ts';
import { type Deal, escrowOp, escrowStatus, fundWallet, newDeal } from '../support/escrows.ts';
import { balances, holdKobo } from '../support/ledger.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import cardAdd from '../../supabase/functions/card-add/handler.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';
import virtualAccountGet from '../../supabase/functions/virtual-account-get/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const emailOf = (u: TestUser) => `${u.id}@customers.escrow.ng`;

function expectStatus(r: ApiResult, status: number) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ success: status < 400, status });
}

const fund = (deal: Deal, extra: Record<string, unknown>) => escrowOp('escrow-fund', deal.payer, deal.escrowId, extra);

async function txRow(id: string) {
  const [row] = await testDb()<
    {
      status: string;
      type: string;
      user_id: string;
      escrow_id: string;
      amount: string;
      metadata: Record<string, unknown>;
      provider_charge_id: string | null;
    }[]
  >`
    select status::text, type, user_id, escrow_id, amount::text, metadata, provider_charge_id from public.transactions where id = ${id}`;
  return row;
}

const fundingTxs = (escrowId: string) =>
  testDb()<{ id: string; status: string }[]>`
    select id, status::text from public.transactions where escrow_id = ${escrowId} and type = 'escrow_funding' order by created_at`;

const flags = (txId: string) =>
  testDb()<{ reason: string; expected_amount: string | null; received_amount: string | null }[]>`
    select reason, expected_amount::text, received_amount::text from private.payment_flags where transaction_id = ${txId} order by id`;

const depositsOf = (userId: string) =>
  testDb()<{ amount: string; status: string }[]>`
    select amount::text, status::text from public.transactions where user_id = ${userId} and type = 'virtual_account_deposit' order by created_at`;

const smsTo = smsMatching;

/** What webhook-payments kept of a delivered event in its inbox: its outcome, once per delivery key. */
const inboxOutcomes = async (reference: string) =>
  (await testDb()<{ outcome: string }[]>`
    select outcome from private.webhook_inbox where payload -> 'data' ->> 'reference' = ${reference}`)
    .map((r) => r.outcome);

/** Starts a card charge and checks what the fake was asked; returns the reference. */
async function startCardCharge(deal: Deal): Promise<string> {
  const res = await fund(deal, { method: 'card', callback_url: 'https://app.escrow.ng/funded' });
  expectStatus(res, 200);
  const d = res.body.data;
  expect(d).toMatchObject({ escrow_id: deal.escrowId, status: 'pending', amount: deal.feeBreakdown.total_charge });
  expect(d.reference).toBe(d.transaction_id);
  expect(d.authorization_url).toMatch(/^https:\/\//);
  const calls = (await paystack.requests('/transaction/initialize')).filter((r) => r.body?.reference === d.reference);
  expect(calls).toHaveLength(1);
  expect(calls[0]?.body).toMatchObject({ reference: d.reference, email: emailOf(deal.payer) });
  expect(Number(calls[0]?.body.amount)).toBe(kobo(deal.feeBreakdown.total_charge));
  expect(calls[0]?.body.metadata).toMatchObject({
    kind: 'escrow_charge',
    escrow_id: deal.escrowId,
    transaction_id: d.reference,
  });
  const tx = await txRow(d.reference);
  expect(tx).toMatchObject({
    status: 'pending',
    type: 'escrow_funding',
    user_id: deal.payer.id,
    escrow_id: deal.escrowId,
  });
  expect(Number(tx?.amount)).toBe(kobo(deal.feeBreakdown.total_charge));
  return d.reference as string;
}

let cardSeq = 0;
/** Saves a card whose authorization the Paystack fake issued to the user (a card they paid with). */
async function addCard(user: TestUser, authorizationCode: string): Promise<string> {
  await paystack.authorizeUser(user.id, authorizationCode);
  const res = await post(
    cardAdd,
    {
      authorization_code: authorizationCode,
      last4: '4081',
      brand: 'visa',
      exp_month: '12',
      exp_year: '2030',
      bank: 'TEST BANK',
      signature: `SIG_escrow_${Date.now()}_${++cardSeq}_${Math.random().toString(36).slice(2)}`,
    },
    { token: user.accessToken },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id as string;
}

const uniqueCode = (prefix: string) => `${prefix}${Date.now()}${Math.random().toString(36).slice(2, 10)}`;

/** Gives the user an active virtual account; returns its number. */
async function activeVirtualAccount(user: TestUser): Promise<string> {
  const created = await post(virtualAccountCreate, {}, { token: user.accessToken });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const number = `66${String(randomInt(0, 100_000_000)).padStart(8, '0')}`;
  const assigned = await paystack.assignOutcome(emailOf(user), true, { account_number: number });
  expect(assigned.responses[0]?.status).toBe(200);
  const va = await get(virtualAccountGet, { token: user.accessToken });
  expect(va.body.data).toMatchObject({ status: 'active', account_number: number });
  return number;
}

// ---- card ------------------------------------------------------------------------------------

describe('escrow-fund', () => {
  describe('method card', () => {
    it('initializes a charge whose reference is the funding transaction; charge.success funds the escrow', async () => {
      // a total charge above NGN 25,000 in one funding: within tier 1's single limit of NGN 50,000
      const deal = await newDeal({ amount: 25_000, title: 'Card funded', payerTier: 1 });
      const ref = await startCardCharge(deal);
      // nothing moves before the webhook
      expect(await escrowStatus(deal)).toBe('draft');
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: 0 });

      const delivered = await paystack.chargeSuccess(ref);
      expect(delivered.responses).toEqual([{
        status: 200,
        body: { success: true, status: 200, data: { received: true } },
      }]);
      const got = await get(escrowGet, { token: deal.payer.accessToken, query: { escrow_id: deal.escrowId } });
      expect(got.body.data.status).toBe('active');
      expect(got.body.data.funded_at).not.toBeNull();
      const total = kobo(deal.feeBreakdown.total_charge);
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
      expect(await txRow(ref)).toMatchObject({ status: 'succeeded' });
      expect((await txRow(ref))?.provider_charge_id).toEqual(expect.any(String));
      expect(await smsTo(deal.counterparty.phone, '%invited you%already in escrow%')).toBe(1);
      expect(await smsTo(deal.counterparty.phone, '%Card funded%')).toBe(0); // SMS never quote the title

      // the counterparty accepts as usual
      expectStatus(await escrowOp('escrow-accept', deal.counterparty, deal.escrowId), 200);
      expect(await escrowStatus(deal)).toBe('funded');
    });

    it('redelivered and concurrent charge.success have one effect', async () => {
      const [a, b] = await Promise.all([
        newDeal({ title: 'Dup seq', payerTier: 1 }),
        newDeal({ title: 'Dup conc', payerTier: 1 }),
      ]);
      const refA = await startCardCharge(a);
      const refB = await startCardCharge(b);

      const seq = await paystack.chargeSuccess(refA, { times: 3 });
      expect(seq.responses.map((r) => r.status)).toEqual([200, 200, 200]);
      const conc = await paystack.chargeSuccess(refB, { times: 6, concurrent: true });
      expect(conc.responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);

      for (const [deal, ref] of [[a, refA], [b, refB]] as const) {
        expect(await escrowStatus(deal)).toBe('active');
        expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: kobo(deal.feeBreakdown.total_charge) });
        expect(await txRow(ref)).toMatchObject({ status: 'succeeded' });
        expect((await notes(deal.payer, deal.escrowId)).filter((n) => n.event_type === 'funded')).toHaveLength(1);
        expect((await notes(deal.counterparty, deal.escrowId)).filter((n) => n.event_type === 'invite_received'))
          .toHaveLength(1);
        expect(await smsTo(deal.counterparty.phone, '%already in escrow%')).toBe(1);
        expect(await flags(ref)).toEqual([]);
      }
      // a later redelivery still changes nothing
      await paystack.chargeSuccess(refA);
      expect(await balances(a)).toEqual({ payer: 0, payee: 0, hold: kobo(a.feeBreakdown.total_charge) });
    });

    it('charge.success for a different amount, confirmed by Paystack, funds nothing and credits nothing: flagged, pending', async () => {
      for (const delta of [-100, +500]) {
        const deal = await newDeal({ amount: 4_000, payerTier: 1 });
        const ref = await startCardCharge(deal);
        const total = kobo(deal.feeBreakdown.total_charge);
        const received = total + delta;
        await paystack.chargeStatus(ref, 'success', received);
        const d = await paystack.chargeSuccess(ref, { amount: received });
        expect(d.responses[0]?.status).toBe(200);
        expect(await escrowStatus(deal)).toBe('draft');
        expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: 0 });
        const f = await flags(ref);
        expect(f.map((x) => [x.reason, Number(x.expected_amount), Number(x.received_amount)])).toEqual([[
          'amount_mismatch',
          total,
          received,
        ]]);
        const tx = await txRow(ref);
        expect(tx?.status).toBe('pending');
        expect(tx?.metadata.review).toMatchObject({ reason: 'amount_mismatch', provider_status: 'success' });
        expect(await depositsOf(deal.payer.id)).toEqual([]);
        // redelivery: still nothing, one flag
        await paystack.chargeSuccess(ref, { amount: received, times: 2 });
        expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: 0 });
        expect(await flags(ref)).toHaveLength(1);
      }
    });

    it("a charge that arrives after the escrow was cancelled is credited to the payer's wallet", async () => {
      const deal = await newDeal({ amount: 2_000, payerTier: 1 });
      const ref = await startCardCharge(deal);
      expectStatus(await escrowOp('escrow-cancel', deal.initiator, deal.escrowId), 200);
      expect((await txRow(ref))?.status).toBe('canceled');
      const total = kobo(deal.feeBreakdown.total_charge);
      const d = await paystack.chargeSuccess(ref, { times: 2 });
      expect(d.responses.map((r) => r.status)).toEqual([200, 200]);
      expect(await escrowStatus(deal)).toBe('cancelled');
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: 0 });
      // the money is spendable: it can fund something else
      const wallet = await get(walletGet, { token: deal.payer.accessToken });
      expect(wallet.body.data.balance).toBe(deal.feeBreakdown.total_charge);
    });

    it(
      "charge.success racing the payer's cancel: both take effect, in either order, and the money is never lost (8 rounds)",
      { timeout: 120_000 },
      async () => {
        const deals = await Promise.all(Array.from({ length: 8 }, () => newDeal({ amount: 1_000, payerTier: 1 })));
        const refs: string[] = [];
        for (const deal of deals) refs.push(await startCardCharge(deal));
        for (const [i, deal] of deals.entries()) {
          const ref = refs[i]!;
          const [delivery, cancel] = await Promise.all([
            paystack.chargeSuccess(ref),
            escrowOp('escrow-cancel', deal.payer, deal.escrowId),
          ]);
          expect(delivery.responses[0]?.status).toBe(200);
          expectStatus(cancel, 200);
          // cancelled before the money came (credited to the wallet), or funded then cancelled (refunded)
          expect(['cancelled', 'refunded']).toContain(await escrowStatus(deal));
          expect(await balances(deal)).toEqual({ payer: kobo(deal.feeBreakdown.total_charge), payee: 0, hold: 0 });
          const failures = await testDb()<{ error: string }[]>`
        select error from private.webhook_failures where payload -> 'data' ->> 'reference' = ${ref}`;
          expect(failures).toEqual([]);
        }
      },
    );

    it('a card charge for an escrow already funded from the wallet is credited back to the wallet, not locked twice', async () => {
      const deal = await newDeal({ amount: 1_500, payerTier: 1 });
      const ref = await startCardCharge(deal);
      await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
      expectStatus(await fund(deal, { method: 'wallet' }), 200);
      const total = kobo(deal.feeBreakdown.total_charge);
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
      await paystack.chargeSuccess(ref);
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: total });
      expect(await escrowStatus(deal)).toBe('active');
    });

    it('for an accepted escrow the charge pays the payment request, which becomes succeeded', async () => {
      const deal = await newDeal({ payerRole: 'counterparty', amount: 3_000, payerTier: 1 });
      expectStatus(await escrowOp('escrow-accept', deal.counterparty, deal.escrowId), 200);
      const requested = (await notes(deal.payer, deal.escrowId)).find((n) => n.event_type === 'payment_requested');
      expect(requested?.entity_type).toBe('transaction');
      const ref = await startCardCharge(deal);
      await paystack.chargeSuccess(ref);
      expect(await escrowStatus(deal)).toBe('funded');
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: kobo(deal.feeBreakdown.total_charge) });
      expect((await txRow(requested!.entity_id))?.status).toBe('succeeded');
      expect((await fundingTxs(deal.escrowId)).map((t) => t.status)).toEqual(['succeeded']);
    });

    it('only the payer can start a card charge; validation of the body', async () => {
      const [deal, stranger] = await Promise.all([newDeal(), signUp()]);
      expectStatus(await escrowOp('escrow-fund', deal.payee, deal.escrowId, { method: 'card' }), 403);
      expectStatus(await escrowOp('escrow-fund', stranger, deal.escrowId, { method: 'card' }), 404);
      const bad = await fund(deal, { method: 'cash' });
      expectStatus(bad, 400);
      expect(fieldsOf(bad)).toContain('method');
      const cb = await fund(deal, { method: 'wallet', callback_url: 'https://x.test/' });
      expectStatus(cb, 400);
      expect(fieldsOf(cb)).toContain('callback_url');
      expect(await fundingTxs(deal.escrowId)).toEqual([]);
    });
  });

  // ---- saved card --------------------------------------------------------------------------------

  describe('method saved_card', () => {
    it('charges the saved authorization with the funding transaction as reference; charge.success funds it', async () => {
      const deal = await newDeal({ amount: 6_000, payerTier: 1 });
      const code = uniqueCode('AUTH_ok');
      const cardId = await addCard(deal.payer, code);
      const res = await fund(deal, { method: 'saved_card', card_id: cardId });
      expectStatus(res, 200);
      const ref = res.body.data.reference as string;
      expect(res.body.data).toMatchObject({
        escrow_id: deal.escrowId,
        transaction_id: ref,
        status: 'pending',
        authorization_url: null,
      });
      const calls = (await paystack.requests('/transaction/charge_authorization')).filter((r) =>
        r.body?.reference === ref
      );
      expect(calls).toHaveLength(1);
      expect(calls[0]?.body).toMatchObject({ authorization_code: code, email: emailOf(deal.payer) });
      expect(Number(calls[0]?.body.amount)).toBe(kobo(deal.feeBreakdown.total_charge));
      expect(calls[0]?.body.metadata).toMatchObject({ kind: 'escrow_charge', escrow_id: deal.escrowId });
      expect((await paystack.requests('/transaction/initialize')).filter((r) => r.body?.reference === ref)).toEqual([]);

      await paystack.chargeSuccess(ref);
      expect(await escrowStatus(deal)).toBe('active');
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: kobo(deal.feeBreakdown.total_charge) });
    });

    it("a declined card ('AUTH_decline...') is 402: the funding transaction fails and the escrow stays draft", async () => {
      const deal = await newDeal({ amount: 6_000, payerTier: 1 });
      const cardId = await addCard(deal.payer, uniqueCode('AUTH_decline'));
      const res = await fund(deal, { method: 'saved_card', card_id: cardId });
      expectStatus(res, 402);
      expect(res.body.code).toBe('card_declined');
      expect(await escrowStatus(deal)).toBe('draft');
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: 0 });
      expect((await fundingTxs(deal.escrowId)).map((t) => t.status)).toEqual(['failed']);
      // the escrow can still be funded another way
      await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
      expectStatus(await fund(deal, { method: 'wallet' }), 200);
      expect(await holdKobo(deal.escrowId)).toBe(kobo(deal.feeBreakdown.total_charge));
    });

    it('a charge the provider refuses to start is 402 charge_refused: the funding fails, the escrow stays draft', async () => {
      const deal = await newDeal({ amount: 4_000, payerTier: 1 });
      await paystack.fail({ path: '/transaction/initialize', field: 'email', value: emailOf(deal.payer) }, 'refuse');
      const res = await fund(deal, { method: 'card' });
      expectStatus(res, 402);
      expect(res.body.code).toBe('charge_refused');
      expect(await escrowStatus(deal)).toBe('draft');
      expect((await fundingTxs(deal.escrowId)).map((t) => t.status)).toEqual(['failed']);
    });

    it("someone else's card is 404; card_id is required for saved_card and refused for other methods", async () => {
      const [deal, other] = await Promise.all([newDeal({ payerTier: 1 }), signUp({ tier: 1 })]);
      const theirs = await addCard(other, uniqueCode('AUTH_ok'));
      expectStatus(await fund(deal, { method: 'saved_card', card_id: theirs }), 404);
      const missing = await fund(deal, { method: 'saved_card' });
      expectStatus(missing, 400);
      expect(fieldsOf(missing)).toContain('card_id');
      const extra = await fund(deal, { method: 'card', card_id: theirs });
      expectStatus(extra, 400);
      expect(fieldsOf(extra)).toContain('card_id');
      expect(await fundingTxs(deal.escrowId)).toEqual([]);
      expect(
        (await paystack.requests('/transaction/charge_authorization')).filter((r) =>
          r.body?.metadata?.escrow_id === deal.escrowId
        ),
      ).toEqual([]);
    });
  });

  // ---- bank transfer -----------------------------------------------------------------------------

  describe('method bank_transfer', () => {
    it('needs an active virtual account: none, or a pending one, is 409', async () => {
      const deal = await newDeal({ payerTier: 1 });
      expectStatus(await fund(deal, { method: 'bank_transfer' }), 409);
      expect((await post(virtualAccountCreate, {}, { token: deal.payer.accessToken })).status).toBe(200);
      expectStatus(await fund(deal, { method: 'bank_transfer' }), 409);
      const [row] = await testDb()<
        { awaiting: string | null }[]
      >`select awaiting_bank_transfer_at::text as awaiting from public.escrows where id = ${deal.escrowId}`;
      expect(row?.awaiting).toBeNull();
    });

    it('who may ask comes first: a stranger gets 404 and the payee 403, virtual account or not; a funded escrow 409', async () => {
      const [deal, stranger] = await Promise.all([newDeal({ payerTier: 1 }), signUp({ tier: 1 })]);
      expectStatus(await escrowOp('escrow-fund', stranger, deal.escrowId, { method: 'bank_transfer' }), 404);
      expectStatus(await escrowOp('escrow-fund', stranger, crypto.randomUUID(), { method: 'bank_transfer' }), 404);
      expectStatus(await escrowOp('escrow-fund', deal.payee, deal.escrowId, { method: 'bank_transfer' }), 403);
      await activeVirtualAccount(stranger);
      expectStatus(await escrowOp('escrow-fund', stranger, deal.escrowId, { method: 'bank_transfer' }), 404);
      const [row] = await testDb()<
        { awaiting: string | null }[]
      >`select awaiting_bank_transfer_at::text as awaiting from public.escrows where id = ${deal.escrowId}`;
      expect(row?.awaiting).toBeNull();
      await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
      expectStatus(await fund(deal, { method: 'wallet' }), 200);
      await activeVirtualAccount(deal.payer);
      expectStatus(await fund(deal, { method: 'bank_transfer' }), 409);
    });

    it('returns the account and the amount; a deposit of exactly the total funds the escrow (draft -> active)', async () => {
      const deal = await newDeal({ amount: 12_345.67, title: 'By transfer', payerTier: 1 });
      const account = await activeVirtualAccount(deal.payer);
      const res = await fund(deal, { method: 'bank_transfer' });
      expectStatus(res, 200);
      expect(res.body.data).toMatchObject({
        escrow_id: deal.escrowId,
        status: 'awaiting_bank_transfer',
        amount: deal.feeBreakdown.total_charge,
        virtual_account: { account_number: account, bank_name: 'Test Bank' },
      });
      expect(res.body.data.virtual_account.account_name).toEqual(expect.any(String));
      expect(await escrowStatus(deal)).toBe('draft');

      const total = kobo(deal.feeBreakdown.total_charge);
      const d = await paystack.dvaDeposit(account, total);
      expect(d.responses[0]?.status).toBe(200);
      expect(await escrowStatus(deal)).toBe('active');
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
      expect((await depositsOf(deal.payer.id)).map((x) => Number(x.amount))).toEqual([total]);
      expect(await smsTo(deal.counterparty.phone, '%invited you%already in escrow%')).toBe(1);
      expect(await smsTo(deal.counterparty.phone, '%By transfer%')).toBe(0); // SMS never quote the title
      expect(await smsTo(deal.payer.phone, '%We received%')).toBe(0);
    });

    it('a smaller deposit keeps it draft, credits the wallet and tells the payer the shortfall by SMS; the rest funds it', async () => {
      const deal = await newDeal({ amount: 8_000, title: 'Short transfer', payerTier: 1 });
      const account = await activeVirtualAccount(deal.payer);
      expectStatus(await fund(deal, { method: 'bank_transfer' }), 200);
      const total = kobo(deal.feeBreakdown.total_charge);
      const first = total - 300_000;

      const short = await paystack.dvaDeposit(account, first);
      expect(await inboxOutcomes(short.data.reference)).toEqual(['virtual_account_deposit:shortfall']);
      expect(await escrowStatus(deal)).toBe('draft');
      expect(await balances(deal)).toEqual({ payer: first, payee: 0, hold: 0 });
      expect(await smsTo(deal.payer.phone, '%We received%goods escrow%')).toBe(1);
      expect(await smsTo(deal.payer.phone, '%Short transfer%')).toBe(0); // SMS never quote the title
      expect(await smsTo(deal.payer.phone, '%3,000.00 more%')).toBe(1);
      expect((await notes(deal.payer, deal.escrowId)).filter((n) => n.event_type === 'funding_shortfall')).toHaveLength(
        1,
      );
      expect(await smsTo(deal.counterparty.phone, '%Short transfer%')).toBe(0);

      const rest = await paystack.dvaDeposit(account, 300_000);
      expect(await inboxOutcomes(rest.data.reference)).toEqual(['virtual_account_deposit:escrow:active']);
      expect(await escrowStatus(deal)).toBe('active');
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
      expect(await smsTo(deal.payer.phone, '%We received%')).toBe(1);
      expect((await depositsOf(deal.payer.id)).map((x) => Number(x.amount))).toEqual([first, 300_000]);
      expect(await smsTo(deal.counterparty.phone, '%invited you%already in escrow%')).toBe(1);
    });

    it('a redelivered deposit is credited once and funds nothing twice', async () => {
      const deal = await newDeal({ amount: 1_000, payerTier: 1 });
      const account = await activeVirtualAccount(deal.payer);
      expectStatus(await fund(deal, { method: 'bank_transfer' }), 200);
      const total = kobo(deal.feeBreakdown.total_charge);
      const d = await paystack.dvaDeposit(account, total, { times: 3, concurrent: true });
      expect(d.responses.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(await inboxOutcomes(d.data.reference)).toEqual(['virtual_account_deposit:escrow:active']);
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
      expect(await depositsOf(deal.payer.id)).toHaveLength(1);
      expect(await escrowStatus(deal)).toBe('active');
    });

    it('for an accepted escrow (payer_role counterparty) a covering deposit takes it to funded and pays the payment request', async () => {
      const deal = await newDeal({ payerRole: 'counterparty', amount: 2_500, payerTier: 1 });
      expectStatus(await escrowOp('escrow-accept', deal.counterparty, deal.escrowId), 200);
      const account = await activeVirtualAccount(deal.payer);
      expectStatus(await fund(deal, { method: 'bank_transfer' }), 200);
      const total = kobo(deal.feeBreakdown.total_charge);
      const d = await paystack.dvaDeposit(account, total);
      expect(await inboxOutcomes(d.data.reference)).toEqual(['virtual_account_deposit:escrow:funded']);
      expect(await escrowStatus(deal)).toBe('funded');
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: total });
      expect((await fundingTxs(deal.escrowId)).map((t) => t.status)).toEqual(['succeeded']);
    });

    it(
      'a deposit racing a wallet funding of the same escrow: funded once, the deposit credited, nothing lost (6 rounds)',
      { timeout: 120_000 },
      async () => {
        for (let round = 0; round < 6; round++) {
          const deal = await newDeal({ amount: 1_000, payerTier: 1 });
          const account = await activeVirtualAccount(deal.payer);
          expectStatus(await fund(deal, { method: 'bank_transfer' }), 200);
          const total = kobo(deal.feeBreakdown.total_charge);
          await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
          const [deposit, byWallet] = await Promise.all([
            paystack.dvaDeposit(account, total),
            fund(deal, { method: 'wallet' }),
          ]);
          expect(deposit.responses[0]?.status).toBe(200);
          expect([200, 409]).toContain(byWallet.status);
          expect(await escrowStatus(deal)).toBe('active');
          expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: total });
          expect((await depositsOf(deal.payer.id)).map((x) => Number(x.amount))).toEqual([total]);
          const failures = await testDb()<{ error: string }[]>`
        select error from private.webhook_failures where payload -> 'data' ->> 'reference' = ${deposit.data.reference}`;
          expect(failures).toEqual([]);
        }
      },
    );

    it('a deposit with no escrow waiting is just a wallet credit', async () => {
      const deal = await newDeal({ amount: 1_000, payerTier: 1 });
      const account = await activeVirtualAccount(deal.payer);
      await paystack.dvaDeposit(account, kobo(deal.feeBreakdown.total_charge));
      expect(await escrowStatus(deal)).toBe('draft');
      expect(await balances(deal)).toEqual({ payer: kobo(deal.feeBreakdown.total_charge), payee: 0, hold: 0 });
    });

    it('a cancelled escrow no longer waits for the transfer', async () => {
      const deal = await newDeal({ amount: 1_000, payerTier: 1 });
      const account = await activeVirtualAccount(deal.payer);
      expectStatus(await fund(deal, { method: 'bank_transfer' }), 200);
      expectStatus(await escrowOp('escrow-cancel', deal.counterparty, deal.escrowId), 200);
      const total = kobo(deal.feeBreakdown.total_charge);
      await paystack.dvaDeposit(account, total);
      expect(await escrowStatus(deal)).toBe('cancelled');
      expect(await balances(deal)).toEqual({ payer: total, payee: 0, hold: 0 });
    });
  });
});
