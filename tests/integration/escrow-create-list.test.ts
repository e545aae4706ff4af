// escrow-create, escrow-get and escrow-list through the real server: the exact 201 shape, every
// bound of the create body, the invite SMS, a counterparty who signs up later, what each party
// (and a stranger) can read, and cursor paging that neither loses nor repeats an escrow.
import { describe, expect, it } from 'vitest';
import { type ApiResult, type BodyOf, fieldsOf, get, post } from '../support/api.ts';
import { smsMatching, testDb } from '../support/db.ts';
import { escrowOp, fundWallet, newDeal } from '../support/escrows.ts';
import { newPhone, signUp, type TestUser, verifyPhone } from '../support/users.ts';
import authSignup from '../../supabase/functions/auth-signup/handler.ts';
import escrowAccept from '../../supabase/functions/escrow-accept/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';
import escrowList from '../../supabase/functions/escrow-list/handler.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const body = (
  counterpartyPhone: string,
  over: Partial<BodyOf<typeof escrowCreate>> = {},
): BodyOf<typeof escrowCreate> => ({
  category: 'goods_products',
  payer_role: 'initiator',
  title: 'Used laptop',
  counterparty_phone: counterpartyPhone,
  amount: 10_000,
  ...over,
});

const create = (u: TestUser, b: BodyOf<typeof escrowCreate>) => post(escrowCreate, b, { token: u.accessToken });

function expect400(r: ApiResult, field: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body).toMatchObject({ success: false, status: 400 });
  expect(fieldsOf(r)).toContain(field);
}

const escrowRow = async (id: string) => {
  const [row] = await testDb()<
    { counterparty_id: string | null; counterparty_phone: string; status: string; description: string }[]
  >`
    select counterparty_id, counterparty_phone, status, description from public.escrows where id = ${id}`;
  return row;
};

/** SMS queued for phone whose body matches pattern (LIKE). */
const smsTo = smsMatching;

async function signUpWithPhone(phone: string): Promise<TestUser> {
  await verifyPhone(phone);
  const password = 'a sound passphrase';
  const res = await post(authSignup, { phone, first_name: 'Late', last_name: 'Comer', password });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return {
    id: res.body.data.user.id,
    phone,
    password,
    accessToken: res.body.data.session.access_token,
    refreshToken: res.body.data.session.refresh_token,
  };
}

const list = (u: TestUser, query: Record<string, string | number | undefined> = {}) =>
  get(escrowList, { token: u.accessToken, query });

// ---- escrow-create ---------------------------------------------------------------------------

