// The account export (GET /account-export) through the real server: a user who touched every
// store exports, and the document is compared field by field with what the user's own reads
// answer (profile-get, escrow-list and escrow-get, message-feed, review-list, transaction-list,
// payout-list, card-list, notification-list, kyc-status, wallet-get, dispute-get); it holds
// nothing of another user beyond what those reads show (other people by id only; the invited
// phone masked to a counterparty), no identity number whole, no token, key or one-time code.
// One an hour: the second within the hour is 429 rate_limited, an hour later (backdated) 200.
import { randomBytes, randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, expectError, expectOk, get, patch, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { escrowOp, fundWallet } from '../support/escrows.ts';
import { kycFake } from '../support/kyc-fake.ts';
import { raiseTier } from '../support/kyc.ts';
import { addPayout } from '../support/payouts.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import accountExport from '../../supabase/functions/account-export/handler.ts';
import cardAdd from '../../supabase/functions/card-add/handler.ts';
import cardList from '../../supabase/functions/card-list/handler.ts';
import disputeGet from '../../supabase/functions/dispute-get/handler.ts';
import disputeRaise from '../../supabase/functions/dispute-raise/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';
import escrowList from '../../supabase/functions/escrow-list/handler.ts';
import identityVerify from '../../supabase/functions/identity-verify/handler.ts';
import kycStatus from '../../supabase/functions/kyc-status/handler.ts';
import messageFeed from '../../supabase/functions/message-feed/handler.ts';
import messageSend from '../../supabase/functions/message-send/handler.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';
import payoutList from '../../supabase/functions/payout-list/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';
import profileNokUpdate from '../../supabase/functions/profile-nok-update/handler.ts';
import profileUpdate from '../../supabase/functions/profile-update/handler.ts';
import reviewList from '../../supabase/functions/review-list/handler.ts';
import reviewSubmit from '../../supabase/functions/review-submit/handler.ts';
import transactionList from '../../supabase/functions/transaction-list/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';

// deno-lint-ignore no-explicit-any
type Json = any;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A value with every time written one way (reads write them in two equivalent forms). */
function sameTimes(value: Json): Json {
  if (Array.isArray(value)) return value.map(sameTimes);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, sameTimes(v)]));
  }
  return typeof value === 'string' && ISO.test(value) ? new Date(value).toISOString() : value;
}

/** `read` with the keys `leave` dropped: the export's item for it must hold the same. */
const without = (read: Json, ...leave: string[]) =>
  Object.fromEntries(Object.entries(read).filter(([k]) => !leave.includes(k)));

const exportOf = (u: TestUser) => get(accountExport, { token: u.accessToken });

/** A random 11-digit number not ending in 0 (the identity fake's not-found). */
const eleven = () => `${String(randomInt(1, 10_000_000_000)).padStart(10, '0')}${randomInt(1, 10)}`;

const rand = () => randomBytes(6).toString('hex');

async function message(u: TestUser, conversationId: string, content: string) {
  expectOk(await post(messageSend, { conversation_id: conversationId, content }, { token: u.accessToken }), 201);
}

/** An escrow `payer` creates for `payee`'s phone and pays from the wallet; accepted: funded. */
async function funded(payer: TestUser, payee: TestUser, title: string) {
  const created = expectOk(
    await post(escrowCreate, {
      category: 'goods_products',
      payer_role: 'initiator',
      title,
      counterparty_phone: payee.phone,
      amount: 10_000,
    }, { token: payer.accessToken }),
    201,
  );
  await fundWallet(payer, created.fee_breakdown.total_charge);
  expectOk(await escrowOp('escrow-fund', payer, created.escrow_id, { method: 'wallet' }));
  expectOk(await escrowOp('escrow-accept', payee, created.escrow_id));
  return { escrowId: created.escrow_id as string, conversationId: created.conversation_id as string };
}

