// An Idempotency-Key holds through a crash or an outage at the worst moments: the connection to
// Postgres cut after the operation's statements and before its answer is stored, and cut after
// COMMIT was sent but before its acknowledgement was read. The functions run in this process with
// their database connections through a proxy that cuts them at those moments
// (support/pg-fault-proxy.ts); a retry with the same key replays or runs once, never twice.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFaultProxy } from '../support/pg-fault-proxy.ts';
import { testDb } from '../support/db.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import { fundedDeal, fundWallet } from '../support/escrows.ts';
import { addPayout } from '../support/payouts.ts';
import { raiseTier } from '../support/kyc.ts';
import { LEDGER_HOLDS, ledgerInvariants } from '../support/ledger-checks.ts';

// every connection of the functions in this process goes through the proxy
const proxy = await startFaultProxy(inject('databaseUrl'));
process.env.DATABASE_URL = proxy.url;
const { closeDb } = await import('../../shared/core/db.ts');
const { getConfig } = await import('../../shared/core/config.ts');
const handlers = {
  'escrow-create': (await import('../../supabase/functions/escrow-create/handler.ts')).default,
  'escrow-release': (await import('../../supabase/functions/escrow-release/handler.ts')).default,
  'wallet-withdraw': (await import('../../supabase/functions/wallet-withdraw/handler.ts')).default,
};

beforeAll(() => {
  expect(getConfig().databaseUrl).toBe(proxy.url);
});
afterAll(async () => {
  await closeDb();
  await proxy.close();
});

interface Answer {
  status: number;
  replayed: string | null;
  text: string;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** The operation called in this process, as the functions server would call it. */
async function call(op: keyof typeof handlers, user: TestUser, body: unknown, key: string): Promise<Answer> {
  const res = await handlers[op](
    new Request(`http://127.0.0.1/functions/v1/${op}`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${user.accessToken}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': key,
      },
      body: JSON.stringify(body),
    }),
  );
  const text = await res.text();
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), text, body: JSON.parse(text) };
}

const keyRow = async (userId: string, key: string) =>
  (await testDb()<{ response_status: number | null }[]>`
    select response_status from private.idempotency_keys where user_id = ${userId} and key = ${key}`)[0];

const escrowsTitled = async (userId: string, title: string) =>
  (await testDb()<{ n: number }[]>`
    select count(*)::int as n from public.escrows where initiator_id = ${userId} and title = ${title}`)[0]!.n;

describe('escrow-create', () => {
  const create = async () => {
    const [user, other] = await Promise.all([signUp(), signUp()]);
    const title = `Fault ${randomUUID().slice(0, 8)}`;
    const body = {
      category: 'goods_products',
      payer_role: 'initiator',
      title,
      counterparty_phone: other.phone,
      amount: 5000,
    };
    return { user, title, body, key: `fault-${randomUUID()}` };
  };

  it('cut before the answer is stored: nothing committed, the retry runs once', async () => {
    const { user, title, body, key } = await create();
    proxy.arm({ marker: key, also: 'idempotency_answer', point: 'before-statement' });
    const fired = proxy.fired();
    const first = await call('escrow-create', user, body, key);
    expect(proxy.fired()).toBe(fired + 1);
    expect(first.status, first.text).toBe(503);
    expect(await keyRow(user.id, key)).toBeUndefined();
    expect(await escrowsTitled(user.id, title)).toBe(0);

    const retry = await call('escrow-create', user, body, key);
    expect(retry.status, retry.text).toBe(201);
    expect(retry.replayed).toBeNull();
    expect(await escrowsTitled(user.id, title)).toBe(1);
    const again = await call('escrow-create', user, body, key);
    expect([again.status, again.replayed, again.text]).toEqual([201, 'true', retry.text]);
  });

  it('cut after COMMIT, before its acknowledgement: the retry replays the committed answer', async () => {
    const { user, title, body, key } = await create();
    proxy.arm({ marker: key, also: 'idempotency_answer', point: 'after-commit' });
    const fired = proxy.fired();
    const first = await call('escrow-create', user, body, key);
    expect(proxy.fired()).toBe(fired + 1);
    expect(first.status, first.text).toBe(503);
    // committed all the same: the escrow and, with it, its answer
    expect((await keyRow(user.id, key))?.response_status).toBe(201);
    expect(await escrowsTitled(user.id, title)).toBe(1);

    const retry = await call('escrow-create', user, body, key);
    expect(retry.status, retry.text).toBe(201);
    expect(retry.replayed).toBe('true');
    const [made] = await testDb()<{ id: string }[]>`
      select id from public.escrows where initiator_id = ${user.id} and title = ${title}`;
    expect(retry.body.data.escrow_id).toBe(made!.id);
    expect(await escrowsTitled(user.id, title)).toBe(1);
  });
});

