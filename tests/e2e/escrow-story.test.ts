// An escrow as a client app lives it, entirely through the project's typed client
// (clients/typescript, @escrow-service/client: openapi-fetch typed by the OpenAPI document) against
// the running Deno functions server: two people sign up (and pass the tier-1 identity check, below
// which no money moves), the seller saves a payout account, the buyer tops up the wallet, creates
// a goods_products escrow, funds it from the wallet; the seller accepts with the invite token and
// delivers; the buyer releases; the seller's payout goes to the bank and lands; both review each
// other, which ends the escrow, and each sees the other's public profile. Paystack is the local
// fake (tests/fakes/paystack.ts): it completes the top-up (charge.success) and the payout
// (transfer.success) through the real webhook. Every answer the client receives is checked against
// docs/api/openapi.json and the endpoint's response schema (tests/support/client.ts); the types of
// bodies, queries and answers are the generated ones.
import { randomInt, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type Data,
  type ErrorEnvelope,
  EscrowApiError,
  type EscrowClient,
  type Query,
  unwrap,
} from '../../clients/typescript/index.ts';
import { testClient } from '../support/client.ts';
import { lastOtp } from '../support/db.ts';
import { raiseTier } from '../support/kyc.ts';
import { paystack } from '../support/paystack.ts';
import { newPhone } from '../support/users.ts';

// ---- the client ----------------------------------------------------------------------------

type Transaction = Data<'transaction-list'>['data'][number];

/** What the client's GET, POST and PATCH resolve to. */
type Answer = { data?: unknown; error?: unknown; response: Response };

/** A call that must succeed with `status`: checks the status and the envelope, returns data and the response. */
async function succeeds<R extends Answer>(call: Promise<R>, status = 200) {
  const result = await call;
  const where = `${new URL(result.response.url).pathname}: ${JSON.stringify(result.error ?? '')}`;
  expect(result.response.status, where).toBe(status);
  expect(result.data, where).toMatchObject({ success: true, status });
  return { data: await unwrap(result), response: result.response };
}

const ok = async <R extends Answer>(call: Promise<R>, status = 200) => (await succeeds(call, status)).data;

/** A call that must fail with `status`: unwrap() throws an EscrowApiError; returns the error envelope. */
async function fails(call: Promise<Answer>, status: number): Promise<ErrorEnvelope> {
  const result = await call;
  expect(result.data, `${result.response.url} should have failed`).toBeUndefined();
  const error = await unwrap(result).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(EscrowApiError);
  const refused = error as EscrowApiError;
  expect(refused.status, refused.message).toBe(status);
  expect(refused.response.status).toBe(status);
  expect(refused.body).toMatchObject({ success: false, status });
  return refused.body as ErrorEnvelope;
}

/** An Idempotency-Key header, as the typed client takes it. */
const key = (k: string = randomUUID()) => ({ header: { 'Idempotency-Key': k } });

interface Person {
  id: string;
  phone: string; // E.164
  local: string; // 0XXXXXXXXXX
  token: string;
  api: EscrowClient; // the client with this person's access token
}

/** Sign-up as the app does it: send-otp, the code from the SMS (outbox), verify, signup. */
async function signUpThroughTheApp(first_name: string, last_name: string): Promise<Person> {
  const { local, e164 } = newPhone();
  const api = testClient();
  expect(await ok(api.POST('/auth-send-otp', { body: { phone: local, context: 'signup' } }))).toMatchObject({
    sent: true,
  });
  const code = await lastOtp(e164);
  expect(await ok(api.POST('/auth-verify', { body: { phone: local, context: 'signup', otp_code: code } })))
    .toMatchObject({ verified: true });
  const s = await ok(
    api.POST('/auth-signup', {
      body: { phone: local, first_name, last_name, password: `${first_name} has a long passphrase` },
    }),
    201,
  );
  expect(s.user.phone).toBe(e164);
  const token = s.session.access_token;
  return { id: s.user.id, phone: e164, local, token, api: testClient(token) };
}