describe('account-export', () => {
  it('a user who touched every store exports it all, as their own reads show it, and nothing more of anyone else', async () => {
    const secrets = {
      bLast: `Secretive${rand()}`,
      cLast: `Hidden${rand()}`,
      bAddress: `12 Hidden Close ${rand()}`,
      bBio: `bio ${rand()}`,
    };
    const a = await signUp({ first_name: 'Amaka', last_name: 'Exporter', tier: 1 });
    const b = await signUp({ first_name: 'Bisi', last_name: secrets.bLast });
    const c = await signUp({ first_name: 'Chike', last_name: secrets.cLast });

    // the identity number check, with the number the test keeps to search for
    const nin = eleven();
    const asked = expectOk(await post(identityVerify, { type: 'nin', id_number: nin }, { token: a.accessToken }), 201);
    const result = await kycFake.identityResult({ reference: asked.reference, status: 'found' });
    expect(result.responses.map((x) => x.status)).toEqual([200]);
    for (const u of [a, b, c]) await raiseTier(u.id, 4);

    // profile and next of kin, A's and B's (B's are B's secrets)
    expectOk(
      await patch(profileUpdate, { address: '3 Allen Avenue, Ikeja', bio: 'I sell phones' }, { token: a.accessToken }),
    );
    expectOk(
      await patch(profileNokUpdate, {
        first_name: 'Ngozi',
        last_name: 'Exporter',
        phone: '08031234567',
        address: '3 Allen Avenue, Ikeja',
        relationship: 'sister',
      }, { token: a.accessToken }),
    );
    expectOk(await patch(profileUpdate, { address: secrets.bAddress, bio: secrets.bBio }, { token: b.accessToken }));

    // deal 1: A pays B, B delivers, A releases; both review; messages both ways
    const d1 = await funded(a, b, 'Phone from Bisi');
    await message(a, d1.conversationId, 'Please ship today');
    await message(b, d1.conversationId, 'Shipped');
    expectOk(await escrowOp('escrow-deliver', b, d1.escrowId));
    expectOk(await escrowOp('escrow-release', a, d1.escrowId));
    expectOk(
      await post(reviewSubmit, { escrow_id: d1.escrowId, rating: 5, feedback: 'Fast' }, { token: a.accessToken }),
      201,
    );
    expectOk(
      await post(reviewSubmit, { escrow_id: d1.escrowId, rating: 4, feedback: 'Paid on time' }, {
        token: b.accessToken,
      }),
      201,
    );

    // deal 2: C pays A (A is the counterparty: the invited phone is masked to A); C disputes it
    const d2 = await funded(c, a, 'Laptop for Chike');
    await message(c, d2.conversationId, 'Where is it?');
    expectOk(
      await post(disputeRaise, {
        escrow_id: d2.escrowId,
        reason_code: 'item_not_received',
        reason: 'Nothing arrived',
      }, { token: c.accessToken }),
      201,
    );

    // money: a payout account, a card, the dedicated account (the wallet got money from deal 1)
    await addPayout(a);
    const authorization = `AUTH_${rand()}`;
    await paystack.authorizeUser(a.id, authorization);
    expectOk(
      await post(cardAdd, {
        authorization_code: authorization,
        last4: '4081',
        brand: 'visa',
        exp_month: '12',
        exp_year: '2030',
        signature: `SIG_${rand()}`,
        bank: 'TEST BANK',
      }, { token: a.accessToken }),
      201,
    );
    // (the first top-up asked for the dedicated account already: 200 with it, or 201)
    const va = await post(virtualAccountCreate, {}, { token: a.accessToken });
    expect([200, 201], JSON.stringify(va.body)).toContain(va.status);

    // a merchant with a key
    const merchant = expectOk(await post('merchant-create', { name: 'Amaka Gadgets' }, { token: a.accessToken }), 201);
    const key = expectOk(await post('merchant-key-create', { name: 'server' }, { token: a.accessToken }), 201);

    const res = await exportOf(a);
    const doc: Json = expectOk(res);
    const text = JSON.stringify(res.body);

    // ---- the account and profile, as profile-get answers them
    expect(doc.format).toBe('account-export/1');
    expect(doc.account).toMatchObject({ id: a.id, phone: a.phone, kyc_tier: 4, frozen: false, operator_roles: [] });
    const profile: Json = expectOk(await get(profileGet, { token: a.accessToken }));
    expect(sameTimes(doc.profile)).toEqual(sameTimes(without(profile, 'next_of_kin')));
    expect(sameTimes(without(doc.next_of_kin, 'updated_at'))).toEqual(sameTimes(profile.next_of_kin));

    // ---- escrows, as escrow-list and escrow-get answer them to A
    const list: Json[] = expectOk(await get(escrowList, { token: a.accessToken }));
    expect(doc.escrows.map((e: Json) => e.id).sort()).toEqual(list.map((e) => e.id).sort());
    for (const read of list) {
      const mine = doc.escrows.find((e: Json) => e.id === read.id);
      expect(sameTimes(without(mine, 'counterparty_phone', 'role'))).toEqual(
        sameTimes(without(read, 'counterparty_phone', 'merchant')),
      );
      const one: Json = expectOk(await get(escrowGet, { token: a.accessToken, query: { escrow_id: read.id } }));
      expect(mine.status).toBe(one.status);
      expect(mine.counterparty_id).toBe(one.counterparty_id);
    }
    const e1 = doc.escrows.find((e: Json) => e.id === d1.escrowId);
    const e2 = doc.escrows.find((e: Json) => e.id === d2.escrowId);
    expect(e1).toMatchObject({ role: 'initiator', counterparty_phone: b.phone, status: 'ended' });
    // to A, the counterparty of deal 2, the invited phone is masked as escrow-get masks it
    expect(e2.role).toBe('counterparty');
    expect(e2.counterparty_phone).toBe(`${a.phone.slice(0, 5)}*******${a.phone.slice(-2)}`);

    // ---- conversations and messages, as message-feed answers them
    expect(doc.conversations.map((c: Json) => c.id).sort()).toEqual([d1.conversationId, d2.conversationId].sort());
    for (const conv of [d1.conversationId, d2.conversationId]) {
      const feed: Json[] = expectOk(
        await get(messageFeed, { token: a.accessToken, query: { conversation_id: conv, limit: 100 } }),
      );
      const read = feed.filter((i) => i.source === 'message').map((i) => ({
        id: i.id,
        conversation_id: conv,
        sender_id: i.sender_id,
        message_type: i.message_type,
        content: i.content,
        created_at: i.created_at,
      }));
      expect(sameTimes(doc.messages.filter((m: Json) => m.conversation_id === conv))).toEqual(sameTimes(read));
    }
    expect(doc.messages.map((m: Json) => m.content)).toEqual(
      expect.arrayContaining(['Please ship today', 'Shipped', 'Where is it?']),
    );

    // ---- the dispute, as dispute-get answers it
    const dispute: Json = expectOk(await get(disputeGet, { token: a.accessToken, query: { escrow_id: d2.escrowId } }));
    expect(doc.disputes).toHaveLength(1);
    expect(sameTimes(doc.disputes[0])).toMatchObject(
      sameTimes(without(dispute, 'resolved_by', 'proposals')),
    );
    expect(doc.disputes[0].proposals.map((p: Json) => p.id)).toEqual(dispute.proposals.map((p: Json) => p.id));

    // ---- reviews: received as review-list answers them; given as stored
    const reviews: Json[] = expectOk(await get(reviewList, { token: a.accessToken }));
    expect(sameTimes(doc.reviews_received)).toEqual(
      sameTimes(reviews.map((r) => ({
        id: r.id,
        escrow_id: r.escrow_id,
        reviewer_id: r.reviewer_id,
        rating: r.rating,
        feedback: r.feedback,
        created_at: r.created_at,
      }))),
    );
    expect(doc.reviews_given).toMatchObject([{
      escrow_id: d1.escrowId,
      reviewee_id: b.id,
      rating: 5,
      feedback: 'Fast',
    }]);

    // ---- money: wallet, transactions, payout accounts, cards
    const wallet: Json = expectOk(await get(walletGet, { token: a.accessToken }));
    expect(doc.wallet).toEqual({ balance: wallet.balance, currency: 'NGN' });
    expect(doc.virtual_account).toMatchObject({
      status: wallet.virtual_account.status,
      account_number: wallet.virtual_account.account_number,
    });
    const transactions: Json = expectOk(await get(transactionList, { token: a.accessToken, query: { limit: 100 } }));
    expect(transactions.data.length).toBeGreaterThan(0);
    expect(sameTimes(doc.transactions)).toEqual(sameTimes([...transactions.data].reverse()));
    const payouts: Json[] = expectOk(await get(payoutList, { token: a.accessToken }));
    expect(sameTimes(doc.payout_accounts)).toEqual(sameTimes(payouts));
    const cards: Json[] = expectOk(await get(cardList, { token: a.accessToken }));
    expect(sameTimes(doc.cards)).toEqual(sameTimes(cards.map((card) => without(card, 'signature'))));

    // ---- notifications, as notification-list answers them
    const notifications: Json[] = expectOk(
      await get(notificationList, { token: a.accessToken, query: { limit: 100 } }),
    );
    expect(notifications.length).toBeGreaterThan(0);
    const byId = new Map(doc.notifications.map((n: Json) => [n.id, n]));
    expect(byId.size).toBe(notifications.length);
    for (const n of notifications) expect(sameTimes(byId.get(n.id))).toEqual(sameTimes(n));

    // ---- KYC, as kyc-status answers it; the identity number never whole
    const kyc: Json = expectOk(await get(kycStatus, { token: a.accessToken }));
    expect(doc.kyc.tier).toBe(kyc.tier);
    expect(doc.kyc.checks.map((k: Json) => [k.type, k.status]).sort()).toEqual(
      kyc.checks.map((k: Json) => [k.type, k.status]).sort(),
    );
    expect(doc.kyc.identity_requests).toMatchObject([
      { reference: asked.reference, type: 'nin', id_number: `********${nin.slice(-3)}`, status: 'passed' },
    ]);
    expect(doc.kyc.checks.find((k: Json) => k.type === 'nin').id_number).toBe(`********${nin.slice(-3)}`);
    expect(text).not.toContain(nin);
    // nor its last 4 digits on their own (the document's ids are hex and may hold the same 4 digits
    // inside them: only a run of digits that is not part of a longer hex or digit run counts)
    expect(text).not.toMatch(new RegExp(`(?<![0-9a-f-])${nin.slice(-4)}(?![0-9a-f-])`));

    // ---- sessions, merchants, SMS, events: what is held, never a secret
    expect(doc.sessions.length).toBeGreaterThan(0);
    expect(doc.sessions.every((s: Json) => ISO.test(s.last_used_at))).toBe(true);
    for (const token of [a.accessToken, a.refreshToken, a.password]) expect(text).not.toContain(token);
    expect(doc.merchants).toMatchObject([{ id: merchant.id, name: 'Amaka Gadgets', api_keys: [{ id: key.id }] }]);
    expect(key.key.startsWith(doc.merchants[0].api_keys[0].prefix)).toBe(true);
    expect(text).not.toContain(key.key);
    const codes = await testDb()<{ body: string }[]>`
      select body from private.sms_outbox where phone = ${a.phone} and message ->> 'kind' = 'otp_code'`;
    expect(codes.length).toBeGreaterThan(0);
    for (const { body } of codes) expect(text).not.toContain(body);
    const sms = doc.sms.filter((s: Json) => s.kind === 'otp_code');
    expect(sms.length).toBe(codes.length);
    expect(sms.every((s: Json) => s.body === null)).toBe(true);
    const [events] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.event_recipients where user_id = ${a.id}`;
    expect(doc.events).toHaveLength(events?.n ?? -1);

    // ---- nothing of another user beyond what A's reads show: other people by id only. Their
    // private fields never; their names only inside the notifications' sentences, which are
    // notification-list's own (compared above); B's phone only where A typed it (deal 1)
    const [bRow] = await testDb()<{ address: string }[]>`select address from public.profiles where id = ${b.id}`;
    expect(bRow?.address).toBe(secrets.bAddress);
    for (const secret of [secrets.bAddress, secrets.bBio, c.phone, c.phone.slice(4), b.password]) {
      expect(text).not.toContain(secret);
    }
    const rest = JSON.stringify({
      ...doc,
      notifications: doc.notifications.map((n: Json) => without(n, 'content')),
      escrows: doc.escrows.map((e: Json) => without(e, 'counterparty_phone')),
    });
    for (const secret of [secrets.bLast, secrets.cLast, b.phone, b.phone.slice(4)]) expect(rest).not.toContain(secret);
    // and never stored as an Idempotency-Key answer
    const stored = await testDb()`select 1 from private.idempotency_keys where operation = 'account-export'`;
    expect(stored).toHaveLength(0);
  });

  it('one export an hour: the second within the hour is 429 rate_limited with Retry-After; an hour later it is 200', async () => {
    const u = await signUp();
    const first = expectOk(await exportOf(u));
    expect(first.account.id).toBe(u.id);
    const second = await exportOf(u);
    expectError(second, 429, 'rate_limited');
    const wait = Number(second.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(3500);
    expect(wait).toBeLessThanOrEqual(3600);
    // another user is not limited by it
    expectOk(await exportOf(await signUp()));
    await testDb()`
      update private.rate_limit_events set created_at = created_at - interval '61 minutes'
       where key = ${`account-export:${u.id}`}`;
    expect(expectOk(await exportOf(u)).account.id).toBe(u.id);
  });

  it('401 without a token or with a bad one', async () => {
    expectError(await call(accountExport), 401);
    expectError(await get(accountExport, { token: 'not-a-token' }), 401);
  });
});
