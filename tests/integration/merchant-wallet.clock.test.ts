// The merchant's fee and wallet (docs/merchants.md#the-merchants-fee-and-wallet) through the real
// server, the Paystack fake and the job: every release of a merchant escrow (the buyer's release,
// milestone releases, the job's release after inspection, a dispute's split) credits the merchant
// its half-up share of merchant_fee, never more than merchant_fee in all, out of the seller's side;
// a refund credits it nothing; merchant-wallet-get answers the balance and merchant-withdraw pays
// it to the owner's bank account, a failed payout going back to the merchant's wallet. Races: 20
// attempts at once settle each release once, and 20 withdrawals never overdraw the wallet.
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb } from '../../shared/core/db.ts';
import { type ApiResult, expectError, expectOk, get, post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { runJobs } from '../support/clock.ts';
import { walletKobo } from '../support/ledger.ts';
import { paystack } from '../support/paystack.ts';
import { addPayout } from '../support/payouts.ts';
import { milestoneOp } from '../support/escrows.ts';
import { halfUp } from '../support/disputes.ts';
import {
  type Merchant,
  merchantWithFee as merchantWithFeeOf,
  newMerchant,
  newMerchantEscrow,
  payCheckout,
  signUpAs,
} from '../support/merchants.ts';
import { signUp, type TestUser } from '../support/users.ts';
import { raiseTier } from '../support/kyc.ts';

afterAll(() => closeDb());

// ---- helpers -------------------------------------------------------------------------------

const signUpWith = signUpAs;

interface Paid {
  escrow: { id: string; fee_breakdown: Record<string, number>; amount: number };
  buyer: TestUser;
  seller: TestUser;
}

/** A merchant escrow paid through the checkout, both parties signed up with its phones. */
async function paidEscrow(m: Merchant, over: Record<string, unknown> = {}): Promise<Paid> {
  const { body, escrow } = await newMerchantEscrow(m, { merchant_fee: 2_500, ...over });
  await payCheckout(escrow.id);
  const buyer = await signUpWith(body.buyer_phone);
  const seller = await signUpWith(body.seller_phone);
  return { escrow, buyer, seller };
}

const deliver = async (m: Merchant, escrowId: string) =>
  expectOk(await post('merchant-escrow-deliver', { escrow_id: escrowId }, { token: m.key }));

const kobo = (naira: number) => Math.round(naira * 100);
const one = async <T>(q: Promise<T[]>) => (await q)[0]!;

const merchantWallet = async (merchantId: string) =>
  Number((await one(testDb()<{ b: string }[]>`select private.merchant_wallet_balance(${merchantId})::text as b`)).b);
const credited = async (escrowId: string) =>
  Number(
    (await one(testDb()<{ c: string }[]>`
      select merchant_fee_credited::text as c from private.merchant_escrows where escrow_id = ${escrowId}`)).c,
  );
/** The merchant's fee transactions of an escrow (kobo), oldest first. */
const feeCredits = async (escrowId: string) =>
  (await testDb()<{ amount: string }[]>`
    select amount::text from public.transactions
     where escrow_id = ${escrowId} and type = 'escrow_fee' and merchant_id is not null order by created_at`)
    .map((r) => Number(r.amount));
/** The payee's release transactions of an escrow (kobo amounts and descriptions). */
const releases = async (escrowId: string, payee: TestUser) =>
  (expectOk(await get('transaction-list', { token: payee.accessToken, query: { escrow_id: escrowId, limit: 50 } }))
    .data as {
      type: string;
      amount: number;
      description: string;
      metadata: Record<string, unknown>;
    }[]).filter((t) => t.type === 'escrow_release');

const stored = async (escrowId: string) =>
  await one(testDb()<{ amount: string; seller_fee: string; merchant_fee: string }[]>`
    select amount::text, seller_fee::text, merchant_fee::text from public.escrows where id = ${escrowId}`);

// ---- releases ---------------------------------------------------------------------------------

describe('escrow-release', () => {
  it("credits the merchant its fee and the seller the amount less both fees; the seller's description shows it", async () => {
    const m = await newMerchant();
    const { escrow, buyer, seller } = await paidEscrow(m, { amount: 50_000, merchant_fee: 2_500 });
    expect(escrow.fee_breakdown.merchant_fee).toBe(2_500);
    expect(escrow.fee_breakdown.seller_payout).toBe(50_000 - escrow.fee_breakdown.seller_fee! - 2_500);
    await deliver(m, escrow.id);
    const released = expectOk(await post('escrow-release', { escrow_id: escrow.id }, { token: buyer.accessToken }));
    expect(released.status).toBe('released');
    expect(await merchantWallet(m.id)).toBe(kobo(2_500));
    expect(await credited(escrow.id)).toBe(kobo(2_500));
    expect(await walletKobo(seller.id)).toBe(kobo(escrow.fee_breakdown.seller_payout!));
    const [r] = await releases(escrow.id, seller);
    expect(r!.amount).toBe(escrow.fee_breakdown.seller_payout);
    expect(r!.description).toBe(`Released: Phone 15 (${m.name} fee NGN 2,500.00)`);
    expect(r!.metadata.merchant_fee).toBe(2_500);
    // the escrow as the seller reads it: the breakdown's payout is after the merchant's fee
    const read = expectOk(await get('escrow-get', { token: seller.accessToken, query: { escrow_id: escrow.id } }));
    expect(read.fee_breakdown).toMatchObject({
      merchant_fee: 2_500,
      seller_payout: escrow.fee_breakdown.seller_payout,
    });
    const [listed] = expectOk(await get('escrow-list', { token: seller.accessToken })) as { fee_breakdown: unknown }[];
    expect(listed!.fee_breakdown).toEqual(read.fee_breakdown);
    // the merchant's credit is the owner's transaction, kept out of the owner's own reads
    expect(await feeCredits(escrow.id)).toEqual([kobo(2_500)]);
    const own = expectOk(await get('transaction-list', { token: m.owner.accessToken, query: { limit: 50 } }));
    expect(own.data).toEqual([]);
    const wallet = expectOk(await get('wallet-get', { token: m.owner.accessToken }));
    expect(wallet).toMatchObject({ balance: 0, pending_deposits: 0, pending_withdrawals: 0 });
    // nor a wallet event for the owner's stream: the merchant's wallet is not theirs
    const [events] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.events where kind = 'wallet' and subject_id in (${m.owner.id}, ${m.id})`;
    expect(events!.n).toBe(0);
    await expectLedgerInvariants();
  });

  it("the seller's bank payout is what the release credited, after the merchant's fee", async () => {
    const m = await newMerchant();
    const { escrow, buyer, seller } = await paidEscrow(m, { amount: 50_000, merchant_fee: 2_500 });
    // a seller who can be paid out: tier 1 and a default payout account
    expect(await raiseTier(seller.id, 1)).toBe(1);
    await addPayout(seller);
    await deliver(m, escrow.id);
    expectOk(await post('escrow-release', { escrow_id: escrow.id }, { token: buyer.accessToken }));
    const [payout] = await testDb()<{ amount: string }[]>`
      select amount::text from public.transactions where escrow_id = ${escrow.id} and type = 'escrow_payout'`;
    expect(Number(payout!.amount)).toBe(kobo(escrow.fee_breakdown.seller_payout!));
    expect(await walletKobo(seller.id)).toBe(0);
    expect(await merchantWallet(m.id)).toBe(kobo(2_500));
    await expectLedgerInvariants();
  });

  it('an app escrow has a merchant fee of 0 and pays no merchant', async () => {
    const u = await signUp();
    const created = expectOk(
      await post('escrow-create', {
        category: 'hiring',
        payer_role: 'initiator',
        title: 'Logo',
        amount: 10_000,
        counterparty_phone: `+23480${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`,
      }, { token: u.accessToken }),
      201,
    );
    expect(created.fee_breakdown.merchant_fee).toBe(0);
    expect(created.fee_breakdown.seller_payout).toBe(10_000 - created.fee_breakdown.seller_fee);
  });

  describe('races', () => {
    it('20 attempts at once on merchant escrows credit each merchant fee exactly once', async () => {
      const m = await newMerchant('Storm Shop');
      // a goods escrow past its inspection: the buyer's releases and the job's, at once
      const goods = await paidEscrow(m, { amount: 7_777.77, merchant_fee: 333.33 });
      const d = await deliver(m, goods.escrow.id);
      const after = new Date(Date.parse(d.inspection_ends_at) + 60_000).toISOString();
      // a hiring escrow with two completed milestones, each released several times at once
      const hiring = await paidEscrow(m, { category: 'hiring', amount: 1_000, merchant_fee: 199.99 });
      const milestones: string[] = [];
      for (const amount of [333.33, 333.34]) {
        const made = expectOk(
          await post('milestone-create', { escrow_id: hiring.escrow.id, title: `Part ${amount}`, amount }, {
            token: hiring.seller.accessToken,
          }),
          201,
        );
        expectOk(await milestoneOp('milestone-approve', hiring.buyer, made.id));
        expectOk(await milestoneOp('milestone-complete', hiring.seller, made.id));
        milestones.push(made.id);
      }
      // a disputed escrow with a split proposal, accepted several times at once
      const disputed = await paidEscrow(m, { amount: 3_000, merchant_fee: 600 });
      const accept = await settleBy(disputed, 'split', 1_234.57);
      const attempts: (() => Promise<ApiResult>)[] = [
        ...Array.from(
          { length: 5 },
          () => () => post('escrow-release', { escrow_id: goods.escrow.id }, { token: goods.buyer.accessToken }),
        ),
        ...Array.from({ length: 3 }, () => () => runJobs(after)),
        ...Array.from({ length: 4 }, () => () => milestoneOp('milestone-release', hiring.buyer, milestones[0]!)),
        ...Array.from({ length: 4 }, () => () => milestoneOp('milestone-release', hiring.buyer, milestones[1]!)),
        ...Array.from({ length: 4 }, () => () => accept()),
      ];
      expect(attempts).toHaveLength(20);
      const answers = await Promise.all(attempts.map((f) => f()));
      for (const a of answers) expect([200, 409], JSON.stringify(a.body)).toContain(a.status);
      // each escrow: its fee (or its share) credited once, in one transaction per release
      expect(await feeCredits(goods.escrow.id)).toEqual([33_333]);
      expect(await credited(goods.escrow.id)).toBe(33_333);
      const h = halfUp(19_999, 33_333, 100_000);
      const h2 = halfUp(19_999, 33_334, 100_000);
      expect((await feeCredits(hiring.escrow.id)).sort()).toEqual([h, h2].sort());
      const split = halfUp(60_000, 123_457, 300_000);
      expect(await feeCredits(disputed.escrow.id)).toEqual([split]);
      expect(await merchantWallet(m.id)).toBe(33_333 + h + h2 + split);
      await expectLedgerInvariants();
      const [negative] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from private.ledger_accounts
         where kind in ('user_wallet', 'escrow_hold', 'merchant_wallet') and balance < 0`;
      expect(negative!.n).toBe(0);
    });
  });
});

