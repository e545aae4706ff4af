// Invitations cannot be used to spam or phish (docs/security.md#3-no-sms-abuse-or-phishing-through-invites), through the real
// server: escrows whose invite SMS goes out at once (payer_role counterparty) are limited per
// initiator (INVITE_MAX_PER_HOUR 20, INVITE_MAX_PER_DAY 100: 429 with Retry-After, nothing
// created, a failed creation spends nothing); one phone receives at most 3 invite SMS a day from
// all initiators together (INVITE_SMS_MAX_PER_PHONE_PER_DAY), at creation or after funding, even
// when the invites arrive at the same moment; further invites are created without an SMS; one
// initiator's escrows send at most 20 invite SMS a day whoever pays (INVITE_SMS_MAX_PER_INITIATOR_PER_DAY:
// a funding over it succeeds with its SMS withheld, a counterparty-paid creation is 429); and an
// SMS never carries the title, the description or a first name's hostile rest.
//
// The test stack sets no INVITE_* variables, so the defaults apply. Every test uses its own
// users and phones.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type ApiResult, type BodyOf, expectOk, get, post } from '../support/api.ts';
import { lastSms, smsCount, testDb } from '../support/db.ts';
import { fundWallet } from '../support/escrows.ts';
import { newPhone, signUp, type TestUser, verifyPhone } from '../support/users.ts';
import authSignup from '../../supabase/functions/auth-signup/handler.ts';
import escrowCancel_ from '../../supabase/functions/escrow-cancel/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import escrowFund from '../../supabase/functions/escrow-fund/handler.ts';
import escrowList from '../../supabase/functions/escrow-list/handler.ts';
import profileUpdate from '../../supabase/functions/profile-update/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const escrowCancel = (u: TestUser, id: string) => post(escrowCancel_, { escrow_id: id }, { token: u.accessToken });

const HOURLY = 20;
const DAILY = 100;
const PER_PHONE = 3;

const create = (u: TestUser, phone: string, over: Record<string, unknown> = {}) =>
  post(
    escrowCreate,
    {
      category: 'goods_products',
      payer_role: 'counterparty',
      title: 'Generator',
      counterparty_phone: phone,
      amount: 5_000,
      ...over,
    },
    { token: u.accessToken },
  );

const escrowsOf = async (initiatorId: string) =>
  (await testDb()<{ n: number }[]>`select count(*)::int as n from public.escrows where initiator_id = ${initiatorId}`)[
    0
  ]?.n ?? 0;

const escrowsTo = async (phone: string) =>
  (await testDb()<{ n: number }[]>`select count(*)::int as n from public.escrows where counterparty_phone = ${phone}`)[
    0
  ]?.n ?? 0;

/** Every SMS row for the phone, withheld ones included, oldest first. */
const outbox = (phone: string) =>
  testDb()<{ body: string; withheld: string | null; sent_at: Date | null }[]>`
    select body, withheld, sent_at from private.sms_outbox where phone = ${phone} order by id`;

const withheldCount = async (phone: string) =>
  (await outbox(phone)).filter((r) => r.withheld === 'invite_daily_cap').length;

/** Creates n counterparty-paid escrows from u, each inviting a fresh phone; all must be 201. */
async function createMany(u: TestUser, n: number) {
  for (let i = 0; i < n; i++) {
    const r = await create(u, newPhone().e164, { title: `Deal ${i}` });
    expect(r.status, `creation ${i + 1}: ${JSON.stringify(r.body)}`).toBe(201);
  }
}

function expect429(r: ApiResult, maxWaitSeconds: number) {
  expect(r.status, JSON.stringify(r.body)).toBe(429);
  expect(r.body).toMatchObject({ success: false, status: 429 });
  const retryAfter = Number(r.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter), `Retry-After: ${r.headers.get('retry-after')}`).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxWaitSeconds);
  // the wait is in the message too, in words a person reads
  expect(r.body.error).toMatch(/try again|in \d+ (second|minute|hour)s?/);
  expect(r.body.error).toMatch(/\d+ (second|minute|hour)s?/);
  return retryAfter;
}

async function signUpWithPhone(phone: string, firstName = 'Late'): Promise<TestUser> {
  await verifyPhone(phone);
  const password = 'a sound passphrase';
  const res = await post(authSignup, { phone, first_name: firstName, last_name: 'Comer', password });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return {
    id: res.body.data.user.id,
    phone,
    password,
    accessToken: res.body.data.session.access_token,
    refreshToken: res.body.data.session.refresh_token,
  };
}

