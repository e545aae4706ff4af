// The identity floor (docs/compliance.md, docs/kyc.md#the-identity-floor) through the real server:
// at tier 0 (phone only) no money moves in or out: a top-up, an escrow funding by card, bank transfer
// or wallet, a withdrawal, a virtual account and a saved card are each refused with 403 naming tier
// 1, while saving a payout account, creating and accepting escrows and receiving releases still
// work. Money that reaches a tier-0 wallet is credited and held (no payout starts), and the user is
// told once a day which tier lets it out. After a tier-1 pass (kyc-start and Sumsub's signed
// GREEN review from the KYC fake) the same requests succeed. A burst at tier 0 moves nothing.
import { describe, expect, it } from 'vitest';
import { type ApiResult, expectOk, get, post } from '../support/api.ts';
import { expectLedgerInvariants, lastSms, testDb } from '../support/db.ts';
import { escrowOp, escrowStatus, fundedDeal, fundWallet, newDeal } from '../support/escrows.ts';
import { kycFake } from '../support/kyc-fake.ts';
import { walletKobo } from '../support/ledger.ts';
import { paystack } from '../support/paystack.ts';
import { addPayout } from '../support/payouts.ts';
import { signUp, type TestUser } from '../support/users.ts';
import cardAdd from '../../supabase/functions/card-add/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import kycStart from '../../supabase/functions/kyc-start/handler.ts';
import kycStatus from '../../supabase/functions/kyc-status/handler.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';
import virtualAccountGet from '../../supabase/functions/virtual-account-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

/** A 403 of the identity floor: the detail names `field` and the message tier 1. */
function expectTierRequired(r: ApiResult, field: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(403);
  expect(r.body).toMatchObject({ code: 'kyc_tier_required' });
  expect(r.body.error).toMatch(/^An account at tier 0 cannot .+: money moves only once your identity is checked/);
  expect(r.body.error).toContain('tier 1 is required');
  expect(r.body.details).toEqual([
    { field, message: expect.stringContaining('tier 1 is required'), code: 'kyc_tier_required' },
  ]);
}

const topup = (u: TestUser, amount = 5_000) => post(walletTopup, { amount }, { token: u.accessToken });
const withdraw = (u: TestUser, amount = 1_000) => post(walletWithdraw, { amount }, { token: u.accessToken });
/** card-add of an authorization the Paystack fake issued to the user (a card they paid with). */
const addCard = async (u: TestUser) =>
  post(cardAdd, {
    authorization_code: await paystack.authorizeUser(u.id),
    last4: '4081',
    brand: 'visa',
    exp_month: '12',
    exp_year: '2030',
    signature: `SIG_${crypto.randomUUID()}`,
  }, { token: u.accessToken });

/** Tier 1 the way a user reaches it: kyc-start for level 1, then Sumsub's signed GREEN review. */
async function passTier1(u: TestUser): Promise<void> {
  expectOk(await post(kycStart, { level: 1 }, { token: u.accessToken }));
  const d = await kycFake.sumsubReview({ userId: u.id, levelName: 'tier-1', answer: 'GREEN' });
  expect(d.responses[0]?.status).toBe(200);
  expect(expectOk(await get(kycStatus, { token: u.accessToken })).tier).toBe(1);
}

/** The user's transactions and saved cards and virtual account, to see that a refusal created none. */
async function footprint(userId: string) {
  const [row] = await testDb()<{ tx: number; cards: number; va: number }[]>`
    select (select count(*)::int from public.transactions where user_id = ${userId}) as tx,
           (select count(*)::int from public.saved_cards where user_id = ${userId}) as cards,
           (select count(*)::int from public.virtual_accounts where user_id = ${userId}) as va`;
  return row;
}

/** An escrow `u` creates and pays for (draft), with a new counterparty; answers its id and total charge. */
async function ownEscrow(u: TestUser, amount = 1_000, title = 'Phone case') {
  const other = await signUp({ first_name: 'Cou' });
  const r = await post(escrowCreate, {
    category: 'goods_products',
    payer_role: 'initiator',
    title,
    counterparty_phone: other.phone,
    amount,
  }, { token: u.accessToken });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.data.escrow_id, totalCharge: r.body.data.fee_breakdown.total_charge, counterparty: other };
}

const verificationNotes = async (u: TestUser) =>
  (expectOk(await get(notificationList, { token: u.accessToken })) as { event_type: string; content: string }[])
    .filter((n) => n.event_type === 'verification_needed');