describe('escrow-create', () => {
  describe('the response', () => {
    it('answers 201 with exactly {escrow_id, conversation_id, invite_token, fee_breakdown}', async () => {
      const [me, other] = await Promise.all([signUp(), signUp()]);
      const res = await create(me, body(other.phone));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toEqual({
        success: true,
        status: 201,
        data: {
          escrow_id: expect.stringMatching(UUID),
          conversation_id: expect.stringMatching(UUID),
          invite_token: expect.any(String),
          fee_breakdown: {
            escrow_amount: 10_000,
            payer_fee: 75,
            vat: 5.63,
            total_charge: 10_080.63,
            seller_fee: 75,
            merchant_fee: 0,
            seller_payout: 9_925,
          },
        },
      });
      expect(Object.keys(res.body.data).sort()).toEqual([
        'conversation_id',
        'escrow_id',
        'fee_breakdown',
        'invite_token',
      ]);
      expect(res.body.data.invite_token.length).toBeGreaterThanOrEqual(20);
      // the conversation exists and belongs to the escrow
      const [conv] = await testDb()<
        { escrow_id: string }[]
      >`select escrow_id from public.conversations where id = ${res.body.data.conversation_id}`;
      expect(conv?.escrow_id).toBe(res.body.data.escrow_id);
      // the stored escrow carries the same breakdown
      const got = await get(escrowGet, { token: me.accessToken, query: { escrow_id: res.body.data.escrow_id } });
      expect(got.body.data.fee_breakdown).toEqual(res.body.data.fee_breakdown);
      // counterparty_id stays null to the initiator until the counterparty accepts or declines, so
      // it never tells whether the phone has an account (counterparty-privacy.test.ts)
      expect(got.body.data).toMatchObject({
        status: 'draft',
        initiator_id: me.id,
        counterparty_id: null,
        counterparty_phone: other.phone,
      });
    });

    it('the smallest amount, 0.01, is accepted and its breakdown never goes negative', async () => {
      const [me, other] = await Promise.all([signUp(), signUp()]);
      const res = await create(me, body(other.phone, { amount: 0.01 }));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.data.fee_breakdown).toEqual({
        escrow_amount: 0.01,
        payer_fee: 0.01,
        vat: 0,
        total_charge: 0.02,
        seller_fee: 0,
        merchant_fee: 0,
        seller_payout: 0.01,
      });
    });

    it('payer_role counterparty starts invite_pending; every category gets its inspection period', async () => {
      const [me, other] = await Promise.all([signUp(), signUp()]);
      for (
        const [category, days] of [['goods_products', 1], ['hiring', 0], ['auto_dealership', 0], [
          'p2p_crypto',
          0,
        ]] as const
      ) {
        const res = await create(me, body(other.phone, { category, payer_role: 'counterparty' }));
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        const got = await get(escrowGet, { token: me.accessToken, query: { escrow_id: res.body.data.escrow_id } });
        expect(got.body.data).toMatchObject({
          category,
          payer_role: 'counterparty',
          status: 'invite_pending',
          inspection_period_days: days,
        });
      }
    });
  });

  describe('validation bounds', () => {
    it('title: 1 and 200 characters are accepted; empty, blank and 201 are 400', async () => {
      const [me, other] = await Promise.all([signUp(), signUp()]);
      expect((await create(me, body(other.phone, { title: 'x' }))).status).toBe(201);
      expect((await create(me, body(other.phone, { title: 'x'.repeat(200) }))).status).toBe(201);
      expect400(await create(me, body(other.phone, { title: '' })), 'title');
      expect400(await create(me, body(other.phone, { title: '   ' })), 'title');
      expect400(await create(me, body(other.phone, { title: 'x'.repeat(201) })), 'title');
      // @ts-expect-error a number for a title, on purpose
      expect400(await create(me, body(other.phone, { title: 42 })), 'title');
    });

    it('description: up to 2000 characters; 2001 is 400; absent is stored empty', async () => {
      const [me, other] = await Promise.all([signUp(), signUp()]);
      const ok = await create(me, body(other.phone, { description: 'd'.repeat(2000) }));
      expect(ok.status, JSON.stringify(ok.body)).toBe(201);
      expect((await escrowRow(ok.body.data.escrow_id))?.description).toHaveLength(2000);
      expect400(await create(me, body(other.phone, { description: 'd'.repeat(2001) })), 'description');
      const none = await create(me, body(other.phone));
      expect((await escrowRow(none.body.data.escrow_id))?.description).toBe('');
    });

    it('amount: 0.01 and up is accepted; 0, 0.001, negatives, strings are 400', async () => {
      const [me, other] = await Promise.all([signUp(), signUp()]);
      expect((await create(me, body(other.phone, { amount: 0.01 }))).status).toBe(201);
      expect((await create(me, body(other.phone, { amount: 1234.56 }))).status).toBe(201);
      for (const amount of [0, 0.001, 10.005, -1, -0.01, '100', null]) {
        // @ts-expect-error amounts the schema refuses, on purpose
        expect400(await create(me, body(other.phone, { amount })), 'amount');
      }
      expect(
        (await testDb()<{ n: number }[]>`select count(*)::int as n from public.escrows where initiator_id = ${me.id}`)[
          0
        ]
          ?.n,
      ).toBe(2);
    });

    it('counterparty_phone: +234 and 0 formats accepted (stored as +234); every other shape is 400', async () => {
      const [me, other] = await Promise.all([signUp(), signUp()]);
      const local = `0${other.phone.slice(4)}`;
      const byLocal = await create(me, body(local));
      expect(byLocal.status, JSON.stringify(byLocal.body)).toBe(201);
      const row = await escrowRow(byLocal.body.data.escrow_id);
      expect(row).toMatchObject({ counterparty_phone: other.phone, counterparty_id: other.id });
      const got = await get(escrowGet, { token: me.accessToken, query: { escrow_id: byLocal.body.data.escrow_id } });
      expect(got.body.data.counterparty_phone).toBe(other.phone);
      for (
        const phone of [
          '2348012345678',
          '+23480123456789',
          '+23480123456',
          '8012345678',
          '080123456789',
          '0801234567',
          '+234801234567a',
          '+1 8012345678',
          '',
        ]
      ) {
        const res = await create(me, body(phone));
        expect400(res, 'counterparty_phone');
        // the sentence auth-send-otp gives, never the raw pattern
        expect(res.body.details).toContainEqual({
          field: 'counterparty_phone',
          message: 'must be +234 followed by 10 digits, or 0 followed by 10 digits',
        });
      }
    });

    it('category and payer_role must be one of their values', async () => {
      const [me, other] = await Promise.all([signUp(), signUp()]);
      // @ts-expect-error an unknown category, on purpose
      expect400(await create(me, body(other.phone, { category: 'cars' })), 'category');
      // @ts-expect-error a category in the wrong case, on purpose
      expect400(await create(me, body(other.phone, { category: 'GOODS_PRODUCTS' })), 'category');
      // @ts-expect-error an unknown payer role, on purpose
      expect400(await create(me, body(other.phone, { payer_role: 'buyer' })), 'payer_role');
      // @ts-expect-error a null payer role, on purpose
      expect400(await create(me, body(other.phone, { payer_role: null })), 'payer_role');
    });

    it('an unknown field is 400 and named', async () => {
      const [me, other] = await Promise.all([signUp(), signUp()]);
      // @ts-expect-error an unknown field, on purpose
      expect400(await create(me, body(other.phone, { currency: 'NGN' })), 'currency');
      // @ts-expect-error a field a client may not set, on purpose
      expect400(await create(me, body(other.phone, { status: 'funded' })), 'status');
    });

    it('each missing required field is named; all of them at once are all named', async () => {
      const [me, other] = await Promise.all([signUp(), signUp()]);
      const full = body(other.phone);
      for (const field of ['category', 'payer_role', 'title', 'counterparty_phone', 'amount']) {
        const partial: Record<string, unknown> = { ...full };
        delete partial[field];
        // @ts-expect-error a body missing a required field, on purpose
        const r = await create(me, partial);
        expect400(r, field);
        expect(fieldsOf(r)).toEqual([field]);
      }
      // @ts-expect-error an empty body, on purpose
      const empty = await create(me, {});
      expect(empty.status).toBe(400);
      expect(fieldsOf(empty)).toEqual(['amount', 'category', 'counterparty_phone', 'payer_role', 'title']);
      expect(
        (await testDb()<{ n: number }[]>`select count(*)::int as n from public.escrows where initiator_id = ${me.id}`)[
          0
        ]
          ?.n,
      ).toBe(0);
    });

    it('creating with your own phone (either format) is 409 counterparty_is_self and creates nothing', async () => {
      const me = await signUp();
      for (const phone of [me.phone, `0${me.phone.slice(4)}`]) {
        const r = await create(me, body(phone));
        expect(r.status, JSON.stringify(r.body)).toBe(409);
        expect(r.body).toMatchObject({ success: false, status: 409, code: 'counterparty_is_self' });
        expect(fieldsOf(r)).toContain('counterparty_phone');
      }
      expect(
        (await testDb()<{ n: number }[]>`select count(*)::int as n from public.escrows where initiator_id = ${me.id}`)[
          0
        ]
          ?.n,
      ).toBe(0);
    });

    it('without a bearer token it is 401', async () => {
      const res = await post(escrowCreate, body(newPhone().e164));
      expect(res.status).toBe(401);
    });
  });

  describe('the invitation', () => {
    it('payer_role counterparty: an invite SMS and an invite_received notification go to the counterparty at once', async () => {
      const [me, other] = await Promise.all([signUp({ first_name: 'Bola' }), signUp()]);
      const before = await smsTo(other.phone, '%invited you%');
      const res = await create(me, body(other.phone, { payer_role: 'counterparty', title: 'Generator' }));
      expect(res.status).toBe(201);
      expect(await smsTo(other.phone, '%invited you%')).toBe(before + 1);
      // the SMS names the inviter's first name, the category and the amount, never the title
      expect(await smsTo(other.phone, 'Bola invited you to a goods escrow of NGN 10,000.00 as the Buyer.%')).toBe(1);
      expect(await smsTo(other.phone, '%Generator%')).toBe(0);
      const notes = await get(notificationList, {
        token: other.accessToken,
        query: { escrow_id: res.body.data.escrow_id },
      });
      expect(notes.body.data.map((n: { event_type: string }) => n.event_type)).toContain('invite_received');
    });

    it('payer_role initiator: no invite SMS until the escrow is funded, then one', async () => {
      // the initiator funds from a topped-up wallet: tier 1 (tier 0 moves no money)
      const [me, other] = await Promise.all([signUp({ tier: 1 }), signUp()]);
      const res = await create(me, body(other.phone, { title: 'Camera lens', amount: 500 }));
      expect(res.status).toBe(201);
      expect(await smsTo(other.phone, '%invited you%')).toBe(0);
      const notes = await get(notificationList, {
        token: other.accessToken,
        query: { escrow_id: res.body.data.escrow_id },
      });
      expect(notes.body.data).toEqual([]);
      await fundWallet(me, res.body.data.fee_breakdown.total_charge);
      const funded = await escrowOp('escrow-fund', me, res.body.data.escrow_id, { method: 'wallet' });
      expect(funded.status, JSON.stringify(funded.body)).toBe(200);
      expect(await smsTo(other.phone, '%invited you%already in escrow%')).toBe(1);
      expect(await smsTo(other.phone, '%Camera lens%')).toBe(0);
    });

    it('a counterparty who signs up later with the invited phone is linked and can accept', async () => {
      const me = await signUp();
      const phone = newPhone();
      const res = await create(me, body(phone.local, { payer_role: 'counterparty', title: 'Late deal' }));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const id = res.body.data.escrow_id;
      expect(await escrowRow(id)).toMatchObject({
        counterparty_id: null,
        counterparty_phone: phone.e164,
        status: 'invite_pending',
      });
      // the invitation went to the E.164 number even though nobody has that account yet
      expect(await smsTo(phone.e164, '%invited you%')).toBe(1);

      const late = await signUpWithPhone(phone.e164);
      expect((await escrowRow(id))?.counterparty_id).toBe(late.id);
      const seen = await get(escrowGet, { token: late.accessToken, query: { escrow_id: id } });
      expect(seen.status, JSON.stringify(seen.body)).toBe(200);
      expect(seen.body.data).toMatchObject({ counterparty_id: late.id, status: 'invite_pending' });
      expect((await list(late)).body.data.map((e: { id: string }) => e.id)).toEqual([id]);

      const accepted = await post(escrowAccept, { invite_token: res.body.data.invite_token }, {
        token: late.accessToken,
      });
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
      expect(accepted.body.data).toMatchObject({ id, status: 'active', counterparty_id: late.id });
    });
  });
});

