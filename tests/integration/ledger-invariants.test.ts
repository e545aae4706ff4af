// The ledger's invariants, under concurrency:
//   * the sum of all account balances is zero;
//   * every account's balance equals the sum of its entries; every transfer sums to zero;
//   * no wallet is ever negative;
//   * every user's transactions agree with the ledger.
// First straight against private.post_transfer, then through a seeded random storm of top-ups,
// withdrawals, provider outcomes, duplicate webhooks and virtual-account deposits driven through
// the real server and the Paystack fake, and, at the same time, escrows between the same users
// funded from their wallets and disputed: raised, proposals (release, refund, splits at random,
// some out of range), answers, withdrawals, releases and refunds, with races on one escrow (two
// acceptances, an acceptance against a withdrawal or a release). STORM_SEED=<n> replays a storm
// (each operation draws its random numbers when it is scheduled; what the server answers under
// concurrency may still differ from one replay to the next).
import { describe, expect, it } from 'vitest';
import { get, post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { fundWallet } from '../support/escrows.ts';
import { accountKobo, walletKobo } from '../support/ledger.ts';
import { escrowsDisagreeing, transactionsDisagreeing } from '../support/ledger-checks.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import disputeGet from '../../supabase/functions/dispute-get/handler.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

/**
 * The user's transactions, read as the ledger should see them (support/ledger-checks.ts): the
 * wallet is what came in less what went out, and each movement has exactly the ledger transfers
 * its status implies.
 */
async function transactionsAgreeWithLedger(userId: string) {
  expect(await transactionsDisagreeing(testDb(), [userId])).toEqual([]);
}

async function fundedWallets(n: number, kobo: number): Promise<{ owners: string[]; accounts: number[] }> {
  const sql = testDb();
  const owners: string[] = [];
  const accounts: number[] = [];
  for (let i = 0; i < n; i++) {
    const user = await signUp();
    const [acc] = await sql<{ id: string }[]>`select private.owner_account('user_wallet', ${user.id}) as id`;
    await sql`select private.post_transfer(${`test-fund:${user.id}`}, 'test_funding',
      ${sql.json([{ system: 'provider_clearing', amount: -kobo }, { account_id: Number(acc?.id), amount: kobo }])})`;
    owners.push(user.id);
    accounts.push(Number(acc?.id));
  }
  return { owners, accounts };
}

describe('private.post_transfer under concurrency', () => {
  it('300 concurrent transfers draining 4 wallets into 4 others never overdraw one and keep the books balanced', async () => {
    const sql = testDb();
    const { accounts } = await fundedWallets(8, 10_000);
    const sentBefore = await Promise.all(
      accounts.slice(0, 4).map((a) => accountKobo(a)),
    );
    expect(sentBefore).toEqual([10_000, 10_000, 10_000, 10_000]);
    const before = await Promise.all(
      accounts.map((a) => accountKobo(a)),
    );
    // four senders drain into four receivers: most attempts must find the sender short
    const outcomes = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const from = accounts[i % 4] as number;
        const to = accounts[4 + ((i * 3) % 4)] as number;
        const amount = 500 + ((i * 7919) % 1500);
        try {
          await sql`select private.post_transfer(${`storm-sql:${crypto.randomUUID()}`}, 'test',
            ${sql.json([{ account_id: from, amount: -amount }, { account_id: to, amount }])})`;
          return 'ok';
        } catch (err) {
          expect((err as { code?: string }).code).toBe('ES402');
          return 'short';
        }
      }),
    );
    expect(outcomes.filter((o) => o === 'ok').length).toBeGreaterThan(10);
    expect(outcomes.filter((o) => o === 'short').length).toBeGreaterThan(10);
    const after = await Promise.all(
      accounts.map((a) => accountKobo(a)),
    );
    expect(after.every((b) => b >= 0)).toBe(true);
    expect(after.reduce((x, y) => x + y, 0)).toBe(before.reduce((x, y) => x + y, 0));
    await expectLedgerInvariants();
  });

  it('the same key posted 20 times at once makes one transfer; other entries under that key are refused', async () => {
    const sql = testDb();
    const { accounts } = await fundedWallets(2, 5_000);
    const key = `once:${crypto.randomUUID()}`;
    const entries = [{ account_id: accounts[0] as number, amount: -1_000 }, {
      account_id: accounts[1] as number,
      amount: 1_000,
    }, { system: 'platform_fees', amount: 0 }].filter((e) => e.amount !== 0);
    const ids = await Promise.all(
      Array.from(
        { length: 20 },
        async () =>
          (await sql<{ id: string }[]>`select private.post_transfer(${key}, 'test', ${sql.json(entries)}) as id`)[0]
            ?.id,
      ),
    );
    expect(new Set(ids).size).toBe(1);
    const [count] = await sql<
      { n: number }[]
    >`select count(*)::int as n from private.ledger_transfers where idempotency_key = ${key}`;
    expect(count?.n).toBe(1);
    expect(
      await accountKobo(accounts[0] as number),
    ).toBe(4_000);
    await expect(
      sql`select private.post_transfer(${key}, 'test', ${
        sql.json([{ account_id: accounts[0] as number, amount: -2_000 }, {
          account_id: accounts[1] as number,
          amount: 2_000,
        }])
      })`,
    ).rejects.toMatchObject({ code: 'ES409' });
    // a system entry replayed from another connection (another shard) is still the same transfer
    const feeKey = `fee:${crypto.randomUUID()}`;
    const feeEntries = [{ account_id: accounts[1] as number, amount: -100 }, { system: 'platform_fees', amount: 100 }];
    const feeIds = await Promise.all(
      Array.from(
        { length: 6 },
        async () =>
          (await sql<{ id: string }[]>`select private.post_transfer(${feeKey}, 'test', ${sql.json(feeEntries)}) as id`)[
            0
          ]
            ?.id,
      ),
    );
    expect(new Set(feeIds).size).toBe(1);
    await expectLedgerInvariants();
  });

  it('refuses malformed transfers: unbalanced, one entry, zero or fractional amounts, repeated account', async () => {
    const sql = testDb();
    const { accounts } = await fundedWallets(2, 1_000);
    const [a, b] = accounts as [number, number];
    const bad = [
      [{ account_id: a, amount: -100 }, { account_id: b, amount: 99 }],
      [{ account_id: a, amount: 0 }, { account_id: b, amount: 0 }],
      [{ account_id: a, amount: -100 }],
      [{ account_id: a, amount: -100.5 }, { account_id: b, amount: 100.5 }],
      [{ account_id: a, amount: -100 }, { account_id: a, amount: 100 }],
    ];
    for (const entries of bad) {
      await expect(sql`select private.post_transfer(${`bad:${crypto.randomUUID()}`}, 'test', ${sql.json(entries)})`)
        .rejects.toMatchObject({ code: 'ES422' });
    }
    await expectLedgerInvariants();
  });
});