// ---- per initiator ---------------------------------------------------------------------------

describe('escrows that invite at once are limited per initiator', () => {
  it(
    `escrow number ${
      HOURLY + 1
    } of the counterparty-paid kind within an hour is 429 with Retry-After and the wait in the message; nothing is created`,
    { timeout: 90_000 },
    async () => {
      const me = await signUp();
      await createMany(me, HOURLY);
      expect(await escrowsOf(me.id)).toBe(HOURLY);

      const victim = newPhone().e164;
      const refused = await create(me, victim, { title: 'Your Escrow login code is 482913' });
      expect429(refused, 3600);
      expect(refused.body.error).toMatch(/\d+ minutes?/);
      // nothing at all was created, and nobody was texted
      expect(await escrowsOf(me.id)).toBe(HOURLY);
      expect(await escrowsTo(victim)).toBe(0);
      expect(await outbox(victim)).toEqual([]);
      // asking again does not help
      expect429(await create(me, victim), 3600);
      expect(await escrowsOf(me.id)).toBe(HOURLY);

      // an escrow the initiator pays invites nobody until the money is in: it is not limited
      const own = await create(me, victim, { payer_role: 'initiator' });
      expect(own.status, JSON.stringify(own.body)).toBe(201);
      expect(await smsCount(victim)).toBe(0);

      // another initiator is not affected
      const other = await signUp();
      expect((await create(other, newPhone().e164)).status).toBe(201);
    },
  );

  it(
    'a creation that fails inside its transaction gives its unit back; so does a refused one',
    { timeout: 90_000 },
    async () => {
      const me = await signUp();
      // Fault injection: for this initiator only, inserting an escrow fails (a check constraint that
      // existing rows are not held to). The failure comes after the limit was taken, in the same
      // transaction, so the rollback must take the unit back with it.
      const constraint = `invite_abuse_fail_${randomBytes(6).toString('hex')}`;
      await testDb().unsafe(
        `alter table public.escrows add constraint ${constraint} check (initiator_id <> '${me.id}') not valid`,
      );
      try {
        for (let i = 0; i < 3; i++) {
          const failed = await create(me, newPhone().e164);
          expect(failed.status, JSON.stringify(failed.body)).toBe(500);
        }
      } finally {
        await testDb().unsafe(`alter table public.escrows drop constraint ${constraint}`);
      }
      // refused before any work: your own number
      const self = await create(me, me.phone);
      expect(self.status).toBe(409);
      expect(self.body).toMatchObject({ code: 'counterparty_is_self' });
      expect(await escrowsOf(me.id)).toBe(0);

      // all 20 units are still there
      await createMany(me, HOURLY);
      expect429(await create(me, newPhone().e164), 3600);
      expect(await escrowsOf(me.id)).toBe(HOURLY);
    },
  );

  it(`over ${DAILY} in a day is 429 as well, with the wait until a slot of the day frees up`, async () => {
    const me = await signUp();
    // the day's earlier invitations, made more than an hour ago (the hourly limit is untouched)
    await testDb()`
      insert into private.rate_limit_events (key, created_at)
      select ${`invite:day:${me.id}`}, now() - interval '2 hours' - make_interval(secs => g) from generate_series(1, ${DAILY}) g`;
    const victim = newPhone().e164;
    const r = await create(me, victim);
    const wait = expect429(r, 86_400);
    expect(wait).toBeGreaterThan(3600);
    expect(r.body.error).toMatch(/\d+ hours?/);
    expect(await escrowsOf(me.id)).toBe(0);
    expect(await outbox(victim)).toEqual([]);
  });
});