// ---- escrow-get ------------------------------------------------------------------------------

const SPEC_FIELDS = [
  'id',
  'initiator_id',
  'counterparty_id',
  'category',
  'payer_role',
  'title',
  'description',
  'counterparty_phone',
  'transaction_type',
  'release_type',
  'amount',
  'currency',
  'status',
  'inspection_period_days',
  'created_at',
  'funded_at',
  'released_at',
];

describe('escrow-get', () => {
  it('returns every spec field to both parties, and no conversation_id (counterparty_id: null to the initiator before acceptance)', async () => {
    const deal = await newDeal({ category: 'hiring', amount: 2_500.5, title: 'Logo design' });
    for (const who of [deal.initiator, deal.counterparty]) {
      const res = await get(escrowGet, { token: who.accessToken, query: { escrow_id: deal.escrowId } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ success: true, status: 200 });
      const e = res.body.data;
      for (const f of SPEC_FIELDS) expect(e, f).toHaveProperty(f);
      expect(e).not.toHaveProperty('conversation_id');
      expect(e).not.toHaveProperty('invite_token_hash');
      expect(e).toMatchObject({
        id: deal.escrowId,
        initiator_id: deal.initiator.id,
        // the counterparty has not accepted or declined: only they see the link
        counterparty_id: who === deal.initiator ? null : deal.counterparty.id,
        category: 'hiring',
        payer_role: 'initiator',
        title: 'Logo design',
        description: '',
        // whole to the initiator, who typed it; masked to the counterparty (the first 4 digits and the last 2)
        counterparty_phone: who === deal.initiator
          ? deal.counterparty.phone
          : `${deal.counterparty.phone.slice(0, 5)}*******${deal.counterparty.phone.slice(-2)}`,
        amount: 2_500.5,
        currency: 'NGN',
        status: 'draft',
        inspection_period_days: 0,
        funded_at: null,
        released_at: null,
      });
      expect(typeof e.transaction_type).toBe('string');
      expect(typeof e.release_type).toBe('string');
      expect(Number.isNaN(Date.parse(e.created_at))).toBe(false);
    }
  });

  it("another user's escrow is 404, exactly like one that does not exist", async () => {
    const [deal, stranger] = await Promise.all([newDeal(), signUp()]);
    const theirs = await get(escrowGet, { token: stranger.accessToken, query: { escrow_id: deal.escrowId } });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toMatchObject({ success: false, status: 404 });
    const none = await get(escrowGet, { token: stranger.accessToken, query: { escrow_id: crypto.randomUUID() } });
    expect(none.status).toBe(404);
    expect(none.body.error).toBe(theirs.body.error);
  });

  it('a malformed or missing escrow_id is 400; an extra parameter is 400', async () => {
    const deal = await newDeal();
    const t = deal.initiator.accessToken;
    expect400(await get(escrowGet, { token: t, query: { escrow_id: 'not-a-uuid' } }), 'escrow_id');
    expect400(await get(escrowGet, { token: t }), 'escrow_id');
    // @ts-expect-error an unknown query parameter, on purpose
    expect400(await get(escrowGet, { token: t, query: { escrow_id: deal.escrowId, extra: 1 } }), 'extra');
    expect((await get(escrowGet, { query: { escrow_id: deal.escrowId } })).status).toBe(401);
  });
});

