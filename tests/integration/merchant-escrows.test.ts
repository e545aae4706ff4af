// Merchant escrows (docs/merchants.md#merchant-escrows) through the real server with real keys:
// merchant-escrow-create (placeholders for phones without an account, the reference as the
// idempotency key, the request's rules), merchant-escrow-get, merchant-escrow-list and
// merchant-escrow-cancel (the merchant's own escrows only), and what the escrow's parties read of
// it: `merchant` in escrow-get and escrow-list, the escrow in a placeholder's list once they sign
// up, the merchant among the recipients of its escrow's events.
import { afterAll, describe, expect, it } from 'vitest';
import { getConfig } from '../../shared/core/config.ts';
import { closeDb } from '../../shared/core/db.ts';
import { merchantPartyId } from '../../shared/merchants/escrows.ts';
import { type ApiResult, expectError, expectOk, get, post } from '../support/api.ts';
import { lastOtp, testDb } from '../support/db.ts';
import { paystack } from '../support/paystack.ts';
import {
  checkoutOf,
  createMerchantEscrow as create,
  merchantEscrowBody as body,
  newMerchant as merchant,
  newMerchantEscrow as created,
} from '../support/merchants.ts';
import { newPhone, signUp } from '../support/users.ts';

afterAll(() => closeDb());

// ---- helpers -------------------------------------------------------------------------------

const userOfPhone = async (phone: string) =>
  (await testDb()<{ id: string; password_hash: string | null }[]>`
    select id, password_hash from private.users where phone = ${phone}`)[0];

/** Signs up with a phone (the sign-up steps of support/users.ts, for a phone of our choosing). */
async function signUpWith(phone: string): Promise<ApiResult> {
  expectOk(await post('auth-send-otp', { phone, context: 'signup' }));
  const code = await lastOtp(phone);
  expectOk(await post('auth-verify', { phone, context: 'signup', otp_code: code }));
  return await post('auth-signup', { phone, first_name: 'Bola', last_name: 'Ade', password: 'a sound passphrase' });
}

// ---- merchant-escrow-create -------------------------------------------------------------------