describe('milestone-release', () => {
  it('pays the merchant the half-up share of each milestone, capped at merchant_fee in all', async () => {
    const m = await newMerchant();
    // NGN 3.00 with a fee of NGN 0.50: each NGN 1.00 milestone's half-up share is 17 kobo, 51 in
    // all, so the last one gets the 16 left
    const { escrow, buyer, seller } = await paidEscrow(m, { category: 'hiring', amount: 3, merchant_fee: 0.5 });
    const s = await stored(escrow.id);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const made = expectOk(
        await post('milestone-create', { escrow_id: escrow.id, title: `Part ${i + 1}`, amount: 1 }, {
          token: seller.accessToken,
        }),
        201,
      );
      expectOk(await milestoneOp('milestone-approve', buyer, made.id));
      expectOk(await milestoneOp('milestone-complete', seller, made.id));
      ids.push(made.id);
    }
    expect(halfUp(50, 100, 300)).toBe(17);
    const shares: number[] = [];
    for (const id of ids) {
      expectOk(await milestoneOp('milestone-release', buyer, id));
      shares.push(await credited(escrow.id) - shares.reduce((a, b) => a + b, 0));
    }
    expect(shares).toEqual([17, 17, 16]);
    expect(await feeCredits(escrow.id)).toEqual([17, 17, 16]);
    expect(await merchantWallet(m.id)).toBe(50);
    // the seller: the amount less the seller fee and the merchant's 50 kobo
    expect(await walletKobo(seller.id)).toBe(300 - Number(s.seller_fee) - 50);
    const described = (await releases(escrow.id, seller)).map((t) => t.description).sort();
    expect(described[0]).toMatch(new RegExp(`^Milestone released: Part 1 \\(${m.name} fee NGN 0\\.17\\)$`));
    await expectLedgerInvariants();
  });
});

