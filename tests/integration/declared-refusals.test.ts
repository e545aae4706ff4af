// Refusals that endpoints declare (`refusals` in supabase/functions/<name>/handler.ts, rendered into
// docs/api/openapi.json) and that no other suite produced: each one through the real server, with
// the status and message a client depends on, and nothing moved (money, tier, rows). Every answer
// also passes through tests/support/api.ts, which checks it against the OpenAPI document.
//
// The providers' fakes are shared with the suites running in parallel: every failure injected here
// is narrowed to this test's own user or number. The KYC fake's rules are cleared afterwards; the
// Paystack fake has no way to drop a rule (tests/fakes/paystack.ts, POST /_fake/fail), so its rules
// name the e-mail of a user created for that test alone, which no other request ever carries.
import { randomInt, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type ApiResult, expectError, expectOk, get, post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { kobo } from '../support/money.ts';
import { disputeRow, raise } from '../support/disputes.ts';
import { type Deal, escrowStatus, fundedDeal, newDeal } from '../support/escrows.ts';
import { balances } from '../support/ledger.ts';
import { kycFake } from '../support/kyc-fake.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import disputeGet from '../../supabase/functions/dispute-get/handler.ts';
import disputePropose from '../../supabase/functions/dispute-propose/handler.ts';
import escrowFund from '../../supabase/functions/escrow-fund/handler.ts';
import identityVerify from '../../supabase/functions/identity-verify/handler.ts';
import kycStart from '../../supabase/functions/kyc-start/handler.ts';
import kycStatusEndpoint from '../../supabase/functions/kyc-status/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';
import virtualAccountGet from '../../supabase/functions/virtual-account-get/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const emailOf = (u: TestUser) => `${u.id}@customers.escrow.ng`;

/** A NIN no other test sends: 11 digits, starting 7. */
const freshNin = () => `7${String(randomInt(0, 1e9)).padStart(9, '0')}${randomInt(0, 10)}`;

const kycStatus = async (u: TestUser) => expectOk(await get(kycStatusEndpoint, { token: u.accessToken }));

/** The dispute of a deal with its proposals and the notifications of its escrow, as stored. */
async function disputeState(deal: Deal, disputeId: string) {
  const [proposals, notifications] = await Promise.all([
    testDb()<
      Record<string, unknown>[]
    >`select * from public.dispute_proposals where dispute_id = ${disputeId} order by id`,
    testDb()<{ n: number }[]>`select count(*)::int as n from public.notifications where escrow_id = ${deal.escrowId}`,
  ]);
  return {
    dispute: await disputeRow(disputeId),
    proposals,
    notifications: notifications[0]?.n,
    escrow: await escrowStatus(deal),
    money: await balances(deal),
  };
}

/** The escrow's funding transactions and the ledger transfers made for them. */
async function fundingOf(escrowId: string) {
  const txs = await testDb()<{ id: string; status: string; amount: string }[]>`
    select id, status::text, amount::text from public.transactions
     where escrow_id = ${escrowId} and type = 'escrow_funding' order by created_at`;
  const [transfers] = await testDb()<{ n: number }[]>`
    select count(*)::int as n from private.ledger_transfers where transaction_id = any(${
    txs.map((t) => t.id)
  }::uuid[])`;
  return { txs, transfers: transfers?.n };
}

// ---- dispute-propose 404 -------------------------------------------------------------------

describe('dispute-propose', () => {
  describe('404: no dispute on an escrow the caller is a party to', () => {
    it('a stranger proposing on a disputed escrow, and a party naming an escrow that does not exist, get the same 404; nothing changes', async () => {
      const deal = await fundedDeal({ amount: 5_000 });
      const disputeId = expectOk(await raise(deal, 'payer'), 201).id as string;
      const before = await disputeState(deal, disputeId);
      expect(before.escrow).toBe('disputed');
      expect(before.proposals).toEqual([]);

      const stranger = await signUp({ first_name: 'Str' });
      const byStranger = await post(disputePropose, { escrow_id: deal.escrowId, outcome: 'refund' }, {
        token: stranger.accessToken,
      });
      expectError(byStranger, 404);
      expect(byStranger.body).toEqual({
        success: false,
        status: 404,
        code: 'escrow_not_found',
        error: 'escrow not found',
      });

      const split = { outcome: 'split', payee_amount: 2_500 } as const;
      const unknown = await post(disputePropose, { escrow_id: randomUUID(), ...split }, {
        token: deal.payer.accessToken,
      });
      expectError(unknown, 404);
      // a stranger learns nothing: the answer is that of an escrow that does not exist
      expect(unknown.body).toEqual(byStranger.body);

      // neither the dispute, its proposals, the escrow, its notifications nor any money moved
      expect(await disputeState(deal, disputeId)).toEqual(before);
      const seen = expectOk(
        await get(disputeGet, { token: deal.payee.accessToken, query: { escrow_id: deal.escrowId } }),
      );
      expect(seen).toMatchObject({ id: disputeId, status: 'negotiation', proposals: [] });
      // the parties still negotiate as before
      expectOk(
        await post(disputePropose, { escrow_id: deal.escrowId, ...split }, { token: deal.payee.accessToken }),
        201,
      );
      await expectLedgerInvariants();
    });
  });
});

// ---- escrow-fund 503 -----------------------------------------------------------------------

/**
 * escrow-fund by card for a deal while Paystack does not answer this payer's charges. The payer is
 * at tier 1: at tier 0 no money moves (the identity floor), and the funding would be refused first.
 */
async function cardFundingUnavailable(): Promise<{ deal: Deal; res: ApiResult }> {
  const deal = await newDeal({ amount: 7_500, payerTier: 1 });
  // only the payer's charges: the e-mail Paystack is given is this new user's alone
  await paystack.fail({ path: '/transaction/initialize', field: 'email', value: emailOf(deal.payer) }, 'unavailable');
  const res = await post(escrowFund, {
    escrow_id: deal.escrowId,
    method: 'card',
    callback_url: 'https://app.escrow.ng/funded',
  }, { token: deal.payer.accessToken });
  return { deal, res };
}

describe('escrow-fund', () => {
  describe('503: the payment provider is unavailable; nothing was charged', () => {
    it('a card funding while Paystack is down is 503; the funding transaction failed, nothing is held or owed, the escrow stays draft', async () => {
      const { deal, res } = await cardFundingUnavailable();
      expectError(res, 503);
      expect(res.body).toEqual({
        success: false,
        status: 503,
        code: 'provider_unavailable',
        error: 'The payment provider is unavailable; nothing was charged, try again shortly',
      });
      // Paystack was asked once, for this payer, and gave no payment page
      const asked = (await paystack.requests('/transaction/initialize')).filter((r) =>
        r.body?.email === emailOf(deal.payer)
      );
      expect(asked).toHaveLength(1);
      expect(Number(asked[0]?.body.amount)).toBe(kobo(deal.feeBreakdown.total_charge));
      // nothing charged or held: the one funding transaction is failed, with no ledger transfer
      const { txs, transfers } = await fundingOf(deal.escrowId);
      expect(txs.map((t) => t.status)).toEqual(['failed']);
      expect(txs[0]?.id).toBe(asked[0]?.body.reference);
      expect(transfers).toBe(0);
      expect(await balances(deal)).toEqual({ payer: 0, payee: 0, hold: 0 });
      expect(await escrowStatus(deal)).toBe('draft');
      const wallet = expectOk(await get(walletGet, { token: deal.payer.accessToken }));
      expect(wallet).toMatchObject({ balance: 0, pending_deposits: 0 });
      // and nothing waits for a charge.success that cannot come
      expect(
        (await paystack.charges()).filter((c) => c.reference === asked[0]?.body.reference && c.status !== null),
      ).toEqual([]);
      await expectLedgerInvariants();
    });

    // a provider's 503 says when to retry, as docs/api/openapi.json declares on every 503
    it('the 503 carries Retry-After', async () => {
      const { res } = await cardFundingUnavailable();
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
    });
  });
});

// ---- identity-verify 502 -------------------------------------------------------------------

describe('identity-verify', () => {
  describe('502: the identity provider refused the request', () => {
    it('a refusal is 502 naming the provider, without the number; the check is not left pending, the tier is unchanged, and the user may ask again', async () => {
      const u = await signUp({ tier: 2 });
      const nin = freshNin();
      const before = await kycStatus(u);
      expect(before.tier).toBe(2);
      const rule = { path: '/identity/verifications', field: 'idNumber', value: nin } as const;
      await kycFake.fail({ ...rule, mode: 'refuse' });
      let res: ApiResult;
      try {
        res = await post(identityVerify, { type: 'nin', id_number: nin }, { token: u.accessToken });
      } finally {
        await kycFake.clearFail(rule);
      }
      expectError(res, 502);
      expect(res.body.error).toBe(
        'The identity-check provider refused the request (identity provider refused (HTTP 422): Declined by test rule); try again later',
      );
      expect(JSON.stringify(res.body)).not.toContain(nin);
      // the provider was asked once, for this number
      expect((await kycFake.requests('/identity/verifications')).filter((r) => r.body?.idNumber === nin)).toHaveLength(
        1,
      );
      // the request is closed as not sent; no check is pending; the tier and checks are as before
      const requests = await testDb()<{ status: string; check_type: string }[]>`
      select status, check_type from private.identity_requests where user_id = ${u.id}`;
      expect(requests).toEqual([{ status: 'not_sent', check_type: 'nin' }]);
      expect(await kycStatus(u)).toEqual(before);
      // nothing was refused for good: the same check may be asked for again
      const again = expectOk(
        await post(identityVerify, { type: 'nin', id_number: nin }, { token: u.accessToken }),
        201,
      );
      expect(again).toMatchObject({ type: 'nin', status: 'pending' });
      expect((await kycStatus(u)).tier).toBe(2);
    });
  });
});

// ---- kyc-start 502 -------------------------------------------------------------------------

describe('kyc-start', () => {
  describe('502: the KYC provider refused the request', () => {
    it('a Sumsub refusal is 502 naming the provider; no token is given and the tier is unchanged; once it answers, the level starts', async () => {
      const u = await signUp();
      const rule = { path: '/resources/accessTokens/sdk', field: 'userId', value: u.id } as const;
      await kycFake.fail({ ...rule, mode: 'refuse' });
      let res: ApiResult;
      try {
        res = await post(kycStart, { level: 1 }, { token: u.accessToken });
      } finally {
        await kycFake.clearFail(rule);
      }
      expectError(res, 502);
      expect(res.body.error).toBe(
        'The verification provider refused the request (sumsub refused (HTTP 400): Declined by test rule); try again later',
      );
      expect(JSON.stringify(res.body)).not.toContain('_act-');
      const asked = (await kycFake.requests('/resources/accessTokens/sdk')).filter((r) => r.body?.userId === u.id);
      expect(asked).toHaveLength(1);
      const after = await kycStatus(u);
      expect(after.tier).toBe(0);
      expect(after.checks.filter((c: { status: string }) => c.status === 'passed' || c.status === 'failed')).toEqual(
        [],
      );
      // a refusal is not a rejection: the same level starts once the provider answers
      const started = expectOk(await post(kycStart, { level: 1 }, { token: u.accessToken }));
      expect(started).toMatchObject({ level: 1 });
      expect(started.token).toMatch(/^_act-sbx-/);
      expect((await kycStatus(u)).tier).toBe(0);
    });
  });
});

// ---- virtual-account-create 503 ------------------------------------------------------------

/**
 * virtual-account-create while Paystack does not answer this user's assign request. The user is at
 * tier 1: tier 0 gets no virtual account (the identity floor), so Paystack would not be asked.
 */
async function assignUnavailable(): Promise<{ user: TestUser; res: ApiResult }> {
  const user = await signUp({ tier: 1 });
  await paystack.fail({ path: '/dedicated_account/assign', field: 'email', value: emailOf(user) }, 'unavailable');
  const res = await post(virtualAccountCreate, {}, { token: user.accessToken });
  return { user, res };
}

describe('virtual-account-create', () => {
  describe('503: the payment provider is unavailable', () => {
    it('is 503 saying so; the account is left inactive (not pending), with no number, and no money moved', async () => {
      const { user, res } = await assignUnavailable();
      expectError(res, 503);
      expect(res.body).toEqual({
        success: false,
        status: 503,
        code: 'provider_unavailable',
        error: 'The virtual account could not be requested (payment provider unavailable); try again',
      });
      expect((await paystack.requests('/dedicated_account/assign')).filter((r) => r.body?.email === emailOf(user)))
        .toHaveLength(1);
      const va = expectOk(await get(virtualAccountGet, { token: user.accessToken }));
      expect(va).toMatchObject({ status: 'inactive', account_number: null });
      const wallet = expectOk(await get(walletGet, { token: user.accessToken }));
      expect(wallet).toMatchObject({ balance: 0, pending_deposits: 0 });
      const [txs] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.transactions where user_id = ${user.id}`;
      expect(txs?.n).toBe(0);
    });

    // as for escrow-fund: a provider's 503 says when to retry
    it('the 503 carries Retry-After', async () => {
      const { res } = await assignUnavailable();
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
    });
  });
});