/**
 * A tier-0 payee who received a release (NGN 10,000 deal, released by a payer raised to fund it)
 * and has a default payout account: money in the wallet, none of it paid out.
 */
async function tierZeroPayeeWithMoney() {
  const deal = await fundedDeal({ amount: 10_000 });
  await addPayout(deal.payee);
  expectOk(await escrowOp('escrow-deliver', deal.payee, deal.escrowId));
  expectOk(await escrowOp('escrow-release', deal.payer, deal.escrowId));
  return deal;
}

describe('at tier 0', () => {
  it('kyc-status shows limits of 0 and that tier 1 is next', async () => {
    const u = await signUp();
    expect(expectOk(await get(kycStatus, { token: u.accessToken }))).toEqual({
      tier: 0,
      limits: { single: 0, daily: 0, balance: 0 },
      used_today: 0,
      checks: [],
      next_tier: { tier: 1, needs: ['kyc_basic'] },
    });
  });

  it('wallet-withdraw is 403 on amount naming tier 1 before it asks for a payout account', async () => {
    const u = await signUp();
    expectTierRequired(await withdraw(u), 'amount');
  });

  it('wallet-topup is 403 on amount naming tier 1, and nothing is created or charged', async () => {
    const u = await signUp();
    expectTierRequired(await topup(u), 'amount');
    expectTierRequired(await topup(u, 100), 'amount');
    expect(await footprint(u.id)).toEqual({ tx: 0, cards: 0, va: 0 });
  });

  it('escrow-fund by card, by bank transfer and from the wallet is 403 on escrow_id naming tier 1', async () => {
    const deal = await newDeal({ amount: 5_000 });
    for (const method of ['card', 'bank_transfer', 'wallet'] as const) {
      expectTierRequired(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method }), 'escrow_id');
    }
    expect(await escrowStatus(deal)).toBe('draft');
    const [e] = await testDb()<{ awaiting: Date | null }[]>`
      select awaiting_bank_transfer_at as awaiting from public.escrows where id = ${deal.escrowId}`;
    expect(e?.awaiting).toBeNull();
    expect((await footprint(deal.payer.id))?.tx).toBe(0);
  });

  it('a wallet funding and a withdrawal are refused even with money in the wallet', async () => {
    const deal = await tierZeroPayeeWithMoney();
    const payee = deal.payee;
    const held = await walletKobo(payee.id);
    expect(held).toBe(Math.round(deal.feeBreakdown.seller_payout * 100));
    expectTierRequired(await withdraw(payee), 'amount');
    // the payee pays for a deal of their own, from the wallet that holds enough
    const mine = await ownEscrow(payee);
    expectTierRequired(await escrowOp('escrow-fund', payee, mine.id, { method: 'wallet' }), 'escrow_id');
    expect(await walletKobo(payee.id)).toBe(held);
  });

  it('virtual-account-create and card-add are 403 on kyc_tier naming tier 1; a payout account may be saved', async () => {
    const u = await signUp();
    expectTierRequired(await post(virtualAccountCreate, {}, { token: u.accessToken }), 'kyc_tier');
    expect((await get(virtualAccountGet, { token: u.accessToken })).status).toBe(404);
    expectTierRequired(await addCard(u), 'kyc_tier');
    expect(await footprint(u.id)).toEqual({ tx: 0, cards: 0, va: 0 });
    await addPayout(u);
  });

  it('a concurrent burst of top-ups, withdrawals and fundings moves nothing', async () => {
    const deal = await tierZeroPayeeWithMoney();
    const u = deal.payee;
    const before = { wallet: await walletKobo(u.id), tx: (await footprint(u.id))?.tx };
    const { id: escrowId } = await ownEscrow(u);
    const results = await Promise.all([
      ...Array.from({ length: 8 }, () => topup(u, 1_000)),
      ...Array.from({ length: 8 }, () => withdraw(u, 1_000)),
      ...Array.from({ length: 8 }, () => escrowOp('escrow-fund', u, escrowId, { method: 'wallet' })),
    ]);
    expect(results.map((r) => r.status)).toEqual(Array(24).fill(403));
    expect(await walletKobo(u.id)).toBe(before.wallet);
    expect((await footprint(u.id))?.tx).toBe(before.tx);
    await expectLedgerInvariants();
  });
});