describe('jobs-run', () => {
  it("the release after inspection credits the merchant's fee once", async () => {
    const m = await newMerchant();
    const { escrow, seller } = await paidEscrow(m, { amount: 20_000, merchant_fee: 1_000.01 });
    const d = await deliver(m, escrow.id);
    const after = new Date(Date.parse(d.inspection_ends_at) + 60_000).toISOString();
    expectOk(await runJobs(after));
    expectOk(await runJobs(after));
    expect(await credited(escrow.id)).toBe(100_001);
    expect(await feeCredits(escrow.id)).toEqual([100_001]);
    expect(await walletKobo(seller.id)).toBe(kobo(escrow.fee_breakdown.seller_payout!));
    await expectLedgerInvariants();
  });
});

// ---- disputes -----------------------------------------------------------------------------------

async function settleBy(p: Paid, outcome: 'split' | 'refund', payeeAmount?: number) {
  expectOk(
    await post('dispute-raise', {
      escrow_id: p.escrow.id,
      reason_code: 'item_not_as_described',
      reason: 'The phone has a cracked screen',
    }, { token: p.buyer.accessToken }),
    201,
  );
  const proposal = expectOk(
    await post('dispute-propose', {
      escrow_id: p.escrow.id,
      outcome,
      ...(payeeAmount === undefined ? {} : { payee_amount: payeeAmount }),
    }, { token: p.seller.accessToken }),
    201,
  );
  const proposalId = proposal.proposals[0].id;
  return (by: TestUser = p.buyer) =>
    post('dispute-respond', { escrow_id: p.escrow.id, proposal_id: proposalId, accept: true }, {
      token: by.accessToken,
    });
}