describe('merchant-escrow-create', () => {
  it('creates a draft with placeholders for phones without an account (201)', async () => {
    const m = await merchant();
    const { body: b, escrow } = await created(m, { merchant_fee: 2_500, metadata: { order: 'A-1', b: 'x' } });
    const buyer = await userOfPhone(b.buyer_phone);
    const seller = await userOfPhone(b.seller_phone);
    expect(buyer?.password_hash).toBeNull();
    expect(seller?.password_hash).toBeNull();
    expect(escrow).toMatchObject({
      status: 'draft',
      payer_role: 'initiator',
      initiator_id: await merchantPartyId(m.id, buyer!.id),
      counterparty_id: await merchantPartyId(m.id, seller!.id),
      counterparty_phone: b.seller_phone,
      amount: 50_000,
      reference: b.reference,
      metadata: { order: 'A-1', b: 'x' },
      merchant: { id: m.id, name: m.name, fee: 2_500 },
      inspection_period_days: 1,
    });
    // metadata as sent, keys in their order
    expect(Object.keys(escrow.metadata)).toEqual(['order', 'b']);
    // where the buyer pays (merchant-funding.clock.test.ts), and nothing delivered yet
    expect(escrow.checkout_url).toMatch(/^https:\/\//);
    expect(escrow.tracking).toBeNull();
    // both parties are told by SMS, naming the merchant, with no link
    const sms = await testDb()<{ phone: string; message: Record<string, unknown>; withheld: string | null }[]>`
      select phone, message, withheld from private.sms_outbox where phone in (${b.buyer_phone}, ${b.seller_phone})`;
    expect(sms).toHaveLength(2);
    for (const s of sms) {
      expect(s.message).toMatchObject({ kind: 'merchant_escrow', merchant: m.name, amount: 5_000_000 });
      expect(s.withheld).toBeNull();
    }
  });

  it('links phones that have accounts, and answers the same shape either way', async () => {
    const m = await merchant();
    const [buyer, seller] = await Promise.all([signUp(), signUp()]);
    const { escrow } = await created(m, { buyer_phone: buyer.phone, seller_phone: seller.phone });
    const [linked] = await testDb()<{ initiator_id: string; counterparty_id: string }[]>`
      select initiator_id, counterparty_id from public.escrows where id = ${escrow.id}`;
    expect(linked).toEqual({ initiator_id: buyer.id, counterparty_id: seller.id });
    expect(escrow).toMatchObject({ merchant: { fee: 0 } });
    // known or not, the answer has the same keys: nothing tells whether a phone has an account
    const { escrow: other } = await created(m);
    expect(Object.keys(other).sort()).toEqual(Object.keys(escrow).sort());
    expect(await userOfPhone(buyer.phone)).toMatchObject({ id: buyer.id });
  });

  it("never answers a party's user id: profile-public-get cannot tell whether a phone has an account", async () => {
    // a user id names the account elsewhere: profile-public-get answers an account's name and 404
    // for a placeholder, so the merchant, naming any phone, would learn whether it has an account
    const m = await merchant();
    const known = await signUp();
    const { escrow: withAccount } = await created(m, { buyer_phone: known.phone });
    const { escrow: without } = await created(m);
    expect(withAccount.initiator_id).not.toBe(known.id);
    for (const e of [withAccount, without]) {
      for (const id of [e.initiator_id, e.counterparty_id]) {
        expectError(
          await get('profile-public-get', { token: m.owner.accessToken, query: { user_id: id } }),
          404,
          'user_not_found',
        );
      }
    }
    // the same customer is the same id in all of the merchant's escrows, and another id to another merchant
    const { escrow: again } = await created(m, { seller_phone: known.phone });
    expect(again.counterparty_id).toBe(withAccount.initiator_id);
    const m2 = await merchant('Bola Cars');
    const { escrow: theirs } = await created(m2, { buyer_phone: known.phone });
    expect(theirs.initiator_id).not.toBe(withAccount.initiator_id);
    // in the list and in the webhook's rendering too (both read merchantView)
    const listed = expectOk(await get('merchant-escrow-list', { token: m.key }));
    expect(listed.find((e: { id: string }) => e.id === withAccount.id)?.initiator_id).toBe(withAccount.initiator_id);
  });

  it('answers the same escrow for the same reference and body (200), and 409 for another body', async () => {
    const m = await merchant();
    const { body: b, escrow } = await created(m, { metadata: { z: '1', a: '2' } });
    // the same body with its keys in another order is the same request
    const reordered = Object.fromEntries(Object.entries(b).reverse());
    const again = expectOk(await create(m, reordered), 200);
    expect(again).toEqual(escrow);
    const res = await create(m, { ...b, amount: 50_001 });
    expect(expectError(res, 409, 'merchant_reference_reused')).toEqual(['reference']);
    // another merchant's same reference is its own
    const m2 = await merchant('Bola Cars');
    const theirs = expectOk(await create(m2, b), 201);
    expect(theirs.id).not.toBe(escrow.id);
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.merchant_escrows where reference = ${b.reference}`;
    expect(n?.n).toBe(2);
  });

  it('makes one escrow of 20 concurrent creations with one reference', async () => {
    const m = await merchant();
    const b = body();
    // the reference's check must hold across the creation, not merely come first: with the table's
    // inserts held back, every request has read the table (no escrow yet) before any can insert
    let pending: Promise<ApiResult>[] = [];
    await testDb().begin(async (sql) => {
      await sql`lock table private.merchant_escrows in share row exclusive mode`;
      pending = Array.from({ length: 20 }, () => create(m, b));
      await new Promise((r) => setTimeout(r, 1_500));
    });
    const answers = await Promise.all(pending);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(19);
    expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.escrows where merchant_id = ${m.id}`;
    expect(n?.n).toBe(1);
    // and one placeholder per phone
    const [u] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.users where phone in (${b.buyer_phone}, ${b.seller_phone})`;
    expect(u?.n).toBe(2);
  });

  it('refuses a fee above 20% of the amount, bad metadata and equal phones (400 with details)', async () => {
    const m = await merchant();
    expectOk(await create(m, body({ amount: 1_000, merchant_fee: 200 })), 201);
    expect(expectError(await create(m, body({ amount: 1_000, merchant_fee: 200.01 })), 400)).toEqual(['merchant_fee']);
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
    expectOk(await create(m, body({ metadata: Object.fromEntries(Object.entries(many).slice(0, 20)) })), 201);
    expect(expectError(await create(m, body({ metadata: many })), 400)).toEqual(['metadata']);
    expect(expectError(await create(m, body({ metadata: { ['k'.repeat(41)]: 'v' } })), 400)[0]).toMatch(/^metadata/);
    expect(expectError(await create(m, body({ metadata: { '': 'v' } })), 400)[0]).toMatch(/^metadata/);
    expect(expectError(await create(m, body({ metadata: { k: 'v'.repeat(501) } })), 400)[0]).toMatch(/^metadata/);
    expect(expectError(await create(m, body({ metadata: { k: 1 } })), 400)[0]).toMatch(/^metadata/);
    const phone = newPhone();
    expect(expectError(await create(m, body({ buyer_phone: phone.e164, seller_phone: phone.local })), 400))
      .toEqual(['seller_phone']);
    expect(expectError(await create(m, body({ reference: 'has space' })), 400)).toEqual(['reference']);
  });

  it("creates without SMS over the merchant's hourly limit", async () => {
    const m = await merchant();
    // the merchant's hour is full (200 units)
    await testDb()`insert into private.rate_limit_events (key, created_at)
                   select ${`merchant_sms:hour:${m.id}`}, now() from generate_series(1, 200)`;
    const { body: b } = await created(m);
    const sms = await testDb()<{ withheld: string | null }[]>`
      select withheld from private.sms_outbox where phone in (${b.buyer_phone}, ${b.seller_phone})`;
    expect(sms.map((s) => s.withheld)).toEqual(['merchant_sms_cap', 'merchant_sms_cap']);
  });

  it("refuses the owner's own phone as a party (409 merchant_party_is_owner), in any spelling", async () => {
    // the seller reads the buyer's user id in escrow-get: the owner as seller of escrows naming any
    // phone as buyer would learn, through profile-public-get, whether each has an account
    const m = await merchant();
    const local = `0${m.owner.phone.slice(4)}`;
    for (
      const [field, over] of [
        ['seller_phone', { seller_phone: m.owner.phone }],
        ['seller_phone', { seller_phone: local }],
        ['buyer_phone', { buyer_phone: m.owner.phone }],
      ] as const
    ) {
      const res = await create(m, body(over));
      expect(expectError(res, 409, 'merchant_party_is_owner')).toEqual([field]);
    }
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.escrows where merchant_id = ${m.id}`;
    expect(n?.n).toBe(0);
  });

  it('creates at most MERCHANT_ESCROW_MAX_PER_HOUR escrows an hour per merchant (429), a replay still answered', async () => {
    // each creation asks the payments provider for a checkout and makes up to two placeholder
    // users, whatever the amount (a kobo's escrow costs us the same): without a bound, a merchant's
    // keys could make us do that thousands of times a minute
    const m = await merchant();
    const { body: b, escrow } = await created(m);
    const limit = getConfig().MERCHANT_ESCROW_MAX_PER_HOUR;
    await testDb()`
      insert into private.rate_limit_events (key, created_at)
      select ${`merchant_escrow:hour:${m.id}`}, now() from generate_series(1, ${limit - 1})`;
    const res = await create(m, body());
    expectError(res, 429, 'rate_limited');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.escrows where merchant_id = ${m.id}`;
    expect(n?.n).toBe(1);
    // the escrow already made for a reference is answered again: a replay creates nothing
    expect(expectOk(await create(m, b), 200).id).toBe(escrow.id);
  });

  it('counts a replay that asks the provider for a new checkout toward MERCHANT_ESCROW_MAX_PER_HOUR', async () => {
    // a checkout the provider refused leaves the draft without a page, and each replay asks again:
    // a reference whose checkout is always refused (an amount below the provider's minimum) would
    // otherwise make us call the provider at the key's full rate
    const m = await merchant();
    const buyer = await signUp();
    await paystack.fail(
      { path: '/transaction/initialize', field: 'email', value: `${buyer.id}@customers.escrow.ng` },
      'refuse',
    );
    const b = body({ buyer_phone: buyer.phone });
    expectError(await create(m, b), 402, 'charge_refused');
    const [draft] = await testDb()<{ escrow_id: string; checkout_tx: string }[]>`
      select escrow_id, checkout_tx from private.merchant_escrows where merchant_id = ${m.id}`;
    await testDb()`
      insert into private.rate_limit_events (key, created_at)
      select ${`merchant_escrow:hour:${m.id}`}, now()
        from generate_series(1, ${getConfig().MERCHANT_ESCROW_MAX_PER_HOUR - 1})`;
    const replay = await create(m, b);
    expectError(replay, 429, 'rate_limited');
    expect(Number(replay.headers.get('retry-after'))).toBeGreaterThan(0);
    // no new charge was made, so none was asked of the provider
    expect(await checkoutOf(draft!.escrow_id)).toBe(draft!.checkout_tx);
  });

  it('refuses a session token: the operation takes a key (401)', async () => {
    const m = await merchant();
    expectError(await post('merchant-escrow-create', body(), { token: m.owner.accessToken }), 401);
  });
});

// ---- sign-up claims a placeholder -------------------------------------------------------------

describe('auth-signup', () => {
  it("claims the phone's placeholder: its escrows are the new account's", async () => {
    const m = await merchant();
    const { body: b, escrow } = await created(m);
    const placeholder = await userOfPhone(b.seller_phone);
    const res = await signUpWith(b.seller_phone);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.user.id).toBe(placeholder!.id);
    const token = res.body.data.session.access_token;
    const list = expectOk(await get('escrow-list', { token }));
    expect(list.map((e: { id: string }) => e.id)).toEqual([escrow.id]);
    expect(list[0].merchant).toEqual({ id: m.id, name: m.name, fee: 0 });
    // the notification the placeholder was sent is the new account's: the merchant's name, the
    // amount and the role, nothing else the merchant wrote (not the title)
    const notes = expectOk(await get('notification-list', { token, query: { escrow_id: escrow.id } }));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({
      event_type: 'escrow_created',
      entity_type: 'escrow',
      entity_id: escrow.id,
      action_label: 'View escrow',
      content: 'Ada Phones opened a goods escrow of NGN 50,000.00 with you as the seller.',
    });
    // the buyer's placeholder is still none: no login, no reset
    expect((await userOfPhone(b.buyer_phone))?.password_hash).toBeNull();
  });

  it('a placeholder is no account: no login, no password reset, sign-up is offered a code', async () => {
    const m = await merchant();
    const { body: b } = await created(m);
    expectOk(await post('auth-send-otp', { phone: b.buyer_phone, context: 'signup' }));
    // a code, not the "already has an account" notice
    const [sms] = await testDb()<{ message: { kind: string } }[]>`
      select message from private.sms_outbox where phone = ${b.buyer_phone} order by id desc limit 1`;
    expect(sms?.message.kind).toBe('otp_code');
    const [reset] = await testDb()<{ id: string | null }[]>`
      select private.reset_password(${b.buyer_phone}, 'x') as id`;
    expect(reset?.id).toBeNull();
  });
});

// ---- merchant-escrow-get ------------------------------------------------------------------------

describe('merchant-escrow-get', () => {
  it('answers the escrow by id and by reference; another merchant gets 404', async () => {
    const m = await merchant();
    const { body: b, escrow } = await created(m);
    expect(expectOk(await get('merchant-escrow-get', { token: m.key, query: { escrow_id: escrow.id } }))).toEqual(
      escrow,
    );
    expect(expectOk(await get('merchant-escrow-get', { token: m.key, query: { reference: b.reference } })))
      .toEqual(escrow);
    const m2 = await merchant('Other Shop');
    expectError(await get('merchant-escrow-get', { token: m2.key, query: { escrow_id: escrow.id } }), 404);
    expectError(await get('merchant-escrow-get', { token: m2.key, query: { reference: b.reference } }), 404);
    expectError(
      await get('merchant-escrow-get', { token: m.key, query: { escrow_id: escrow.id, reference: b.reference } }),
      400,
    );
  });

  it("does not answer an app escrow's id", async () => {
    const m = await merchant();
    const [a, c] = await Promise.all([signUp(), signUp()]);
    const made = expectOk(
      await post('escrow-create', {
        category: 'goods_products',
        payer_role: 'initiator',
        title: 'App deal',
        counterparty_phone: c.phone,
        amount: 1_000,
      }, { token: a.accessToken }),
      201,
    );
    expectError(await get('merchant-escrow-get', { token: m.key, query: { escrow_id: made.escrow_id } }), 404);
  });
});

// ---- merchant-escrow-list -----------------------------------------------------------------------

describe('merchant-escrow-list', () => {
  it("lists the merchant's own escrows, newest first, by status and page", async () => {
    const m = await merchant();
    const m2 = await merchant('Other Shop');
    const one = (await created(m)).escrow;
    const two = (await created(m)).escrow;
    await created(m2);
    const list = expectOk(await get('merchant-escrow-list', { token: m.key }));
    expect(list.map((e: { id: string }) => e.id)).toEqual([two.id, one.id]);
    const page = expectOk(await get('merchant-escrow-list', { token: m.key, query: { limit: 1 } }));
    expect(page.map((e: { id: string }) => e.id)).toEqual([two.id]);
    const next = expectOk(
      await get('merchant-escrow-list', { token: m.key, query: { limit: 1, before: page[0].created_at } }),
    );
    expect(next.map((e: { id: string }) => e.id)).toEqual([one.id]);
    expect(expectOk(await get('merchant-escrow-list', { token: m.key, query: { status: 'cancelled' } }))).toEqual([]);
    expectError(await get('merchant-escrow-list', { token: m.key, query: { limit: 51 } }), 400);
  });
});

// ---- merchant-escrow-cancel ---------------------------------------------------------------------

describe('merchant-escrow-cancel', () => {
  it('cancels a draft; another merchant gets 404; a funded one is 409', async () => {
    const m = await merchant();
    const m2 = await merchant('Other Shop');
    const { escrow } = await created(m);
    expectError(await post('merchant-escrow-cancel', { escrow_id: escrow.id }, { token: m2.key }), 404);
    const cancelled = expectOk(await post('merchant-escrow-cancel', { escrow_id: escrow.id }, { token: m.key }));
    expect(cancelled).toMatchObject({ id: escrow.id, status: 'cancelled' });
    expect(cancelled.cancelled_at).not.toBeNull();
    expectError(
      await post('merchant-escrow-cancel', { escrow_id: escrow.id }, { token: m.key }),
      409,
      'escrow_wrong_state',
    );
    // funded (as the checkout will fund it, simulated here): no longer the merchant's to cancel
    const { escrow: other } = await created(m);
    await testDb()`update public.escrows set status = 'funded', funded_at = now() where id = ${other.id}`;
    expectError(
      await post('merchant-escrow-cancel', { escrow_id: other.id }, { token: m.key }),
      409,
      'escrow_wrong_state',
    );
  });
});

// ---- what the parties read, and the events ------------------------------------------------------

describe('escrow-get', () => {
  it("shows a party the escrow's merchant", async () => {
    const m = await merchant();
    const [buyer, seller] = await Promise.all([signUp(), signUp()]);
    const { escrow } = await created(m, { buyer_phone: buyer.phone, seller_phone: seller.phone, merchant_fee: 100 });
    for (const u of [buyer, seller]) {
      const got = expectOk(await get('escrow-get', { token: u.accessToken, query: { escrow_id: escrow.id } }));
      expect(got.merchant).toEqual({ id: m.id, name: m.name, fee: 100 });
    }
    const stranger = await signUp();
    expectError(await get('escrow-get', { token: stranger.accessToken, query: { escrow_id: escrow.id } }), 404);
  });
});

describe('notification-list', () => {
  it("tells each party with an account in the app: the merchant's name, the amount, the role", async () => {
    const m = await merchant();
    const [buyer, seller] = await Promise.all([signUp(), signUp()]);
    const { body: b, escrow } = await created(m, {
      buyer_phone: buyer.phone,
      seller_phone: seller.phone,
      title: 'Visit evil.example to claim',
    });
    const noteOf = async (u: { accessToken: string }) =>
      expectOk(await get('notification-list', { token: u.accessToken, query: { escrow_id: escrow.id } }));
    expect(await noteOf(buyer)).toEqual([expect.objectContaining({
      event_type: 'escrow_created',
      content: 'Ada Phones opened a goods escrow of NGN 50,000.00 with you as the buyer. ' +
        'Pay at the checkout Ada Phones gives you; the money stays in escrow.',
    })]);
    const [sellerNote] = await noteOf(seller);
    expect(sellerNote.content).toBe('Ada Phones opened a goods escrow of NGN 50,000.00 with you as the seller.');
    // a replay of the request tells nobody again
    expectOk(await create(m, b), 200);
    expect(await noteOf(buyer)).toHaveLength(1);
  });
});

describe('merchant-escrow-cancel', () => {
  it("makes the merchant a recipient of its escrow's events", async () => {
    const m = await merchant();
    const { escrow } = await created(m);
    expectOk(await post('merchant-escrow-cancel', { escrow_id: escrow.id }, { token: m.key }));
    const rows = await testDb()<{ status: string }[]>`
      select e.data->>'status' as status from private.events e
        join private.event_recipients r on r.event_id = e.id
       where e.escrow_id = ${escrow.id} and r.user_id = ${m.id} order by e.id`;
    expect(rows.map((r) => r.status)).toEqual(['draft', 'cancelled']);
  });
});