describe('money that reaches a tier-0 wallet', () => {
  it('a release is credited, no payout starts though a payout account is saved, and the payee is told tier 1 lets it out', async () => {
    const deal = await tierZeroPayeeWithMoney();
    const payee = deal.payee;
    expect(await walletKobo(payee.id)).toBe(Math.round(deal.feeBreakdown.seller_payout * 100));
    const payouts = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.transactions where user_id = ${payee.id} and type = 'escrow_payout'`;
    expect(payouts[0]?.n).toBe(0);
    const notes = await verificationNotes(payee);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ escrow_id: null, entity_type: 'account', action_label: 'Verify identity' });
    expect(notes[0]!.content).toContain('verify to tier 1');
    expect(await lastSms(payee.phone)).toMatch(/To withdraw it, verify your identity in the app \(tier 1\)/);
    await expectLedgerInvariants();
  });

  it('a second release the same day is credited without telling the payee again', async () => {
    const deal = await tierZeroPayeeWithMoney();
    // the same payee, a second deal: a payer at tier 1 (a NGN 2,000 deal) pays them
    const payer = await signUp({ tier: 1 });
    const d2 = await post(escrowCreate, {
      category: 'goods_products',
      payer_role: 'initiator',
      title: 'Second item',
      counterparty_phone: deal.payee.phone,
      amount: 2_000,
    }, { token: payer.accessToken });
    expect(d2.status, JSON.stringify(d2.body)).toBe(201);
    const id = d2.body.data.escrow_id as string;
    await fundWallet(payer, d2.body.data.fee_breakdown.total_charge);
    expectOk(await escrowOp('escrow-fund', payer, id, { method: 'wallet' }));
    expectOk(await escrowOp('escrow-accept', deal.payee, id));
    expectOk(await escrowOp('escrow-deliver', deal.payee, id));
    expectOk(await escrowOp('escrow-release', payer, id));
    expect(await verificationNotes(deal.payee)).toHaveLength(1);
    expect(await walletKobo(deal.payee.id)).toBe(
      Math.round((deal.feeBreakdown.seller_payout + d2.body.data.fee_breakdown.seller_payout) * 100),
    );
  });

  it('a bank transfer into the virtual account of a user lowered to tier 0 is credited, and the user told', async () => {
    const u = await signUp();
    await passTier1(u);
    expectOk(await post(virtualAccountCreate, {}, { token: u.accessToken }));
    await paystack.assignOutcome(`${u.id}@customers.escrow.ng`, true);
    const va = expectOk(await get(virtualAccountGet, { token: u.accessToken }));
    // a FINAL rejection withdraws the passed check: back to tier 0
    const red = await kycFake.sumsubReview({
      userId: u.id,
      levelName: 'tier-1',
      answer: 'RED',
      reviewRejectType: 'FINAL',
      rejectLabels: ['FRAUDULENT_PATTERNS'],
    });
    expect(red.responses[0]?.status).toBe(200);
    expect(expectOk(await get(kycStatus, { token: u.accessToken })).tier).toBe(0);
    const d = await paystack.dvaDeposit(va.account_number!, 7_500_00);
    expect(d.responses[0]?.status).toBe(200);
    expect(await walletKobo(u.id)).toBe(7_500_00);
    const notes = await verificationNotes(u);
    expect(notes).toHaveLength(1);
    expect(notes[0]!.content).toBe(
      'Your wallet holds NGN 7,500.00. Money leaves a wallet only once your identity is verified: ' +
        'verify to tier 1 to withdraw it or pay with it.',
    );
    expectTierRequired(await withdraw(u), 'amount');
  });
});

describe('after a tier-1 pass', () => {
  it('the same requests succeed: top-up, card-add, virtual account, escrow funding, and the held money leaves', async () => {
    const deal = await tierZeroPayeeWithMoney();
    const u = deal.payee;
    expectTierRequired(await topup(u), 'amount');
    await passTier1(u);
    expectOk(await topup(u));
    expectOk(await addCard(u), 201);
    expectOk(await post(virtualAccountCreate, {}, { token: u.accessToken }));
    await paystack.assignOutcome(`${u.id}@customers.escrow.ng`, true);
    for (const method of ['card', 'bank_transfer', 'wallet'] as const) {
      const { id } = await ownEscrow(u);
      const r = await escrowOp('escrow-fund', u, id, { method });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const left = await walletKobo(u.id);
    expectOk(await withdraw(u, left / 100));
    expect(await walletKobo(u.id)).toBe(0);
    await expectLedgerInvariants();
  });
});