// ---- escrow-list -----------------------------------------------------------------------------

describe('escrow-list', () => {
  it('items carry conversation_id and the spec fields; both parties see the escrow, a stranger sees nothing', async () => {
    const [deal, stranger] = await Promise.all([newDeal(), signUp()]);
    for (const who of [deal.initiator, deal.counterparty]) {
      const res = await list(who);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data).toHaveLength(1);
      const item = res.body.data[0];
      expect(item).toMatchObject({ id: deal.escrowId, conversation_id: deal.conversationId, status: 'draft' });
      for (const f of SPEC_FIELDS) expect(item, f).toHaveProperty(f);
    }
    const none = await list(stranger);
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual([]);
    expect((await list(stranger, { status: 'draft' })).body.data).toEqual([]);
    expect((await list(stranger, { status: 'deleted' })).body.data).toEqual([]);
  });

  it('filters by status', async () => {
    const [me, other] = await Promise.all([signUp(), signUp()]);
    const draft = await create(me, body(other.phone));
    const pending = await create(me, body(other.phone, { payer_role: 'counterparty' }));
    const ids = (r: ApiResult) => r.body.data.map((e: { id: string }) => e.id);
    expect(ids(await list(me, { status: 'draft' }))).toEqual([draft.body.data.escrow_id]);
    expect(ids(await list(me, { status: 'invite_pending' }))).toEqual([pending.body.data.escrow_id]);
    expect(ids(await list(other, { status: 'invite_pending' }))).toEqual([pending.body.data.escrow_id]);
    expect(ids(await list(me, { status: 'funded' }))).toEqual([]);
    expect(ids(await list(me))).toEqual([pending.body.data.escrow_id, draft.body.data.escrow_id]);
    expect400(await list(me, { status: 'open' }), 'status');
  });

  it('limit must be an integer 1-50', async () => {
    const me = await signUp();
    expect400(await list(me, { limit: 0 }), 'limit');
    expect400(await list(me, { limit: 51 }), 'limit');
    expect400(await list(me, { limit: -1 }), 'limit');
    expect400(await list(me, { limit: 'ten' }), 'limit');
    expect400(await list(me, { limit: 2.5 }), 'limit');
    expect((await list(me, { limit: 1 })).status).toBe(200);
    expect((await list(me, { limit: 50 })).status).toBe(200);
    expect400(await list(me, { before: 'yesterday' }), 'before');
    expect400(await list(me, { page: 2 }), 'page');
  });

  it(
    'defaults to 20, newest first, and before-cursor pages return every escrow exactly once',
    { timeout: 90_000 },
    async () => {
      const me = await signUp();
      const created: string[] = [];
      for (let i = 0; i < 21; i++) {
        const r = await create(me, body(newPhone().e164, { title: `Deal ${i}` }));
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        created.push(r.body.data.escrow_id);
      }
      const newestFirst = [...created].reverse();

      const first = await list(me);
      expect(first.body.data).toHaveLength(20);
      expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(newestFirst.slice(0, 20));

      const seen: string[] = [];
      const pageSizes: number[] = [];
      let before: string | undefined;
      for (let guard = 0; guard < 10; guard++) {
        const page = await list(me, { limit: 5, before });
        expect(page.status, JSON.stringify(page.body)).toBe(200);
        const items = page.body.data as { id: string; created_at: string }[];
        pageSizes.push(items.length);
        seen.push(...items.map((e) => e.id));
        if (items.length < 5) break;
        before = items[items.length - 1]?.created_at;
      }
      expect(pageSizes).toEqual([5, 5, 5, 5, 1]);
      expect(seen).toEqual(newestFirst);
      expect(new Set(seen).size).toBe(21);

      // a cursor equal to an escrow's created_at excludes that escrow (exclusive)
      const third = first.body.data[2] as { created_at: string };
      const after = await list(me, { before: third.created_at, limit: 2 });
      expect(after.body.data.map((e: { id: string }) => e.id)).toEqual(newestFirst.slice(3, 5));
    },
  );

  it('a deleted escrow is hidden unless status=deleted is asked for', async () => {
    const deal = await newDeal();
    const deleted = await escrowOp('escrow-delete', deal.initiator, deal.escrowId);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body.data.status).toBe('deleted');
    for (const who of [deal.initiator, deal.counterparty]) {
      expect((await list(who)).body.data).toEqual([]);
      const asked = await list(who, { status: 'deleted' });
      expect(asked.body.data.map((e: { id: string; status: string }) => [e.id, e.status])).toEqual([[
        deal.escrowId,
        'deleted',
      ]]);
    }
  });
});