const escrowOf = (p: Person, escrowId: string) =>
  ok(p.api.GET('/escrow-get', { params: { query: { escrow_id: escrowId } } }));
const transactionsOf = async (p: Person, query: Query<'transaction-list'> = {}) =>
  (await ok(p.api.GET('/transaction-list', { params: { query } }))).data;
const notificationsOf = (p: Person, escrowId: string) =>
  ok(p.api.GET('/notification-list', { params: { query: { escrow_id: escrowId } } }));
const walletOf = (p: Person) => ok(p.api.GET('/wallet-get'));

// ---- the story -----------------------------------------------------------------------------

describe('an escrow from two sign-ups to a payout that lands (the typed client)', () => {
  it('sign up x2, payout account, top-up, create, fund, accept, deliver, release, payout, transfer.success, reviews', {
    timeout: 60_000,
  }, async () => {
    // --- two people sign up ---
    const [buyer, seller] = await Promise.all([
      signUpThroughTheApp('Amaka', 'Nwosu'),
      signUpThroughTheApp('Chidi', 'Okafor'),
    ]);
    expect(buyer.id).not.toBe(seller.id);
    // both have passed the ID and selfie check (tier 1), recorded as the KYC webhook records it: a
    // tier-0 account moves no money, so the buyer could not top up and the seller's release would
    // stay in the wallet (no payout starts below tier 1)
    expect(await raiseTier(buyer.id, 1)).toBe(1);
    expect(await raiseTier(seller.id, 1)).toBe(1);

    // --- the seller saves a payout account; the bank (fake) knows the account, in their name ---
    const accountNumber = `0${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;
    await paystack.registerAccount('058', accountNumber, 'OKAFOR CHIDI EMEKA');
    const payout = await ok(
      seller.api.POST('/payout-add', {
        params: key(),
        body: {
          bank_code: '058',
          bank_name: 'Guaranty Trust Bank',
          account_number: accountNumber,
          account_name: 'Chidi Okafor',
        },
      }),
      201,
    );
    expect(payout).toMatchObject({
      verified: true,
      is_default: true,
      account_name: 'OKAFOR CHIDI EMEKA',
      account_number: `******${accountNumber.slice(-4)}`,
    });

    // --- the buyer tops up NGN 50,000 by card; Paystack's charge.success completes it ---
    const topup = await ok(buyer.api.POST('/wallet-topup', { params: key(), body: { amount: 50_000 } }));
    expect(topup).toMatchObject({ amount: 50_000, status: 'pending' });
    expect(topup.authorization_url).toMatch(/^https?:\/\//);
    expect(await walletOf(buyer)).toMatchObject({ balance: 0, pending_deposits: 50_000 });
    const charged = await paystack.chargeSuccess(topup.reference);
    expect(charged.responses).toEqual([{
      status: 200,
      body: { success: true, status: 200, data: { received: true } },
    }]);
    expect(await walletOf(buyer)).toMatchObject({ balance: 50_000, pending_deposits: 0, currency: 'NGN' });

    // --- the buyer creates a goods_products escrow for NGN 25,000, naming the seller's phone ---
    const created = await ok(
      buyer.api.POST('/escrow-create', {
        params: key(),
        body: {
          category: 'goods_products',
          payer_role: 'initiator',
          title: 'iPhone 13, 128 GB',
          counterparty_phone: seller.local,
          amount: 25_000,
        },
      }),
      201,
    );
    // fee 1.5% = 375.00, half each; VAT 7.5% of the buyer's 187.50 = 14.0625 -> 14.06
    expect(created.fee_breakdown).toEqual({
      escrow_amount: 25_000,
      payer_fee: 187.5,
      vat: 14.06,
      total_charge: 25_201.56,
      seller_fee: 187.5,
      merchant_fee: 0,
      seller_payout: 24_812.5,
    });
    const escrowId = created.escrow_id;
    const draft = await escrowOf(buyer, escrowId);
    expect(draft).toMatchObject({
      status: 'draft',
      initiator_id: buyer.id,
      // not shown to the buyer until the seller accepts or declines (it would tell whether the
      // phone has an account)
      counterparty_id: null,
      counterparty_phone: seller.phone,
      category: 'goods_products',
      payer_role: 'initiator',
      amount: 25_000,
      funded_at: null,
    });
    // the seller can see it already (it names their phone), a draft until the buyer pays
    expect((await escrowOf(seller, escrowId)).status).toBe('draft');

    // --- the buyer funds it from the wallet ---
    const funded = await ok(
      buyer.api.POST('/escrow-fund', { params: key(), body: { escrow_id: escrowId, method: 'wallet' } }),
    );
    // by wallet the answer is the escrow itself (by card or bank transfer, what to do next)
    if (!('funded_at' in funded)) throw new Error(`escrow-fund by wallet answered ${JSON.stringify(funded)}`);
    expect(funded.status).toBe('active');
    expect(funded.funded_at).not.toBeNull();
    expect(funded.accepted_at).toBeNull();
    expect((await walletOf(buyer)).balance).toBe(24_798.44);

    // --- the seller accepts with the invite token (as the link in the invite would) ---
    // a wrong token is 404, the buyer cannot accept their own escrow (403)
    await fails(seller.api.POST('/escrow-accept', { body: { invite_token: `x${created.invite_token}` } }), 404);
    await fails(buyer.api.POST('/escrow-accept', { body: { invite_token: created.invite_token } }), 403);
    const accepted = await ok(seller.api.POST('/escrow-accept', { body: { invite_token: created.invite_token } }));
    expect(accepted).toMatchObject({ id: escrowId, status: 'funded' });
    expect(accepted.accepted_at).not.toBeNull();
    // now that the seller accepted, the buyer sees who the counterparty is
    expect((await escrowOf(buyer, escrowId)).counterparty_id).toBe(seller.id);

    // --- the seller delivers: a one-day inspection period starts ---
    const delivered = await ok(seller.api.POST('/escrow-deliver', { body: { escrow_id: escrowId } }));
    expect(delivered.status).toBe('inspection');
    expect(Date.parse(delivered.inspection_ends_at as string) - Date.parse(delivered.delivered_at as string)).toBe(
      86_400_000,
    );

    // --- the buyer releases (a retry with the same Idempotency-Key replays, never pays twice) ---
    const releaseKey = randomUUID();
    const release = await succeeds(
      buyer.api.POST('/escrow-release', { params: key(releaseKey), body: { escrow_id: escrowId } }),
    );
    expect(release.data.status).toBe('released');
    expect(release.data.released_at).not.toBeNull();
    const retried = await succeeds(
      buyer.api.POST('/escrow-release', { params: key(releaseKey), body: { escrow_id: escrowId } }),
    );
    expect(retried.response.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.data).toEqual(release.data);
    // without the key, a second release is refused by the state
    await fails(buyer.api.POST('/escrow-release', { body: { escrow_id: escrowId } }), 409);

    // --- the seller's money: credited, then on its way to the bank (payout pending) ---
    const sellerTxs = await transactionsOf(seller, { escrow_id: escrowId });
    expect(sellerTxs.map((t) => [t.type, t.direction, t.amount, t.status])).toEqual([
      ['escrow_payout', 'out', 24_812.5, 'pending'],
      ['escrow_release', 'in', 24_812.5, 'succeeded'],
    ]);
    const payoutTx = sellerTxs[0] as Transaction;
    expect(payoutTx).toMatchObject({ category: 'escrow', escrow_id: escrowId, completed_at: null });
    // the transfer was requested from Paystack with our transaction id as its reference
    const transfers = (await paystack.requests('/transfer')).filter((r) =>
      r.method === 'POST' && r.body?.reference === payoutTx.id
    );
    expect(transfers).toHaveLength(1);
    expect(transfers[0]?.body).toMatchObject({ amount: 2_481_250, reference: payoutTx.id });
    expect((await walletOf(seller)).balance).toBe(0);
    expect((await transactionsOf(seller, { status: 'pending' })).map((t) => t.id)).toEqual([payoutTx.id]);

    // --- the bank confirms: transfer.success (delivered twice, as webhooks can be) ---
    const landed = await paystack.transferOutcome(payoutTx.id, 'transfer.success', { times: 2 });
    expect(landed.responses.map((r) => r.status)).toEqual([200, 200]);
    const settled = await transactionsOf(seller, { escrow_id: escrowId });
    expect(settled.map((t) => [t.type, t.status])).toEqual([
      ['escrow_payout', 'succeeded'],
      ['escrow_release', 'succeeded'],
    ]);
    expect(settled[0]?.completed_at).not.toBeNull();
    expect(settled[0]?.provider_transfer_id).toMatch(/^TRF_/);
    expect(await transactionsOf(seller, { status: 'pending' })).toEqual([]);
    // the escrow is done
    expect((await escrowOf(seller, escrowId)).status).toBe('released');

    // --- the buyer's record: the top-up and the escrow funding ---
    const buyerTxs = await transactionsOf(buyer);
    expect(buyerTxs.map((t) => [t.type, t.category, t.direction, t.amount, t.status])).toEqual([
      ['escrow_funding', 'escrow', 'out', 25_201.56, 'succeeded'],
      ['wallet_topup', 'deposit', 'in', 50_000, 'succeeded'],
    ]);

    // --- notifications: each party heard what concerns them, newest first ---
    const buyerNotes = await notificationsOf(buyer, escrowId);
    expect(buyerNotes.map((n) => n.event_type)).toEqual([
      'released',
      'delivered',
      'active',
      'funded',
      'escrow_created',
    ]);
    const sellerNotes = await notificationsOf(seller, escrowId);
    expect(sellerNotes.map((n) => n.event_type)).toEqual(['payout_succeeded', 'released', 'invite_received']);
    for (const n of buyerNotes) expect(n).toMatchObject({ user_id: buyer.id, escrow_id: escrowId, is_read: false });
    for (const n of sellerNotes) expect(n).toMatchObject({ user_id: seller.id, escrow_id: escrowId, is_read: false });
    expect(sellerNotes[0]).toMatchObject({ entity_type: 'transaction', entity_id: payoutTx.id });

    // --- the end: exact balances ---
    expect(await walletOf(buyer)).toMatchObject({ balance: 24_798.44, pending_deposits: 0, pending_withdrawals: 0 });
    expect(await walletOf(seller)).toMatchObject({ balance: 0, pending_deposits: 0, pending_withdrawals: 0 });

    // --- both review each other: the second review ends the escrow ---
    const review = await ok(
      buyer.api.POST('/review-submit', {
        params: key(),
        body: { escrow_id: escrowId, rating: 5, feedback: 'As described.' },
      }),
      201,
    );
    expect(review).toMatchObject({ reviewer_id: buyer.id, reviewee_id: seller.id, reviewer_first_name: 'Amaka' });
    await fails(buyer.api.POST('/review-submit', { body: { escrow_id: escrowId, rating: 4 } }), 409);
    expect((await notificationsOf(seller, escrowId))[0]).toMatchObject({
      event_type: 'review_received',
      entity_type: 'review',
      entity_id: review.id,
      action_label: 'Leave a review',
    });
    await ok(seller.api.POST('/review-submit', { body: { escrow_id: escrowId, rating: 4 } }), 201);
    expect((await escrowOf(buyer, escrowId)).status).toBe('ended');
    // what each may now see of the other
    expect(await ok(buyer.api.GET('/review-list', { params: { query: { user_id: seller.id } } }))).toEqual([review]);
    expect(await ok(buyer.api.GET('/profile-public-get', { params: { query: { user_id: seller.id } } })))
      .toMatchObject({
        first_name: 'Chidi',
        last_initial: 'O',
        completed_deals: 1,
        rating_average: 5,
        rating_count: 1,
      });
  });
});