describe('escrow-release', () => {
  it('cut after COMMIT: one release, one payout, and the retry replays it', async () => {
    const deal = await fundedDeal();
    await raiseTier(deal.payee.id, 1); // tier 0 holds what it receives: no payout would start
    await addPayout(deal.payee);
    const key = `fault-${randomUUID()}`;
    proxy.arm({ marker: key, also: 'idempotency_answer', point: 'after-commit' });
    const first = await call('escrow-release', deal.payer, { escrow_id: deal.escrowId }, key);
    expect(first.status, first.text).toBe(503);
    const retry = await call('escrow-release', deal.payer, { escrow_id: deal.escrowId }, key);
    expect([retry.status, retry.replayed], retry.text).toEqual([200, 'true']);
    expect(retry.body.data.status).toBe('released');
    const payouts = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_payout'`;
    expect(payouts[0]!.n).toBe(1);
    // handed to the provider once: by the job (a commit whose outcome the request never learnt
    // starts nothing after it), or by a later request, never by both

    expect(await ledgerInvariants(testDb())).toEqual(LEDGER_HOLDS);
  });
});

describe('wallet-withdraw', () => {
  const ready = async () => {
    const user = await signUp({ tier: 1 });
    await fundWallet(user, 5000);
    await addPayout(user);
    return user;
  };
  const withdrawals = async (userId: string) =>
    await testDb()<{ id: string; status: string }[]>`
      select id, status::text from public.transactions where user_id = ${userId} and type = 'withdrawal'`;
  const transfersFor = async (reference: string) =>
    (await paystack.requests('/transfer')).filter((r) => r.body?.reference === reference);
  const balance = async (userId: string) =>
    Number((await testDb()<{ b: string }[]>`select private.wallet_balance(${userId})::text as b`)[0]!.b);

  it('cut after the transfer, before the answer: the claim holds for its lease, then the retry resumes without a second transfer', async () => {
    const user = await ready();
    const key = `fault-${randomUUID()}`;
    proxy.arm({ marker: key, also: 'idempotency_answer', point: 'before-statement' });
    const first = await call('wallet-withdraw', user, { amount: 2000 }, key);
    expect(first.status, first.text).toBe(503);
    const [made] = await withdrawals(user.id);
    expect(made).toBeDefined();
    expect(await transfersFor(made!.id)).toHaveLength(1);

    // the claim committed with the withdrawal; its first request may still be running
    const early = await call('wallet-withdraw', user, { amount: 2000 }, key);
    expect([early.status, early.body.code]).toEqual([409, 'idempotency_in_progress']);

    await testDb()`update private.idempotency_keys set claimed_at = claimed_at - interval '61 seconds'
                    where user_id = ${user.id} and key = ${key}`;
    const resumed = await call('wallet-withdraw', user, { amount: 2000 }, key);
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.body.data.id).toBe(made!.id);
    expect(await withdrawals(user.id)).toHaveLength(1);
    expect(await transfersFor(made!.id)).toHaveLength(1);
    expect(await balance(user.id)).toBe(300_000);

    const replay = await call('wallet-withdraw', user, { amount: 2000 }, key);
    expect([replay.status, replay.replayed, replay.text]).toEqual([200, 'true', resumed.text]);
  });

  it('cut after the claim committed, before the withdrawal: the resumed retry withdraws once', async () => {
    const user = await ready();
    const key = `fault-${randomUUID()}`;
    proxy.arm({ marker: key, also: 'idempotency_claim', point: 'after-commit' });
    const first = await call('wallet-withdraw', user, { amount: 1000 }, key);
    expect(first.status, first.text).toBe(503);
    expect(await withdrawals(user.id)).toHaveLength(0);
    await testDb()`update private.idempotency_keys set claimed_at = claimed_at - interval '61 seconds'
                    where user_id = ${user.id} and key = ${key}`;
    const resumed = await call('wallet-withdraw', user, { amount: 1000 }, key);
    expect(resumed.status, resumed.text).toBe(200);
    const made = await withdrawals(user.id);
    expect(made).toHaveLength(1);
    expect(await transfersFor(made[0]!.id)).toHaveLength(1);
    expect(await balance(user.id)).toBe(400_000);
  });

  it('the ledger holds after the faults', async () => {
    expect(await ledgerInvariants(testDb())).toEqual(LEDGER_HOLDS);
  });
});