describe('escrow-create', () => {
  describe('created_at, unique without a table-wide lock', () => {
    it('40 creations at once by 40 initiators: every one 201, no two escrows share a created_at', async () => {
      const [other, ...initiators] = await Promise.all(Array.from({ length: 41 }, () => signUp()));
      const made = await Promise.all(initiators.map((u) => create(u, body(other!.phone))));
      expect(made.map((r) => r.status)).toEqual(made.map(() => 201));
      const ids = made.map((r) => r.body.data.escrow_id as string);
      const rows = await testDb()<{ at: string }[]>`
        select created_at::text as at from public.escrows where id = any(${ids})`;
      expect(new Set(rows.map((r) => r.at)).size).toBe(40);
    });

    it('a collision takes the next microsecond', async () => {
      const [a, b] = await Promise.all([signUp(), signUp()]);
      const first = await create(a, body(b.phone));
      expect(first.status).toBe(201);
      // in one transaction now() stands still: the escrow made there is born on the first one's created_at
      const [row] = await testDb().begin(async (tx) => {
        await tx`update public.escrows set created_at = now() where id = ${first.body.data.escrow_id}`;
        const [made] = await tx<{ escrow_id: string }[]>`
          select escrow_id from private.escrow_create(${a.id}, 'goods_products', 'initiator', 'Same moment', '',
                                                      ${b.phone}, 100000, 0, 0, 0, 'collision-test')`;
        return await tx<{ apart: string }[]>`
          select ((select created_at from public.escrows where id = ${made!.escrow_id}) -
                  (select created_at from public.escrows where id = ${first.body.data.escrow_id}))::text as apart`;
      });
      expect(row?.apart).toBe('00:00:00.000001');
    });
  });
});