describe('a limited request with an Idempotency-Key', () => {
  it('carries Retry-After, and the same key works once the limit has passed (a 429 is not replayed)', async () => {
    const me = await signUp();
    await testDb()`
      insert into private.rate_limit_events (key, created_at)
      select ${`invite:day:${me.id}`}, now() - interval '2 hours' - make_interval(secs => g) from generate_series(1, ${DAILY}) g`;
    const body: BodyOf<typeof escrowCreate> = {
      category: 'goods_products',
      payer_role: 'counterparty',
      title: 'Generator',
      counterparty_phone: newPhone().e164,
      amount: 5_000,
    };
    const headers = { 'Idempotency-Key': `invite-${randomBytes(8).toString('hex')}` };
    const limited = await post(escrowCreate, body, { token: me.accessToken, headers });
    expect429(limited, 86_400);
    expect(limited.headers.get('idempotent-replayed')).toBeNull();
    // the day's earlier invitations age out
    await testDb()`delete from private.rate_limit_events where key = ${`invite:day:${me.id}`}`;
    const again = await post(escrowCreate, body, { token: me.accessToken, headers });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    // and now that answer is the key's: replayed
    const replay = await post(escrowCreate, body, { token: me.accessToken, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.escrow_id).toBe(again.body.data.escrow_id);
  });
});

// ---- per phone -------------------------------------------------------------------------------

describe(`one phone receives at most ${PER_PHONE} invite SMS a day, from all initiators together`, () => {
  it(
    'the 4th and later invites are created without an SMS (recorded withheld, never sent); the invitee sees them all after signing up',
    { timeout: 60_000 },
    async () => {
      const phone = newPhone().e164;
      // the 5th funds its escrow from a topped-up wallet: tier 1 (tier 0 moves no money)
      const initiators = await Promise.all(
        Array.from({ length: 5 }, (_, i) => signUp({ first_name: `Inviter${'abcde'[i]}`, tier: i === 4 ? 1 : 0 })),
      );
      const ids: string[] = [];
      for (const [i, u] of initiators.slice(0, PER_PHONE).entries()) {
        const r = await create(u, phone);
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        ids.push(r.body.data.escrow_id);
        expect(await smsCount(phone)).toBe(i + 1);
      }
      // the 4th: a counterparty-paid escrow, created, no SMS
      const fourth = await create(initiators[3]!, phone);
      expect(fourth.status, JSON.stringify(fourth.body)).toBe(201);
      ids.push(fourth.body.data.escrow_id);
      expect(await smsCount(phone)).toBe(PER_PHONE);
      expect(await withheldCount(phone)).toBe(1);

      // the 5th: an initiator-paid escrow, whose invite goes out when the money is in; capped too
      const fifth = await create(initiators[4]!, phone, { payer_role: 'initiator' });
      expect(fifth.status).toBe(201);
      ids.push(fifth.body.data.escrow_id);
      await fundWallet(initiators[4]!, fifth.body.data.fee_breakdown.total_charge);
      const funded = await post(escrowFund, { escrow_id: fifth.body.data.escrow_id, method: 'wallet' }, {
        token: initiators[4]!.accessToken,
      });
      expect(expectOk(funded).status).toBe('active');
      expect(await smsCount(phone)).toBe(PER_PHONE);
      expect(await withheldCount(phone)).toBe(2);

      // withheld rows are never sent, not even by a later dispatch (another creation dispatches the queue)
      expect((await create(initiators[0]!, newPhone().e164)).status).toBe(201);
      const rows = await outbox(phone);
      expect(rows).toHaveLength(PER_PHONE + 2);
      expect(rows.filter((r) => r.withheld === null).every((r) => r.sent_at !== null)).toBe(true);
      expect(rows.filter((r) => r.withheld !== null).every((r) => r.sent_at === null)).toBe(true);

      // the invitee signs up with that phone and finds every invitation in the app
      const invitee = await signUpWithPhone(phone);
      const listed = expectOk(await get(escrowList, { token: invitee.accessToken }));
      expect(listed.map((e: { id: string }) => e.id).sort()).toEqual([...ids].sort());
    },
  );

  it(
    'holds when invites to one phone arrive at the same moment, at creation and after funding',
    { timeout: 60_000 },
    async () => {
      const phone = newPhone().e164;
      // the last three fund their drafts from topped-up wallets: tier 1 (tier 0 moves no money)
      const initiators = await Promise.all(Array.from({ length: 6 }, (_, i) => signUp({ tier: i >= 3 ? 1 : 0 })));
      // three initiator-paid drafts, ready to be funded (no SMS yet)
      const drafts: { user: TestUser; id: string }[] = [];
      for (const u of initiators.slice(3)) {
        const r = await create(u, phone, { payer_role: 'initiator', amount: 100 });
        expect(r.status).toBe(201);
        await fundWallet(u, r.body.data.fee_breakdown.total_charge);
        drafts.push({ user: u, id: r.body.data.escrow_id });
      }
      expect(await outbox(phone)).toEqual([]);

      // all at once: three counterparty-paid creations and three fundings inviting the same phone
      const results = await Promise.all([
        ...initiators.slice(0, 3).map((u) => create(u, phone)),
        ...drafts.map((d) => post(escrowFund, { escrow_id: d.id, method: 'wallet' }, { token: d.user.accessToken })),
      ]);
      for (const r of results) expect([200, 201], JSON.stringify(r.body)).toContain(r.status);
      expect(await escrowsTo(phone)).toBe(6);
      expect(await smsCount(phone)).toBe(PER_PHONE);
      expect(await withheldCount(phone)).toBe(6 - PER_PHONE);
    },
  );

  it('is per phone: a different phone still gets its invites', async () => {
    const [a, b] = await Promise.all([signUp(), signUp()]);
    const busy = newPhone().e164;
    for (let i = 0; i < PER_PHONE + 1; i++) expect((await create(i % 2 ? a : b, busy)).status).toBe(201);
    expect(await smsCount(busy)).toBe(PER_PHONE);
    const quiet = newPhone().e164;
    expect((await create(a, quiet)).status).toBe(201);
    expect(await smsCount(quiet)).toBe(1);
  });
});

// ---- per initiator, whoever pays ---------------------------------------------------------------

const PER_INITIATOR_SMS = 20;

/** An initiator-paid escrow of NGN 0.01 to a fresh phone, funded from the wallet: answers both. */
async function fundedTiny(me: TestUser): Promise<{ id: string; phone: string; funded: ApiResult }> {
  const phone = newPhone().e164;
  const r = await create(me, phone, { payer_role: 'initiator', amount: 0.01 });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const funded = await post(escrowFund, { escrow_id: r.body.data.escrow_id, method: 'wallet' }, {
    token: me.accessToken,
  });
  return { id: r.body.data.escrow_id, phone, funded };
}

const initiatorCapped = async (phone: string) =>
  (await outbox(phone)).filter((r) => r.withheld === 'invite_initiator_cap').length;

describe(`one initiator's escrows send at most ${PER_INITIATOR_SMS} invite SMS a day, whoever pays`, () => {
  it(
    `the ${
      PER_INITIATOR_SMS + 1
    }st escrow of NGN 0.01 funded from the wallet and cancelled at once is funded but sends no SMS`,
    { timeout: 120_000 },
    async () => {
      const me = await signUp({ tier: 1 }); // funds from a topped-up wallet: tier 0 moves no money
      await fundWallet(me, 100);
      const phones: string[] = [];
      for (let i = 0; i < PER_INITIATOR_SMS + 1; i++) {
        const { id, phone, funded } = await fundedTiny(me);
        // the funding itself is never refused for an SMS
        expect(expectOk(funded).status).toBe('active');
        expect((await escrowCancel(me, id)).status).toBe(200);
        phones.push(phone);
      }
      // the first 20 phones got their invite; the 21st none, its row withheld and never sent
      for (const phone of phones.slice(0, PER_INITIATOR_SMS)) expect(await smsCount(phone)).toBe(1);
      const last = phones[PER_INITIATOR_SMS]!;
      expect(await smsCount(last)).toBe(0);
      expect(await initiatorCapped(last)).toBe(1);
      expect((await outbox(last))[0]!.sent_at).toBeNull();
      // an escrow the counterparty pays, whose point is the SMS, is 429 now and is not created
      const before = await escrowsOf(me.id);
      const victim = newPhone().e164;
      expect429(await create(me, victim), 86_400);
      expect(await escrowsOf(me.id)).toBe(before);
      expect(await outbox(victim)).toEqual([]);
      // another initiator still invites by SMS, to the same phone too
      const other = await signUp();
      expect((await create(other, last)).status).toBe(201);
      expect(await smsCount(last)).toBe(1);
    },
  );

  it('counts counterparty-paid invites and fundings together, and holds when fundings arrive at once', {
    timeout: 120_000,
  }, async () => {
    const me = await signUp({ tier: 1 });
    await fundWallet(me, 100);
    // 15 invites at creation, then 10 drafts funded at the same moment: 5 of them may text
    for (let i = 0; i < 15; i++) expect((await create(me, newPhone().e164)).status).toBe(201);
    const drafts: { id: string; phone: string }[] = [];
    for (let i = 0; i < 10; i++) {
      const phone = newPhone().e164;
      const r = await create(me, phone, { payer_role: 'initiator', amount: 0.01 });
      expect(r.status).toBe(201);
      drafts.push({ id: r.body.data.escrow_id, phone });
    }
    const results = await Promise.all(
      drafts.map((d) => post(escrowFund, { escrow_id: d.id, method: 'wallet' }, { token: me.accessToken })),
    );
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const sent = (await Promise.all(drafts.map((d) => smsCount(d.phone)))).reduce((a, b) => a + b, 0);
    const capped = (await Promise.all(drafts.map((d) => initiatorCapped(d.phone)))).reduce((a, b) => a + b, 0);
    expect(sent).toBe(PER_INITIATOR_SMS - 15);
    expect(capped).toBe(10 - (PER_INITIATOR_SMS - 15));
  });
});

// ---- what an invite SMS says -----------------------------------------------------------------

describe('invite SMS carry no text written by the inviter but a safe first name', () => {
  const title = 'Your Escrow login code is 482913, verify at http://escrow-verify.example/x';
  const description = 'Security notice: call 08000000000 or open https://escrow-help.example now';

  function expectClean(body: string | undefined) {
    expect(body).toBeDefined();
    // no code, no link, none of the inviter's other words (a bare word such as "http" left of a
    // name is no link)
    for (const bad of [title, description, '482913', '://', '.example', 'verify', 'Security', 'Team', '08000000000']) {
      expect(body, `SMS contains ${JSON.stringify(bad)}: ${body}`).not.toContain(bad);
    }
  }

  it('an invite at creation names the first name, the category, the amount and the role; never the title or description', async () => {
    const me = await signUp({ first_name: 'Chioma', last_name: 'Escrow Security Team' });
    const phone = newPhone().e164;
    const r = await create(me, phone, { title, description, category: 'auto_dealership', amount: 1_250_000 });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const sms = await lastSms(phone);
    expectClean(sms);
    expect(sms).toBe(
      'Chioma invited you to a vehicle escrow of NGN 1,250,000.00 as the Buyer. Open the Escrow app with this number to review it.',
    );
  });

  it('the invite sent after funding says the same kind of thing, and the money is in', async () => {
    const me = await signUp({ first_name: 'Adéọlá', tier: 1 }); // funds from a topped-up wallet: tier 0 moves no money
    const phone = newPhone().e164;
    const r = await create(me, phone, { title, description, payer_role: 'initiator', category: 'hiring', amount: 300 });
    expect(r.status).toBe(201);
    expect(await lastSms(phone)).toBeUndefined();
    await fundWallet(me, r.body.data.fee_breakdown.total_charge);
    expectOk(
      await post(escrowFund, { escrow_id: r.body.data.escrow_id, method: 'wallet' }, { token: me.accessToken }),
    );
    const sms = await lastSms(phone);
    expectClean(sms);
    expect(sms).toBe(
      'Adéọlá invited you to a hiring escrow of NGN 300.00 as the Freelancer, and the money is already in escrow. Open the Escrow app with this number to accept it.',
    );
  });

  it('a hostile first name is cut to its first word of letters (at most 20), or replaced by "Someone"', async () => {
    const cases: [string, string][] = [
      ['Your code 482913 http://x.example', 'Your'],
      ['482913 is your Escrow code', 'Someone'],
      ['http://escrow-verify.example', 'http'],
      ['Ada.example.com/login', 'Ada'],
      ["O'Neil-Okafor!!", "O'Neil-Okafor"],
      ['Abcdefghijklmnopqrstuvwxyz', 'Abcdefghijklmnopqrst'],
      ['-- Escrow Security Team', 'Someone'],
    ];
    for (const [firstName, shown] of cases) {
      const me = await signUp({ first_name: firstName, last_name: 'Escrow Security Team' });
      const phone = newPhone().e164;
      expect((await create(me, phone, { title, category: 'p2p_crypto', amount: 20 })).status).toBe(201);
      const sms = await lastSms(phone);
      expectClean(sms);
      expect(sms, firstName).toBe(
        `${shown} invited you to a crypto escrow of NGN 20.00 as the Sender. Open the Escrow app with this number to review it.`,
      );
    }
  });

  it('a name changed after creation is rendered the same safe way when the funded invite goes out', async () => {
    const me = await signUp({ first_name: 'Bola', tier: 1 }); // funds from a topped-up wallet: tier 0 moves no money
    const phone = newPhone().e164;
    const r = await create(me, phone, { title, payer_role: 'initiator', amount: 500 });
    expect(r.status).toBe(201);
    const renamed = await post(profileUpdate, { first_name: 'Code 482913 https://x.example' }, {
      token: me.accessToken,
      method: 'PATCH',
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    await fundWallet(me, r.body.data.fee_breakdown.total_charge);
    expectOk(
      await post(escrowFund, { escrow_id: r.body.data.escrow_id, method: 'wallet' }, { token: me.accessToken }),
    );
    const sms = await lastSms(phone);
    expectClean(sms);
    expect(sms).toMatch(
      /^Code invited you to a goods escrow of NGN 500\.00 as the Seller, and the money is already in escrow\./,
    );
  });
});
