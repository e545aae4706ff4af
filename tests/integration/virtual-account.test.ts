// The dedicated virtual account: requested from Paystack, activated (or not) by the
// dedicatedaccount.assign.* webhooks, and bank transfers into it credited to the wallet once.
// The users who request an account are at tier 1: at tier 0 (phone only) the identity floor refuses
// virtual-account-create (tests/integration/kyc-floor.test.ts, which also shows a deposit to a
// tier-0 user's account).
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import transactionList from '../../supabase/functions/transaction-list/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';
import virtualAccountGet from '../../supabase/functions/virtual-account-get/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

/** A new user at tier 1, the lowest tier that may get a virtual account. */
const verified = (names: { first_name?: string; last_name?: string } = {}) => signUp({ ...names, tier: 1 });

const emailOf = (u: TestUser) => `${u.id}@customers.escrow.ng`;

const assignCalls = async (u: TestUser) =>
  (await paystack.requests('/dedicated_account/assign')).filter((r) => r.body?.email === emailOf(u));

const balanceOf = async (u: TestUser) => (await get(walletGet, { token: u.accessToken })).body.data.balance as number;

/** A user with an active virtual account; returns its number. */
async function activeAccount(u: TestUser): Promise<string> {
  const created = await post(virtualAccountCreate, {}, { token: u.accessToken });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const assigned = await paystack.assignOutcome(emailOf(u), true);
  expect(assigned.responses[0]?.status).toBe(200);
  const va = await get(virtualAccountGet, { token: u.accessToken });
  expect(va.body.data.status).toBe('active');
  return va.body.data.account_number!;
}

/** What webhook-payments kept of a delivered event in its inbox: its outcome, once per delivery key. */
const inboxOutcomes = async (reference: string) =>
  (await testDb()<{ outcome: string }[]>`
    select outcome from private.webhook_inbox where payload -> 'data' ->> 'reference' = ${reference}`)
    .map((r) => r.outcome);

const deposits = (userId: string) =>
  testDb()<
    {
      id: string;
      type: string;
      category: string;
      status: string;
      direction: string;
      amount: string;
      provider_charge_id: string;
    }[]
  >`
    select id, type, category::text, status::text, direction::text, amount::text, provider_charge_id
      from public.transactions where user_id = ${userId} and type = 'virtual_account_deposit'`;

// ---- requesting the account ----------------------------------------------------------------