describe('dispute-respond', () => {
  it("a split credits the merchant the half-up share on the payee's part, the seller the rest less fees", async () => {
    const m = await newMerchant();
    const p = await paidEscrow(m, { amount: 10_000.03, merchant_fee: 1_333.33 });
    const s = await stored(p.escrow.id);
    const accept = await settleBy(p, 'split', 3_333.33);
    expectOk(await accept());
    const P = 333_333;
    const amount = Number(s.amount);
    const merchantShare = halfUp(133_333, P, amount);
    const sellerFee = halfUp(Number(s.seller_fee), P, amount);
    expect(await credited(p.escrow.id)).toBe(merchantShare);
    expect(await merchantWallet(m.id)).toBe(merchantShare);
    expect(await walletKobo(p.seller.id)).toBe(P - sellerFee - merchantShare);
    const [r] = await releases(p.escrow.id, p.seller);
    expect(r!.metadata.merchant_fee).toBe(merchantShare / 100);
    expect(r!.description).toContain(`(${m.name} fee NGN`);
    await expectLedgerInvariants();
  });

  it('a refund gives the merchant nothing', async () => {
    const m = await newMerchant();
    const p = await paidEscrow(m, { amount: 5_000, merchant_fee: 1_000 });
    const accept = await settleBy(p, 'refund');
    expectOk(await accept());
    expect(await merchantWallet(m.id)).toBe(0);
    expect(await feeCredits(p.escrow.id)).toEqual([]);
    await expectLedgerInvariants();
  });
});

