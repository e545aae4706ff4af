// Frozen accounts (docs/money.md#frozen-accounts) through the real server. An operator's freeze
// (private.user_freeze, which the operator endpoints call) stops every request of the account that
// moves money out, funds, creates, releases or adds an instrument, each with 403 account_frozen
// before anything is created; a merchant whose owner is frozen is frozen with it (its keys answer
// 403 account_frozen); a release to a frozen payee is credited to the wallet and no payout
// starts; a freeze racing 20 withdrawals lets none through once it has committed; an unfreeze lets
// the money move again.
import { describe, expect, it } from 'vitest';
import { type ApiResult, expectOk, post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { escrowOp, escrowStatus, fundedDeal, fundWallet, newDeal } from '../support/escrows.ts';
import { raiseTier } from '../support/kyc.ts';
import { walletKobo } from '../support/ledger.ts';
import { createMerchantEscrow, merchantEscrowBody, merchantWithFee, newMerchant } from '../support/merchants.ts';
import { kobo } from '../support/money.ts';
import { paystack } from '../support/paystack.ts';
import { addPayout } from '../support/payouts.ts';
import { signUp, type TestUser } from '../support/users.ts';
import cardAdd from '../../supabase/functions/card-add/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import milestoneCreate from '../../supabase/functions/milestone-create/handler.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

let operator: TestUser | undefined;
/** The operator who freezes (any account: the operator endpoints come later and call the same SQL). */
async function operatorId(): Promise<string> {
  operator ??= await signUp({ first_name: 'Opera', tier: 3 });
  return operator.id;
}

async function freeze(userId: string, reason = 'card fraud reported by the issuer') {
  const [row] = await testDb()<{ freeze_id: string; frozen_at: Date; changed: boolean }[]>`
    select * from private.user_freeze(${userId}, ${await operatorId()}, ${reason})`;
  return row!;
}

async function unfreeze(userId: string, reason = 'the issuer withdrew the report') {
  const [row] = await testDb()<{ freeze_id: string | null; unfrozen_at: Date | null; changed: boolean }[]>`
    select * from private.user_unfreeze(${userId}, ${await operatorId()}, ${reason})`;
  return row!;
}

/** A 403 account_frozen whose detail names `field`. */
function expectFrozen(r: ApiResult, field: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(403);
  expect(r.body).toMatchObject({ code: 'account_frozen' });
  expect(r.body.error).toMatch(/^A frozen account cannot .+: an operator must unfreeze it/);
  expect(r.body.details).toEqual([{ field, message: expect.stringContaining('frozen'), code: 'account_frozen' }]);
}

/** The user's transactions, saved cards, payout accounts, virtual accounts and escrows created. */
async function footprint(userId: string) {
  const [row] = await testDb()<Record<string, number>[]>`
    select (select count(*)::int from public.transactions where user_id = ${userId}) as tx,
           (select count(*)::int from public.saved_cards where user_id = ${userId}) as cards,
           (select count(*)::int from public.payout_accounts where user_id = ${userId}) as payout_accounts,
           (select count(*)::int from public.virtual_accounts where user_id = ${userId}) as va,
           (select count(*)::int from public.escrows where initiator_id = ${userId}) as escrows`;
  return row!;
}

const withdraw = (u: TestUser, amount = 1_000) => post(walletWithdraw, { amount }, { token: u.accessToken });

/** card-add of an authorization the Paystack fake issued to the user. */
const addCard = async (u: TestUser) =>
  post(cardAdd, {
    authorization_code: await paystack.authorizeUser(u.id),
    last4: '4081',
    brand: 'visa',
    exp_month: '12',
    exp_year: '2030',
    signature: `SIG_${crypto.randomUUID()}`,
  }, { token: u.accessToken });

/** A tier-3 user with NGN `naira` in the wallet and a default payout account. */
async function userWithMoney(naira: number): Promise<TestUser> {
  const u = await signUp({ tier: 3 });
  await fundWallet(u, naira);
  await addPayout(u);
  return u;
}

describe('private.user_freeze', () => {
  it('freezes once, keeps the first reason and operator; unfreeze is idempotent too; history is kept', async () => {
    const u = await signUp();
    const first = await freeze(u.id, 'first reason');
    expect(first.changed).toBe(true);
    const again = await freeze(u.id, 'second reason');
    expect(again).toMatchObject({ changed: false, freeze_id: first.freeze_id });
    const [row] = await testDb()<{ reason: string; frozen_by: string; frozen: boolean }[]>`
      select reason, frozen_by, private.account_frozen(${u.id}) as frozen
        from private.account_freezes where id = ${first.freeze_id}`;
    expect(row).toEqual({ reason: 'first reason', frozen_by: await operatorId(), frozen: true });
    expect((await unfreeze(u.id)).changed).toBe(true);
    expect((await unfreeze(u.id)).changed).toBe(false);
    expect((await freeze(u.id)).changed).toBe(true);
    const [h] = await testDb()<{ n: number; open: number }[]>`
      select count(*)::int as n, count(*) filter (where unfrozen_at is null)::int as open
        from private.account_freezes where user_id = ${u.id}`;
    expect(h).toEqual({ n: 2, open: 1 });
  });

  it('is for the service role only', async () => {
    const [g] = await testDb()<{ anon: boolean; auth: boolean }[]>`
      select has_function_privilege('anon', 'private.user_freeze(uuid, uuid, text)', 'execute') as anon,
             has_function_privilege('authenticated', 'private.user_unfreeze(uuid, uuid, text)', 'execute') as auth`;
    expect(g).toEqual({ anon: false, auth: false });
  });
});

describe('wallet-withdraw', () => {
  it('is 403 account_frozen while frozen and creates nothing; after an unfreeze it pays out', async () => {
    const u = await userWithMoney(5_000);
    const before = await footprint(u.id);
    await freeze(u.id);
    expectFrozen(await withdraw(u), 'amount');
    expect(await footprint(u.id)).toEqual(before);
    expect(await walletKobo(u.id)).toBe(kobo(5_000));
    await unfreeze(u.id);
    expect(expectOk(await withdraw(u))).toMatchObject({ type: 'withdrawal', amount: 1_000 });
    expect(await walletKobo(u.id)).toBe(kobo(4_000));
  });

  it('20 withdrawals sent while a freeze is written but not committed: all wait for it and are refused', async () => {
    const u = await userWithMoney(20_000);
    const operatorUser = await operatorId();
    let requests: Promise<ApiResult>[] = [];
    await testDb().begin(async (tx) => {
      await tx`select * from private.user_freeze(${u.id}, ${operatorUser}, 'held open by the test')`;
      requests = Array.from({ length: 20 }, () => withdraw(u, 100));
      // the requests reach the database while the freeze is still uncommitted; it commits after
      await new Promise((r) => setTimeout(r, 700));
    });
    const answers = await Promise.all(requests);
    for (const a of answers) expectFrozen(a, 'amount');
    const [w] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.transactions where user_id = ${u.id} and type = 'withdrawal'`;
    expect(w!.n).toBe(0);
    expect(await walletKobo(u.id)).toBe(kobo(20_000));
  });

  it('a freeze racing 20 withdrawals: none gets out after the freeze commits; the ledger holds', async () => {
    const u = await userWithMoney(20_000);
    const requests = Array.from({ length: 20 }, () => withdraw(u, 100));
    await new Promise((r) => setTimeout(r, 40));
    const f = await freeze(u.id);
    const answers = await Promise.all(requests);
    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    for (const r of refused) expectFrozen(r, 'amount');
    // every withdrawal that went through was created before the freeze (the freeze waited for it)
    const [w] = await testDb()<{ n: number; after: number }[]>`
      select count(*)::int as n, count(*) filter (where created_at > ${f.frozen_at})::int as after
        from public.transactions where user_id = ${u.id} and type = 'withdrawal'`;
    expect(w).toEqual({ n: ok.length, after: 0 });
    expect(await walletKobo(u.id)).toBe(kobo(20_000 - 100 * ok.length));
    // once the freeze has committed, nothing gets through
    expectFrozen(await withdraw(u, 100), 'amount');
    await expectLedgerInvariants();
  });
});

describe('wallet-topup', () => {
  it('is 403 account_frozen and starts no charge', async () => {
    const u = await signUp({ tier: 1 });
    await freeze(u.id);
    expectFrozen(await post(walletTopup, { amount: 1_000 }, { token: u.accessToken }), 'amount');
    expect((await footprint(u.id)).tx).toBe(0);
  });
});

describe('escrow-fund', () => {
  it('is 403 account_frozen by every method (wallet, card, saved card, bank transfer); the escrow stays a draft', async () => {
    const deal = await newDeal({ amount: 5_000, payerTier: 3 });
    await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
    const card = expectOk(await addCard(deal.payer), 201);
    const before = await footprint(deal.payer.id);
    await freeze(deal.payer.id);
    for (const method of ['wallet', 'card', 'bank_transfer'] as const) {
      expectFrozen(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method }), 'escrow_id');
    }
    expectFrozen(
      await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'saved_card', card_id: card.id }),
      'escrow_id',
    );
    expect(await escrowStatus(deal)).toBe('draft');
    expect(await footprint(deal.payer.id)).toEqual(before);
  });
});

describe('escrow-create', () => {
  it('is 403 account_frozen and creates no escrow', async () => {
    const [u, other] = await Promise.all([signUp(), signUp()]);
    await freeze(u.id);
    const r = await post(escrowCreate, {
      category: 'goods_products',
      payer_role: 'initiator',
      title: 'Phone case',
      counterparty_phone: other.phone,
      amount: 1_000,
    }, { token: u.accessToken });
    expectFrozen(r, 'counterparty_phone');
    expect((await footprint(u.id)).escrows).toBe(0);
  });
});

describe('escrow-release', () => {
  it('is 403 account_frozen for a frozen payer; the escrow stays funded', async () => {
    const deal = await fundedDeal({ amount: 5_000 });
    await freeze(deal.payer.id);
    expectFrozen(await escrowOp('escrow-release', deal.payer, deal.escrowId), 'escrow_id');
    expect(await escrowStatus(deal)).toBe('funded');
    await unfreeze(deal.payer.id);
    expectOk(await escrowOp('escrow-release', deal.payer, deal.escrowId));
  });

  it('to a frozen payee: credited to the wallet and held (no payout), withdrawn after the unfreeze', async () => {
    const deal = await fundedDeal({ amount: 5_000 });
    expect(await raiseTier(deal.payee.id, 3)).toBe(3);
    await addPayout(deal.payee);
    await freeze(deal.payee.id);
    expectOk(await escrowOp('escrow-release', deal.payer, deal.escrowId));
    expect(await escrowStatus(deal)).toBe('released');
    const credited = deal.feeBreakdown.seller_payout;
    expect(await walletKobo(deal.payee.id)).toBe(kobo(credited));
    const [p] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.transactions where user_id = ${deal.payee.id} and type = 'escrow_payout'`;
    expect(p!.n).toBe(0);
    expectFrozen(await withdraw(deal.payee, credited), 'amount');
    await unfreeze(deal.payee.id);
    expectOk(await withdraw(deal.payee, credited));
    expect(await walletKobo(deal.payee.id)).toBe(0);
    await expectLedgerInvariants();
  });
});

describe('milestone-release', () => {
  it('is 403 account_frozen for a frozen client; the milestone stays completed', async () => {
    const deal = await fundedDeal({ category: 'hiring', amount: 10_000, title: 'Logo design' });
    const m = expectOk(
      await post(milestoneCreate, { escrow_id: deal.escrowId, title: 'Sketches', amount: 4_000 }, {
        token: deal.payee.accessToken,
      }),
      201,
    );
    expectOk(await post('milestone-approve', { milestone_id: m.id }, { token: deal.payer.accessToken }));
    expectOk(await post('milestone-complete', { milestone_id: m.id }, { token: deal.payee.accessToken }));
    await freeze(deal.payer.id);
    expectFrozen(
      await post('milestone-release', { milestone_id: m.id }, { token: deal.payer.accessToken }),
      'milestone_id',
    );
    const [row] = await testDb()<{ status: string }[]>`select status from public.milestones where id = ${m.id}`;
    expect(row!.status).toBe('completed');
  });
});

describe('card-add', () => {
  it('is 403 account_frozen and saves no card', async () => {
    const u = await signUp({ tier: 1 });
    await freeze(u.id);
    expectFrozen(await addCard(u), 'kyc_tier');
    expect((await footprint(u.id)).cards).toBe(0);
  });
});

describe('payout-add', () => {
  it('is 403 account_frozen and saves no payout account', async () => {
    const u = await signUp({ tier: 1 });
    await freeze(u.id);
    await paystack.registerAccount('058', '0123456789', 'ADA OBI');
    const r = await post(payoutAdd, {
      bank_code: '058',
      bank_name: 'Guaranty Trust Bank',
      account_number: '0123456789',
      account_name: 'Ada Obi',
    }, { token: u.accessToken });
    expectFrozen(r, 'account_number');
    expect((await footprint(u.id)).payout_accounts).toBe(0);
  });
});

describe('virtual-account-create', () => {
  it('is 403 account_frozen and claims no virtual account', async () => {
    const u = await signUp({ tier: 1 });
    await freeze(u.id);
    expectFrozen(await post(virtualAccountCreate, {}, { token: u.accessToken }), 'kyc_tier');
    expect((await footprint(u.id)).va).toBe(0);
  });
});

describe('merchant-withdraw', () => {
  it("is 403 account_frozen for a frozen owner; the merchant's wallet stays", async () => {
    const m = await merchantWithFee(2_000);
    await addPayout(m.owner);
    await freeze(m.owner.id);
    const r = await post('merchant-withdraw', { amount: 1_000 }, {
      token: m.owner.accessToken,
      headers: { 'Idempotency-Key': crypto.randomUUID() },
    });
    expectFrozen(r, 'amount');
    const [w] = await testDb()<{ balance: string }[]>`
      select balance::text from private.ledger_accounts where kind = 'merchant_wallet' and owner_id = ${m.id}`;
    expect(Number(w!.balance)).toBe(kobo(2_000));
  });
});

describe('merchant-escrow-create', () => {
  it("a frozen owner's merchant is frozen with it: its keys answer 403 account_frozen; unfrozen, they work", async () => {
    const m = await newMerchant();
    await freeze(m.owner.id);
    expectFrozen(await createMerchantEscrow(m, merchantEscrowBody()), 'authorization');
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.escrows where merchant_id = ${m.id}`;
    expect(n!.n).toBe(0);
    await unfreeze(m.owner.id);
    expectOk(await createMerchantEscrow(m, merchantEscrowBody()), 201);
  });

  it('a freeze committed after the key was checked still stops the escrow (the trigger on escrows)', async () => {
    const m = await newMerchant();
    await freeze(m.owner.id);
    // as if the key had been checked before the freeze: the creation itself is refused
    const failure = await testDb()`
      select * from private.merchant_escrow_create(${m.id}, 'ref-race', 'hash', 'goods_products', 'Phone', '',
        5000000, 0, 0, 0, '+2348011111111', '+2348022222222', 0, null, 100, 100)`.then(() => null, (e) => e);
    expect(String(failure?.message)).toBe('account_frozen');
  });
});