describe('virtual-account-create and virtual-account-get', () => {
  describe('virtual-account-get', () => {
    it('virtual-account-get before any request is 404', async () => {
      const user = await signUp();
      const res = await get(virtualAccountGet, { token: user.accessToken });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        success: false,
        status: 404,
        code: 'virtual_account_not_found',
        error: 'No virtual account yet; create one with virtual-account-create',
      });
      const wallet = await get(walletGet, { token: user.accessToken });
      expect(wallet.body.data.virtual_account).toBeNull();
    });
  });

  describe('virtual-account-create', () => {
    it('requests a dedicated account for <userId>@customers.escrow.ng and is pending until assign.success', async () => {
      const user = await verified({ first_name: 'Chidi', last_name: 'Eze' });
      const res = await post(virtualAccountCreate, {}, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ success: true, status: 200 });
      expect(res.body.data).toMatchObject({ status: 'pending', account_number: null, failure_reason: null });

      const calls = await assignCalls(user);
      expect(calls).toHaveLength(1);
      expect(calls[0]?.body).toMatchObject({
        email: emailOf(user),
        first_name: 'Chidi',
        last_name: 'Eze',
        phone: user.phone,
        country: 'NG',
      });
      expect(typeof calls[0]?.body.preferred_bank).toBe('string');

      expect((await get(virtualAccountGet, { token: user.accessToken })).body.data.status).toBe('pending');

      const assigned = await paystack.assignOutcome(emailOf(user), true);
      expect(assigned.responses[0]).toEqual({
        status: 200,
        body: { success: true, status: 200, data: { received: true } },
      });
      const va = await get(virtualAccountGet, { token: user.accessToken });
      expect(va.status).toBe(200);
      expect(va.body.data).toMatchObject({
        status: 'active',
        bank_name: 'Test Bank',
        account_name: 'ESCROW/EZE CHIDI',
        failure_reason: null,
      });
      expect(va.body.data.account_number).toMatch(/^\d{10}$/);
      const [row] = await testDb()<{ provider_customer_code: string }[]>`
      select provider_customer_code from public.virtual_accounts where user_id = ${user.id}`;
      expect(row?.provider_customer_code).toBe(assigned.customer_code);
      const wallet = await get(walletGet, { token: user.accessToken });
      expect(wallet.body.data.virtual_account).toMatchObject({
        status: 'active',
        account_number: va.body.data.account_number,
      });
    });

    it('a pending or active account is returned as it is, with no second assign call', async () => {
      const user = await verified();
      const first = await post(virtualAccountCreate, {}, { token: user.accessToken });
      expect(first.body.data.status).toBe('pending');
      const again = await post(virtualAccountCreate, {}, { token: user.accessToken });
      expect(again.status).toBe(200);
      expect(again.body.data).toMatchObject({ status: 'pending' });
      expect(await assignCalls(user)).toHaveLength(1);

      await paystack.assignOutcome(emailOf(user), true);
      const active = await post(virtualAccountCreate, {}, { token: user.accessToken });
      expect(active.status).toBe(200);
      expect(active.body.data).toMatchObject({ status: 'active' });
      expect(active.body.data.account_number).toMatch(/^\d{10}$/);
      expect(await assignCalls(user)).toHaveLength(1);
    });

    it('concurrent creates ask Paystack once', async () => {
      const user = await verified();
      const all = await Promise.all(
        Array.from({ length: 5 }, () => post(virtualAccountCreate, {}, { token: user.accessToken })),
      );
      expect(all.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(all.every((r) => r.body.data.status === 'pending')).toBe(true);
      expect(await assignCalls(user)).toHaveLength(1);
    });

    it('assign.failed makes it inactive with a reason, and the user may retry (a new assign call)', async () => {
      const user = await verified();
      await post(virtualAccountCreate, {}, { token: user.accessToken });
      const failed = await paystack.assignOutcome(emailOf(user), false);
      expect(failed.responses[0]?.status).toBe(200);
      const va = await get(virtualAccountGet, { token: user.accessToken });
      expect(va.body.data).toMatchObject({ status: 'inactive', account_number: null });
      expect(typeof va.body.data.failure_reason).toBe('string');

      const retry = await post(virtualAccountCreate, {}, { token: user.accessToken });
      expect(retry.status).toBe(200);
      expect(retry.body.data).toMatchObject({ status: 'pending', failure_reason: null });
      expect(await assignCalls(user)).toHaveLength(2);

      await paystack.assignOutcome(emailOf(user), true);
      expect((await get(virtualAccountGet, { token: user.accessToken })).body.data.status).toBe('active');
    });

    it('a second failure after a retry (same Paystack customer) is not mistaken for a duplicate', async () => {
      const user = await verified();
      await post(virtualAccountCreate, {}, { token: user.accessToken });
      const first = await paystack.assignOutcome(emailOf(user), false);
      expect((await get(virtualAccountGet, { token: user.accessToken })).body.data.status).toBe('inactive');

      expect((await post(virtualAccountCreate, {}, { token: user.accessToken })).body.data.status).toBe('pending');
      const second = await paystack.assignOutcome(emailOf(user), false);
      expect(second.customer_code).toBe(first.customer_code);
      expect(second.responses[0]?.status).toBe(200);
      expect((await get(virtualAccountGet, { token: user.accessToken })).body.data.status).toBe('inactive');

      // so the user can still retry, and a success then activates it
      expect((await post(virtualAccountCreate, {}, { token: user.accessToken })).body.data.status).toBe('pending');
      expect(await assignCalls(user)).toHaveLength(3);
      await paystack.assignOutcome(emailOf(user), true);
      const va = await get(virtualAccountGet, { token: user.accessToken });
      expect(va.body.data).toMatchObject({ status: 'active', failure_reason: null });
    });

    it('a late assign.failed does not deactivate an active account', async () => {
      const user = await verified();
      const number = await activeAccount(user);
      const late = await paystack.assignOutcome(emailOf(user), false);
      expect(late.responses[0]?.status).toBe(200);
      const va = await get(virtualAccountGet, { token: user.accessToken });
      expect(va.body.data).toMatchObject({ status: 'active', account_number: number });
    });

    it('a provider refusal of the assign request is 502 and leaves it inactive for a retry', async () => {
      const user = await verified();
      await paystack.fail({ path: '/dedicated_account/assign', field: 'email', value: emailOf(user) }, 'refuse');
      const res = await post(virtualAccountCreate, {}, { token: user.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(502);
      expect(res.body).toMatchObject({ success: false, status: 502, code: 'virtual_account_refused' });
      expect(res.body.error).toMatch(/^The virtual account could not be requested \(.+\); try again$/);
      expect((await get(virtualAccountGet, { token: user.accessToken })).body.data.status).toBe('inactive');
    });
  });

  it('an assign event for a customer we do not know is flagged, 200', async () => {
    const stranger = await signUp();
    // no virtual-account-create: the fake has no assignment for this email, so deliver by hand
    const res = await paystack.deliver('dedicatedaccount.assign.success', {
      customer: { email: emailOf(stranger), customer_code: `CUS_stray${randomInt(1, 1e9)}` },
      dedicated_account: {
        id: randomInt(1, 1e9),
        account_number: `77${String(randomInt(0, 1e8)).padStart(8, '0')}`,
        bank: { name: 'Test Bank' },
      },
    });
    expect(res.responses[0]?.status).toBe(200);
    expect((await get(virtualAccountGet, { token: stranger.accessToken })).status).toBe(404);
    const [flag] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.payment_flags
       where reason = 'unknown_customer' and payload -> 'data' -> 'customer' ->> 'email' = ${emailOf(stranger)}`;
    expect(flag?.n).toBe(1);
  });

  it('needs a bearer token', async () => {
    expect((await post(virtualAccountCreate, {})).status).toBe(401);
    expect((await get(virtualAccountGet)).status).toBe(401);
  });
});

// ---- bank transfers in ---------------------------------------------------------------------

describe('bank transfer into the virtual account', () => {
  it('credits the wallet once even when delivered 5 times concurrently, as a succeeded virtual_account_deposit', async () => {
    const user = await verified();
    const number = await activeAccount(user);

    const out = await paystack.dvaDeposit(number, 2_500_000, { times: 5, concurrent: true }); // NGN 25,000
    expect(out.responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    for (const r of out.responses) expect(r.body).toEqual({ success: true, status: 200, data: { received: true } });

    expect(await balanceOf(user)).toBe(25_000);
    const rows = await deposits(user.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      type: 'virtual_account_deposit',
      category: 'deposit',
      status: 'succeeded',
      direction: 'in',
      amount: '2500000',
      provider_charge_id: String(out.data.id),
    });
    const list = await get(transactionList, { token: user.accessToken, query: { category: 'deposit' } });
    expect(list.body.data.data).toHaveLength(1);
    expect(list.body.data.data[0]).toMatchObject({
      id: rows[0]!.id,
      status: 'succeeded',
      amount: 25_000,
      completed_at: expect.any(String),
    });

    // one inbox row, its outcome the text operators read
    expect(await inboxOutcomes(out.data.reference)).toEqual(['virtual_account_deposit']);
    const [ledger] = await testDb()<{ balance: string; sum: string }[]>`
      select a.balance::text, coalesce(sum(e.amount), 0)::text as sum
        from private.ledger_accounts a left join private.ledger_entries e on e.account_id = a.id
       where a.kind = 'user_wallet' and a.owner_id = ${user.id} group by a.id`;
    expect(ledger).toEqual({ balance: '2500000', sum: '2500000' });

    // a second, separate transfer is a second deposit
    const second = await paystack.dvaDeposit(number, 10_050);
    expect(second.responses[0]?.status).toBe(200);
    expect(await balanceOf(user)).toBe(25_100.5);
    expect(await deposits(user.id)).toHaveLength(2);
  });

  it('is matched by customer_code when the account number is missing from the event', async () => {
    const user = await verified();
    await activeAccount(user);
    const [va] = await testDb()<{ provider_customer_code: string }[]>`
      select provider_customer_code from public.virtual_accounts where user_id = ${user.id}`;
    const id = randomInt(1, 2 ** 40);
    const res = await paystack.deliver('charge.success', {
      id,
      status: 'success',
      reference: `1000${id}`,
      amount: 500_000,
      currency: 'NGN',
      channel: 'dedicated_nuban',
      customer: { email: 'payer@example.com', customer_code: va!.provider_customer_code },
      authorization: { channel: 'dedicated_nuban', sender_name: 'EMEKA NWOSU' },
    });
    expect(res.responses[0]?.status).toBe(200);
    expect(await balanceOf(user)).toBe(5000);
  });

  it('naming an account number nobody has but a known customer_code: credited once by the code, as before', async () => {
    const user = await verified();
    await activeAccount(user);
    const [va] = await testDb()<{ provider_customer_code: string }[]>`
      select provider_customer_code from public.virtual_accounts where user_id = ${user.id}`;
    const unknown = `88${String(randomInt(0, 1e8)).padStart(8, '0')}`;
    const out = await paystack.dvaDeposit(unknown, 450_000, {
      customer_code: va!.provider_customer_code,
      times: 3,
      concurrent: true,
    });
    expect(out.responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await balanceOf(user)).toBe(4500);
    expect((await deposits(user.id)).map((d) => d.amount)).toEqual(['450000']);
    expect(await inboxOutcomes(out.data.reference)).toEqual(['virtual_account_deposit']);
  });

  it('a deposit to an account number nobody has is answered 200, flagged and credits nothing', async () => {
    const user = await verified();
    await activeAccount(user);
    const unknown = `88${String(randomInt(0, 1e8)).padStart(8, '0')}`;
    const out = await paystack.dvaDeposit(unknown, 700_000, { times: 2 });
    for (const r of out.responses) {
      expect(r).toEqual({ status: 200, body: { success: true, status: 200, data: { received: true } } });
    }
    expect(await inboxOutcomes(out.data.reference)).toEqual(['flagged:unknown_virtual_account']);
    const flags = await testDb()<{ reason: string; received_amount: string }[]>`
      select reason, received_amount::text from private.payment_flags where provider_reference = ${out.data.reference}`;
    expect(flags).toEqual([{ reason: 'unknown_virtual_account', received_amount: '700000' }]);
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.transactions where provider_charge_id = ${String(out.data.id)}`;
    expect(n?.n).toBe(0);
    expect(await balanceOf(user)).toBe(0);
  });
});