// ---- the wallet -------------------------------------------------------------------------------------

/** A merchant whose wallet holds `fee` naira (support/merchants.ts), checked. */
async function merchantWithFee(fee: number, name = 'Ada Phones'): Promise<Merchant> {
  const m = await merchantWithFeeOf(fee, name);
  expect(await merchantWallet(m.id)).toBe(kobo(fee));
  return m;
}

describe('merchant-wallet-get', () => {
  it("answers the merchant's balance in naira; 404 for a user with no merchant, 401 without a session", async () => {
    const m = await newMerchant();
    expect(expectOk(await get('merchant-wallet-get', { token: m.owner.accessToken }))).toEqual({
      balance: 0,
      currency: 'NGN',
    });
    const rich = await merchantWithFee(1_234.56);
    expect(expectOk(await get('merchant-wallet-get', { token: rich.owner.accessToken }))).toEqual({
      balance: 1_234.56,
      currency: 'NGN',
    });
    const nobody = await signUp();
    expectError(await get('merchant-wallet-get', { token: nobody.accessToken }), 404, 'merchant_not_found');
    expect((await get('merchant-wallet-get')).status).toBe(401);
  });
});

const withdraw = (m: Merchant, body: Record<string, unknown>, key = crypto.randomUUID()) =>
  post('merchant-withdraw', body, { token: m.owner.accessToken, headers: { 'Idempotency-Key': key } });