/** mulberry32: a small seeded PRNG, so a failing storm can be replayed with STORM_SEED. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type StormUser = TestUser & { account: string; va?: string };

/** An escrow of the storm: the payer created and funded it from their wallet, the payee accepted. */
interface StormEscrow {
  id: string;
  conversationId: string;
  amountKobo: number;
  payer: StormUser;
  payee: StormUser;
  /** seen released or refunded (a settlement, a release, a refund): the storm mostly leaves it */
  closed?: boolean;
}

/** What a storm operation may be answered: anything else (a 500 above all) fails the storm. */
const ANSWERS: Record<string, number[]> = {
  'escrow-create': [201],
  'escrow-fund': [200, 402, 409],
  'escrow-accept': [200, 409],
  'escrow-release': [200, 409],
  'escrow-refund': [200, 409],
  'escrow-deliver': [200, 409],
  'message-send': [201],
  'dispute-raise': [201, 409],
  'dispute-propose': [201, 400, 409],
  'dispute-respond': [200, 403, 404, 409],
  'dispute-withdraw': [200, 403, 409],
};

describe('a random storm through the real server', () => {
  it(
    'top-ups, withdrawals, failures, reversals, duplicate webhooks, escrows and disputes keep every invariant',
    { timeout: 240_000 },
    async () => {
      const seed = Number(process.env.STORM_SEED ?? Date.now() % 1_000_000);
      const rnd = prng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
      const log: string[] = [`seed ${seed}`];
      const answered: Record<string, number> = {};

      const users: StormUser[] = [];
      // KYC tier 2 (docs/kyc.md#tiers-and-their-limits: NGN 200,000 at once, 500,000 a day and in the wallet): each user
      // starts with a NGN 60,000 top-up (over tier 1's NGN 50,000 at once); with the storm's
      // top-ups, withdrawals and deposits (at most NGN 20,000 each) a user moved NGN 80,000 to
      // 190,000 in the day and held at most NGN 115,000 over several seeds, so no limit refuses
      // one of them and the storm's answers stay as they were
      for (let i = 0; i < 8; i++) {
        const u = await signUp({ tier: 2 });
        const account = `7${String(Math.floor(rnd() * 1e9)).padStart(9, '0')}`;
        await paystack.registerAccount('058', account, 'OBI ADA');
        const added = await post(payoutAdd, {
          bank_code: '058',
          bank_name: 'GTBank',
          account_number: account,
          account_name: 'Ada Obi',
        }, { token: u.accessToken });
        expect(added.status, JSON.stringify(added.body)).toBe(201);
        users.push({ ...u, account });
      }
      // the last user's bank refuses every transfer (withdrawals, and escrow payouts to them)
      await paystack.fail({
        path: '/transfer',
        field: 'account_number',
        value: (users[4] as { account: string }).account,
      }, 'refuse');
      // two users get a virtual account
      for (const u of users.slice(0, 2)) {
        expect((await post(virtualAccountCreate, {}, { token: u.accessToken })).status).toBe(200);
        const number = `55${String(Math.floor(rnd() * 1e8)).padStart(8, '0')}`;
        await paystack.assignOutcome(`${u.id}@customers.escrow.ng`, true, { account_number: number });
        u.va = number;
      }
      // everyone starts with something to put in escrow (the storm's withdrawals compete for it)
      for (const u of users) await fundWallet(u, 60_000);

      const topup = async (u: TestUser) => {
        const amount = pick([100, 250.5, 1000, 5000, 12_000.75]);
        const r = await post(walletTopup, { amount }, { token: u.accessToken });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const ref = r.body.data.reference as string;
        const fate = rnd();
        if (fate < 0.6) await paystack.chargeSuccess(ref, { times: 1 + Math.floor(rnd() * 3), concurrent: true });
        else if (fate < 0.75) {
          // short-paid, and Paystack's verify agrees: nothing may be credited (held for review)
          await paystack.chargeStatus(ref, 'success', Math.round(amount * 100) - 1);
          await paystack.chargeSuccess(ref, { amount: Math.round(amount * 100) - 1 });
        }
        log.push(`topup ${amount} ${fate < 0.6 ? 'paid' : fate < 0.75 ? 'short-paid' : 'abandoned'}`);
      };
      const withdraw = async (u: TestUser) => {
        const amount = pick([100, 300, 1500, 4000, 20_000]);
        const r = await post(walletWithdraw, { amount }, { token: u.accessToken });
        log.push(`withdraw ${amount} -> ${r.status}`);
        if (r.status !== 200) {
          expect([409, 502]).toContain(r.status);
          return;
        }
        const ref = r.body.data.id as string;
        const fate = rnd();
        const opts = { times: 1 + Math.floor(rnd() * 3), concurrent: true };
        if (fate < 0.4) await paystack.transferOutcome(ref, 'transfer.success', opts);
        else if (fate < 0.6) await paystack.transferOutcome(ref, 'transfer.failed', opts);
        else if (fate < 0.75) await paystack.transferOutcome(ref, 'transfer.reversed', opts);
        else if (fate < 0.85) {
          await paystack.transferOutcome(ref, 'transfer.success');
          await paystack.transferOutcome(ref, 'transfer.reversed', opts);
        }
      };
      const deposit = async (u: TestUser & { va?: string }) => {
        if (!u.va) return;
        const kobo = pick([5_000, 150_000, 1_000_000]);
        await paystack.dvaDeposit(u.va, kobo, { times: 1 + Math.floor(rnd() * 3), concurrent: true });
        log.push(`deposit ${kobo}`);
      };

      // ---- escrows and disputes ----------------------------------------------------------------
      const escrows: StormEscrow[] = [];
      /** One call of an escrow or dispute operation; its answer must be one ANSWERS allows. */
      const act = async (op: string, who: TestUser, body: Record<string, unknown>, note = '') => {
        const r = await post(op, body, { token: who.accessToken });
        const line = `${op} ${note} -> ${r.status}`;
        log.push(line);
        answered[`${op} ${r.status}`] = (answered[`${op} ${r.status}`] ?? 0) + 1;
        expect(ANSWERS[op], `${line} ${JSON.stringify(r.body)}`).toContain(r.status);
        const closing = (op === 'escrow-release' || op === 'escrow-refund') && r.status === 200 ||
          op === 'dispute-respond' && r.status === 200 && r.body.data.status === 'resolved';
        const e = escrows.find((x) => x.id === body.escrow_id);
        if (closing && e) e.closed = true;
        return r;
      };
      /** A new escrow between two users, funded from the payer's wallet (if it has enough) and accepted. */
      const newEscrow = async (payer: StormUser, payee: StormUser, amount: number) => {
        const created = await act('escrow-create', payer, {
          category: 'goods_products',
          payer_role: 'initiator',
          title: 'Storm deal',
          counterparty_phone: payee.phone,
          amount,
        }, `${amount}`);
        const e: StormEscrow = {
          id: created.body.data.escrow_id,
          conversationId: created.body.data.conversation_id,
          amountKobo: Math.round(amount * 100),
          payer,
          payee,
        };
        escrows.push(e);
        const funded = await act('escrow-fund', payer, { escrow_id: e.id, method: 'wallet' });
        if (funded.status === 200) await act('escrow-accept', payee, { escrow_id: e.id });
      };
      /**
       * Something a party does to an escrow, decided by the numbers drawn when it was scheduled (x)
       * and what dispute-get answers now: raise, propose, answer, withdraw, or release / refund /
       * deliver / a payer's message; sometimes two of them at once (a race).
       */
      const onEscrow = async (e: StormEscrow, x: number[]) => {
        const [a = 0, b = 0, c = 0, d = 0] = x;
        const party = (v: number) => (v < 0.5 ? e.payer : e.payee);
        const other = (u: TestUser) => (u === e.payer ? e.payee : e.payer);
        const seen = await get(disputeGet, { token: e.payer.accessToken, query: { escrow_id: e.id } });
        const open = seen.status === 200 && seen.body.data.status === 'negotiation' ? seen.body.data : null;
        const id = { escrow_id: e.id };
        if (!open) {
          if (a < 0.55) {
            await act('dispute-raise', party(b), {
              ...id,
              reason_code: c < 0.3 ? 'item_not_received' : c < 0.6 ? 'item_damaged' : 'other',
              reason: 'Not what we agreed on, sorry',
            }, b < 0.5 ? 'by payer' : 'by payee');
          } else if (a < 0.7) await act('escrow-release', e.payer, id);
          else if (a < 0.8) await act('escrow-refund', e.payee, id);
          else if (a < 0.9) await act('escrow-deliver', e.payee, id);
          else await act('message-send', e.payer, { conversation_id: e.conversationId, content: 'Any update?' });
          return;
        }
        const proposals = open.proposals as { id: string; proposed_by: string }[];
        const propose = (by: TestUser, v: number) => {
          const outcome = v < 0.3 ? 'release' : v < 0.5 ? 'refund' : 'split';
          // a split of what is held: mostly inside 0.01 .. R - 0.01, sometimes R itself (400)
          const P = v < 0.9 ? 1 + Math.floor(((v - 0.5) / 0.4) * (e.amountKobo - 1)) : e.amountKobo;
          return act('dispute-propose', by, {
            ...id,
            outcome,
            ...(outcome === 'split' ? { payee_amount: Math.max(1, P) / 100 } : {}),
          }, `${outcome}${outcome === 'split' ? ` ${Math.max(1, P)}/${e.amountKobo}` : ''}`);
        };
        const answer = (p: { id: string; proposed_by: string }, by: TestUser, accept: boolean) =>
          act('dispute-respond', by, { ...id, proposal_id: p.id, accept }, accept ? 'accept' : 'reject');
        const withdraw = (by: TestUser) => act('dispute-withdraw', by, id);
        const target = proposals[Math.floor(c * proposals.length)];
        if (a < 0.3 || !target) await propose(party(b), d);
        else if (a < 0.6) {
          // mostly the other party; now and then the proposer (403)
          const by = c < 0.9 ? other(target.proposed_by === e.payer.id ? e.payer : e.payee) : e.payer;
          await answer(target, by, b < 0.75);
        } else if (a < 0.7) await withdraw(open.raised_by === e.payer.id ? e.payer : party(b));
        else if (a < 0.8) await act('message-send', e.payer, { conversation_id: e.conversationId, content: 'Hello?' });
        else {
          // a race on one escrow: the right party accepts twice, or accepts while the raiser
          // withdraws, or while the payer tries to release and the payee to refund
          const answerer = other(target.proposed_by === e.payer.id ? e.payer : e.payee);
          const raiser = open.raised_by === e.payer.id ? e.payer : e.payee;
          log.push(`race on ${e.id}`);
          answered.races = (answered.races ?? 0) + 1;
          await Promise.all(
            b < 0.4
              ? [answer(target, answerer, true), answer(target, answerer, true)]
              : b < 0.7
              ? [answer(target, answerer, true), withdraw(raiser)]
              : [
                answer(target, answerer, true),
                act('escrow-release', e.payer, id),
                act('escrow-refund', e.payee, id),
                propose(other(answerer), d),
              ],
          );
        }
      };
      // Within a wave each escrow is acted on at most once by this picker (the races above are
      // the deliberate exceptions); its users may be parties to other escrows acted on in the same
      // wave. Escrow transitions notify the two parties in the order of their roles, each
      // notification holding its user's lock to the end of the transaction, so two escrows of the
      // same users acted on at once can deadlock: Postgres aborts one and shared/core/db.ts runs it
      // again (docs/decisions.md#disputes). This storm found that deadlock (as 500s) before the
      // retry existed.
      let busy = new Set<string>();
      const escrowOp = (x: number[]): Promise<unknown> | null => {
        const [a = 0, b = 0, c = 0] = x;
        const live = escrows.filter((e) => !e.closed && !busy.has(e.id));
        if (live.length < 2 || a < 0.1) {
          const payer = users[Math.floor(b * users.length)] as StormUser;
          const payee =
            users[(users.indexOf(payer) + 1 + Math.floor(c * (users.length - 1))) % users.length] as StormUser;
          const amount = [0.05, 1, 99.99, 2_500, 12_345.67, 40_000][Math.floor(x[3] as number * 6)] as number;
          return newEscrow(payer, payee, amount);
        }
        // mostly one still open (funded or disputed), now and then a closed one (it refuses)
        const closed = escrows.filter((e) => e.closed && !busy.has(e.id));
        const pool = c < 0.9 || closed.length === 0 ? live : closed;
        const e = pool[Math.floor(b * pool.length)] as StormEscrow;
        busy.add(e.id);
        return onEscrow(e, x.slice(3));
      };

      let operations = 0;
      try {
        for (let wave = 0; wave < 40; wave++) {
          busy = new Set();
          await Promise.all(
            Array.from({ length: 14 }, () => {
              operations++;
              const u = pick(users);
              const op = rnd();
              // every number an operation uses is drawn now, in schedule order
              const x = Array.from({ length: 8 }, rnd);
              if (op >= 0.38) {
                const escrow = escrowOp(x);
                if (escrow) return escrow;
              }
              return op < 0.15 || op >= 0.38 ? topup(u) : op < 0.3 ? withdraw(u) : deposit(u);
            }),
          );
          await expectLedgerInvariants();
        }
        for (const u of users) {
          await transactionsAgreeWithLedger(u.id);
          const wallet = await get(walletGet, { token: u.accessToken });
          expect(Math.round(wallet.body.data.balance * 100)).toBe(await walletKobo(u.id));
        }
        await expectLedgerInvariants();
        await escrowsAgree(escrows.map((e) => e.id));
        const disputes = await testDb()<{ status: string; outcome: string | null; n: number }[]>`
          select status, outcome, count(*)::int as n from public.disputes
           where escrow_id = any(${escrows.map((e) => e.id)}::uuid[]) group by 1, 2 order by 1, 2`;
        const settled = disputes.filter((d) => d.status === 'resolved').reduce((n, d) => n + d.n, 0);
        // the figures of this storm, for docs/disputes.md
        console.log(
          `storm seed ${seed}: ${operations} operations, ${escrows.length} escrows, disputes ${
            JSON.stringify(disputes)
          } (${settled} settled), answers ${JSON.stringify(answered)}`,
        );
      } catch (err) {
        console.error(`storm failed; replay with STORM_SEED=${seed}\n${log.join('\n')}`);
        throw err;
      }
    },
  );
});

/**
 * Each escrow of the storm agrees with its disputes and its hold (support/ledger-checks.ts): the
 * hold is the total charge while the money is held (funded, disputed) and 0 once it is released or
 * refunded; a settled dispute closed the escrow the way its outcome says; at most one dispute is open.
 */
async function escrowsAgree(ids: string[]) {
  expect(await escrowsDisagreeing(testDb(), ids)).toEqual([]);
}