describe('merchant-withdraw', () => {
  it("pays the owner's default account from the merchant's wallet; the owner's wallet and reads stay apart", async () => {
    const m = await merchantWithFee(2_000);
    await addPayout(m.owner);
    const usedToday = async () =>
      Number((await one(testDb()<{ u: string }[]>`select private.kyc_used_today(${m.owner.id}, now())::text as u`)).u);
    const usedBefore = await usedToday();
    const t = expectOk(await withdraw(m, { amount: 1_500 }));
    expect(t).toMatchObject({ type: 'withdrawal', category: 'withdrawal', direction: 'out', amount: 1_500 });
    expect(t.description).toMatch(new RegExp(`^${m.name} withdrawal to Guaranty Trust Bank \\d{4}$`));
    expect(await merchantWallet(m.id)).toBe(kobo(500));
    expect(await walletKobo(m.owner.id)).toBe(0);
    // the transfer names the merchant
    const [transfer] = (await paystack.requests('/transfer')).filter((r) => r.body.reference === t.id);
    expect(transfer!.body.reason).toBe(`${m.name} merchant withdrawal`);
    // counted in the owner's daily sum like a withdrawal
    expect(await usedToday() - usedBefore).toBe(kobo(1_500));
    // not in the owner's own transactions or pending withdrawals
    expect(expectOk(await get('transaction-list', { token: m.owner.accessToken, query: { limit: 50 } })).data).toEqual(
      [],
    );
    expect(expectOk(await get('wallet-get', { token: m.owner.accessToken })).pending_withdrawals).toBe(0);
    // transfer.success settles it
    await paystack.transferOutcome(t.id, 'transfer.success');
    const [row] = await testDb()<{ status: string }[]>`select status::text from public.transactions where id = ${t.id}`;
    expect(row!.status).toBe('succeeded');
    await expectLedgerInvariants();
  });

  it('refuses a frozen merchant (403 merchant_frozen): its wallet stays where it is', async () => {
    const m = await merchantWithFee(1_000);
    await addPayout(m.owner);
    await testDb()`update private.merchants set status = 'frozen' where id = ${m.id}`;
    const transfers = async () => (await paystack.requests('/transfer')).length;
    const before = await transfers();
    expectError(await withdraw(m, { amount: 500 }), 403, 'merchant_frozen');
    expect(await merchantWallet(m.id)).toBe(kobo(1_000));
    expect(await transfers()).toBe(before); // nothing was asked of the provider
    // active again: it withdraws
    await testDb()`update private.merchants set status = 'active' where id = ${m.id}`;
    expectOk(await withdraw(m, { amount: 500 }));
    expect(await merchantWallet(m.id)).toBe(kobo(500));
  });

  it("a failed payout goes back to the merchant's wallet, not the owner's, once", async () => {
    const m = await merchantWithFee(1_000);
    await addPayout(m.owner);
    const t = expectOk(await withdraw(m, { amount: 1_000 }));
    expect(await merchantWallet(m.id)).toBe(0);
    await paystack.transferOutcome(t.id, 'transfer.failed', { times: 3, concurrent: true });
    expect(await merchantWallet(m.id)).toBe(kobo(1_000));
    expect(await walletKobo(m.owner.id)).toBe(0);
    await expectLedgerInvariants();
  });

  it('a refused transfer fails at once with the money back in the merchant wallet (502)', async () => {
    const m = await merchantWithFee(1_000, 'Refused Shop');
    await addPayout(m.owner);
    const key = crypto.randomUUID();
    await paystack.fail({ path: '/transfer', field: 'reason', value: `${m.name} merchant withdrawal` }, 'refuse');
    const refused = await withdraw(m, { amount: 400 }, key);
    expectError(refused, 502, 'transfer_refused');
    expect(refused.body.error).toMatch(/the amount is back in the merchant's wallet$/);
    expect(await merchantWallet(m.id)).toBe(kobo(1_000));
    expect(await walletKobo(m.owner.id)).toBe(0);
    await expectLedgerInvariants();
  });

  it('refuses more than the wallet holds (409 insufficient_funds), a stranger (404), no payout account (400)', async () => {
    const m = await merchantWithFee(500);
    expectError(await withdraw(m, { amount: 500 }), 409, 'payout_account_required');
    await addPayout(m.owner);
    expectError(await withdraw(m, { amount: 500.01 }), 409, 'insufficient_funds');
    expect(await merchantWallet(m.id)).toBe(kobo(500));
    const nobody = await signUp({ tier: 1 });
    expectError(
      await post('merchant-withdraw', { amount: 100 }, {
        token: nobody.accessToken,
        headers: { 'Idempotency-Key': 'k' },
      }),
      404,
      'merchant_not_found',
    );
    expectError(
      await withdraw(m, { amount: 100, payout_account_id: crypto.randomUUID() }),
      404,
      'payout_account_not_found',
    );
  });

  it("meets the owner's KYC: over the single limit 403 kyc_limit_exceeded, below the floor 403 kyc_tier_required", async () => {
    const m = await merchantWithFee(1_000, 'Limits Shop');
    await addPayout(m.owner);
    // tier 4's single limit is NGN 50,000,000: refused before the balance is looked at
    expectError(await withdraw(m, { amount: 60_000_000 }), 403, 'kyc_limit_exceeded');
    // an owner whose tier an operator lowered to 0 moves no money
    await testDb()`update private.users set kyc_tier = 0 where id = ${m.owner.id}`;
    expectError(await withdraw(m, { amount: 100 }), 403, 'kyc_tier_required');
    expect(await merchantWallet(m.id)).toBe(kobo(1_000));
  });

  it("503 provider_unavailable when nothing could be sent: the money back in the merchant's wallet", async () => {
    const m = await merchantWithFee(1_000, 'Down Shop');
    const accountNumber = String(2_000_000_000 + Math.floor(Math.random() * 999_999_999)).slice(0, 10);
    await paystack.registerAccount('058', accountNumber, 'ADA OBI');
    await paystack.fail({ path: '/transferrecipient', field: 'account_number', value: accountNumber }, 'unavailable');
    expectOk(
      await post('payout-add', {
        bank_code: '058',
        bank_name: 'Guaranty Trust Bank',
        account_number: accountNumber,
        account_name: 'Ada Obi',
      }, { token: m.owner.accessToken }),
      201,
    );
    expectError(await withdraw(m, { amount: 400 }), 503, 'provider_unavailable');
    expect(await merchantWallet(m.id)).toBe(kobo(1_000));
    expect(await walletKobo(m.owner.id)).toBe(0);
    await expectLedgerInvariants();
  });

  it("a transfer left unanswered stays pending; reconciliation, finding no such transfer, fails it into the merchant's wallet", async () => {
    const m = await merchantWithFee(1_000, 'Reconcile Shop');
    await addPayout(m.owner);
    await paystack.fail(
      { path: '/transfer', field: 'reason', value: 'Reconcile Shop merchant withdrawal' },
      'unavailable',
    );
    const t = expectOk(await withdraw(m, { amount: 600 }));
    expect(t.status).toBe('pending');
    expect(await merchantWallet(m.id)).toBe(kobo(400));
    // the provider never made it: reconciliation finds no such transfer
    expectOk(await runJobs(new Date(Date.now() + 31 * 60_000).toISOString()));
    const [row] = await testDb()<{ status: string }[]>`select status::text from public.transactions where id = ${t.id}`;
    expect(row!.status).toBe('failed');
    expect(await merchantWallet(m.id)).toBe(kobo(1_000));
    expect(await walletKobo(m.owner.id)).toBe(0);
    await expectLedgerInvariants();
  });

  it('the same Idempotency-Key replays the first withdrawal', async () => {
    const m = await merchantWithFee(1_000, 'Replay Shop');
    await addPayout(m.owner);
    const key = crypto.randomUUID();
    const first = expectOk(await withdraw(m, { amount: 300 }, key));
    const again: ApiResult = await withdraw(m, { amount: 300 }, key);
    expect(expectOk(again).id).toBe(first.id);
    expect(await merchantWallet(m.id)).toBe(kobo(700));
  });

  describe('races', () => {
    it('withdrawals while releases and a split credit the merchant: no refusal but insufficient_funds, the books agree', async () => {
      const m = await merchantWithFee(300, 'Busy Shop');
      await addPayout(m.owner);
      const released: Paid[] = [];
      for (let i = 0; i < 6; i++) {
        const p = await paidEscrow(m, { amount: 1_000, merchant_fee: 100 });
        await deliver(m, p.escrow.id);
        released.push(p);
      }
      const disputed = await paidEscrow(m, { amount: 1_000, merchant_fee: 200 });
      const accept = await settleBy(disputed, 'split', 500);
      const answers = await Promise.all([
        ...released.map((p) => post('escrow-release', { escrow_id: p.escrow.id }, { token: p.buyer.accessToken })),
        accept(),
        ...Array.from({ length: 13 }, () => withdraw(m, { amount: 100 })),
      ]);
      for (const a of answers.slice(0, 7)) expect(a.status, JSON.stringify(a.body)).toBe(200);
      const withdrawals = answers.slice(7);
      for (const a of withdrawals) expect([200, 409], JSON.stringify(a.body)).toContain(a.status);
      const paidOut = withdrawals.filter((a) => a.status === 200).length * kobo(100);
      // NGN 300 before, NGN 100 from each release and NGN 100 (half-up on 500 of 1,000) from the split
      expect(await merchantWallet(m.id)).toBe(kobo(300 + 600 + 100) - paidOut);
      await expectLedgerInvariants();
    });

    it("20 withdrawals at once (different keys) never overdraw the merchant's wallet", async () => {
      const m = await merchantWithFee(1_000, 'Race Shop');
      await addPayout(m.owner);
      // NGN 1,000 in the wallet, 20 asks of NGN 150: at most 6 can pass
      const answers = await Promise.all(Array.from({ length: 20 }, () => withdraw(m, { amount: 150 })));
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(6);
      expect(statuses.filter((s) => s === 409)).toHaveLength(14);
      for (const a of answers.filter((x) => x.status === 409)) expect(a.body.code).toBe('insufficient_funds');
      expect(await merchantWallet(m.id)).toBe(kobo(100));
      await expectLedgerInvariants();
    });
  });
});
