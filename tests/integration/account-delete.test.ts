// account-delete and the account_delete context of auth-send-otp (docs/compliance.md#account-deletion),
// through the real server: the refusals one by one (credentials, then each state that keeps an
// account alive), then a user who touched every store is deleted and every table of the public and
// private schemas is searched for what identified them; the race of a deletion with an escrow
// naming the user and with a top-up.
import { describe, expect, it } from 'vitest';
import { type ApiResult, expectError, expectOk, get, post } from '../support/api.ts';
import { lastOtp, lastSms, testDb } from '../support/db.ts';
import { escrowOp, fundWallet, newDeal } from '../support/escrows.ts';
import { grantRoles } from '../support/operators.ts';
import { newMerchant } from '../support/merchants.ts';
import { newPhone, signUp, type TestUser } from '../support/users.ts';
import accountDelete from '../../supabase/functions/account-delete/handler.ts';
import authRefresh from '../../supabase/functions/auth-refresh/handler.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import escrowList from '../../supabase/functions/escrow-list/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';
import messageFeed from '../../supabase/functions/message-feed/handler.ts';
import messageSend from '../../supabase/functions/message-send/handler.ts';
import profileUpdate from '../../supabase/functions/profile-update/handler.ts';
import reviewList from '../../supabase/functions/review-list/handler.ts';
import reviewSubmit from '../../supabase/functions/review-submit/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';
import adminUserGet from '../../supabase/functions/admin-user-get/handler.ts';
import adminSearch from '../../supabase/functions/admin-search/handler.ts';
import adminEscrowGet from '../../supabase/functions/admin-escrow-get/handler.ts';
import adminQueueList from '../../supabase/functions/admin-queue-list/handler.ts';
import eventsTicket from '../../supabase/functions/events-ticket/handler.ts';
import { openEvents } from '../support/sse.ts';
import { newOperator } from '../support/operators.ts';
import { customerEmailOf, paystack } from '../support/paystack.ts';
import { LEDGER_HOLDS, ledgerInvariants } from '../support/ledger-checks.ts';
import { patch } from '../support/api.ts';

// ---- helpers -------------------------------------------------------------------------------

/** Lets the phone ask for another code at once (the resend gap is a minute; sign-up just used it). */
const clearResendGap = (phone: string) =>
  testDb()`delete from private.rate_limit_events where key = ${`otp:resend:${phone}`}`;

/** A code for account-delete, sent to the user's own phone: the code. */
async function deleteCode(u: TestUser): Promise<string> {
  await clearResendGap(u.phone);
  expectOk(await post(authSendOtp, { context: 'account_delete' }, { token: u.accessToken }));
  return lastOtp(u.phone);
}

const deleteAccount = (u: TestUser, otp_code: string, password = u.password) =>
  post(accountDelete, { password, otp_code }, { token: u.accessToken });

/** A refusal: its status and code, and a message in words. */
function expectRefused(r: ApiResult, status: number, code: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ success: false, code });
  expect(typeof r.body.error).toBe('string');
}

const isDeleted = async (id: string) => {
  const [row] = await testDb()<{ deleted: boolean }[]>`
    select deleted_at is not null as deleted from private.users where id = ${id}`;
  return row?.deleted ?? false;
};

// ---- auth-send-otp: the account_delete context -------------------------------------------------

describe('auth-send-otp', () => {
  describe('context account_delete', () => {
    it('is 401 without a bearer token, and with a token that is not one', async () => {
      expectRefused(await post(authSendOtp, { context: 'account_delete' }), 401, 'unauthenticated');
      expectRefused(
        await post(authSendOtp, { context: 'account_delete' }, { token: 'not.a.token' }),
        401,
        'unauthenticated',
      );
    });

    it("takes no phone: the code goes to the caller's own phone", async () => {
      const u = await signUp();
      const other = await signUp();
      const r = await post(authSendOtp, { context: 'account_delete', phone: other.phone } as never, {
        token: u.accessToken,
      });
      expectError(r, 400, 'validation_failed');
      const code = await deleteCode(u);
      expect(await lastSms(u.phone)).toBe(
        `Your Escrow account deletion code is ${code}. Entering it deletes your Escrow account for good. ` +
          'It expires in 10 minutes. Never share it.',
      );
    });

    it('keeps the per-phone limits: a second code within the minute is 429', async () => {
      const u = await signUp();
      await deleteCode(u);
      expectRefused(
        await post(authSendOtp, { context: 'account_delete' }, { token: u.accessToken }),
        429,
        'rate_limited',
      );
    });

    it('still needs a phone for sign-up and login', async () => {
      expectError(await post(authSendOtp, { context: 'login' } as never), 400, 'validation_failed');
    });
  });
});

// ---- counterparty_phone: whole to the initiator only ------------------------------------------

describe('escrow-list', () => {
  it('shows counterparty_phone whole to the initiator and masked to the counterparty', async () => {
    const deal = await newDeal();
    const masked = `${deal.counterparty.phone.slice(0, 5)}*******${deal.counterparty.phone.slice(-2)}`;
    const phoneIn = async (u: TestUser) =>
      (expectOk(await get(escrowList, { token: u.accessToken })) as { id: string; counterparty_phone: string }[])
        .find((e) => e.id === deal.escrowId)?.counterparty_phone;
    expect(await phoneIn(deal.initiator)).toBe(deal.counterparty.phone);
    expect(await phoneIn(deal.counterparty)).toBe(masked);
    const seen = expectOk(
      await get(escrowGet, { token: deal.counterparty.accessToken, query: { escrow_id: deal.escrowId } }),
    );
    expect(seen.counterparty_phone).toBe(masked);
  });
});

// ---- account-delete ------------------------------------------------------------------------

describe('account-delete', () => {
  describe('refusals of the request', () => {
    it('is 401 without a bearer token', async () => {
      expectRefused(await post(accountDelete, { password: 'x', otp_code: '123456' }), 401, 'unauthenticated');
    });

    it('needs the password and a 6-digit code (400)', async () => {
      const u = await signUp();
      expectError(await post(accountDelete, { password: u.password } as never, { token: u.accessToken }), 400);
      expectError(await post(accountDelete, { otp_code: '123456' } as never, { token: u.accessToken }), 400);
      expectError(await deleteAccount(u, '12345'), 400);
    });

    it('refuses a wrong password, a wrong code, no code asked for, and a stale one, all with one answer', async () => {
      const u = await signUp();
      const refused = (r: ApiResult) => expectRefused(r, 403, 'account_delete_credentials_invalid');
      // no code asked for
      refused(await deleteAccount(u, '123456'));
      const code = await deleteCode(u);
      const wrongPassword = await deleteAccount(u, code, 'not the password');
      const wrong = code === '000000' ? '111111' : '000000';
      const wrongCode = await deleteAccount(u, wrong);
      refused(wrongPassword);
      // a stolen token learns nothing about the password: the same status, code, message and body
      expect(wrongCode.status).toBe(wrongPassword.status);
      expect(wrongCode.body).toEqual(wrongPassword.body);
      // stale: the code's ten minutes are over
      await testDb()`update private.otps set expires_at = now() - interval '1 second'
                      where phone = ${u.phone} and context = 'account_delete' and consumed_at is null`;
      refused(await deleteAccount(u, code));
      expect(await isDeleted(u.id)).toBe(false);
      expectOk(await get(profileGet, { token: u.accessToken }));
    });

    it('refuses the code of another context (a login code of the same phone)', async () => {
      const u = await signUp();
      await clearResendGap(u.phone);
      expectOk(await post(authSendOtp, { phone: u.phone, context: 'login' }));
      const loginCode = await lastOtp(u.phone);
      expectRefused(await deleteAccount(u, loginCode), 403, 'account_delete_credentials_invalid');
      expect(await isDeleted(u.id)).toBe(false);
    });
  });

  describe('refusals while something is open or held', () => {
    it('refuses while an escrow is open, as initiator and as the named counterparty; the code stays usable', async () => {
      const deal = await newDeal();
      const code = await deleteCode(deal.counterparty);
      expectRefused(await deleteAccount(deal.counterparty, code), 409, 'account_delete_escrow_open');
      const initiatorCode = await deleteCode(deal.initiator);
      const r = await deleteAccount(deal.initiator, initiatorCode);
      expectRefused(r, 409, 'account_delete_escrow_open');
      expect(r.body.error).toBe(
        'The account cannot be deleted while 1 escrow is open: finish, cancel or decline them first',
      );
      // the counterparty declines: final; the same code now deletes (a refusal did not use it)
      expectOk(await escrowOp('escrow-decline', deal.counterparty, deal.escrowId));
      expectOk(await deleteAccount(deal.counterparty, code));
      expect(await isDeleted(deal.counterparty.id)).toBe(true);
    });

    it('refuses while money is pending (a top-up not yet paid)', async () => {
      const u = await signUp({ tier: 1 });
      expectOk(await post(walletTopup, { amount: 1_000 }, { token: u.accessToken }));
      expectRefused(await deleteAccount(u, await deleteCode(u)), 409, 'account_delete_money_pending');
    });

    it('refuses while the wallet holds money', async () => {
      const u = await signUp({ tier: 1 });
      await fundWallet(u, 1_500);
      const r = await deleteAccount(u, await deleteCode(u));
      expectRefused(r, 409, 'account_delete_wallet_not_empty');
      expect(r.body.error).toContain('₦1500.00');
    });

    it('refuses while a merchant it owns is active', async () => {
      const m = await newMerchant();
      expectRefused(await deleteAccount(m.owner, await deleteCode(m.owner)), 409, 'account_delete_merchant_active');
    });

    it('refuses while the account is frozen', async () => {
      const u = await signUp();
      const op = await signUp({ tier: 3 });
      await testDb()`select * from private.user_freeze(${u.id}, ${op.id}, 'card fraud reported')`;
      expectRefused(await deleteAccount(u, await deleteCode(u)), 403, 'account_delete_frozen');
    });

    it('refuses while it holds an operator role', async () => {
      const u = await signUp({ tier: 3 });
      await grantRoles(u, ['support']);
      const r = await deleteAccount(u, await deleteCode(u));
      expectRefused(r, 403, 'account_delete_operator');
      expect(r.body.error).toContain('(support)');
    });
  });

  describe('the deletion', () => {
    it('ends every session at once; a new sign-up with the phone is a new account linked to nothing', async () => {
      const u = await signUp({ first_name: 'Zainab', last_name: 'Okafor' });
      const res = expectOk(await deleteAccount(u, await deleteCode(u)));
      expect(res).toEqual({ deleted: true, sessions_ended: 1 });
      expectRefused(await get(profileGet, { token: u.accessToken }), 401, 'unauthenticated');
      expectRefused(await get(walletGet, { token: u.accessToken }), 401, 'unauthenticated');
      expectRefused(await post(authRefresh, { refresh_token: u.refreshToken }), 401, 'refresh_token_invalid');
      expectRefused(await deleteAccount(u, '123456'), 401, 'unauthenticated');

      const again = await signUp({ phone: u.phone });
      expect(again.id).not.toBe(u.id);
      const list = expectOk(await get(escrowList, { token: again.accessToken }));
      expect(list).toEqual([]);
      const profile = expectOk(await get(profileGet, { token: again.accessToken }));
      expect(profile).toMatchObject({ first_name: 'Ada', last_name: 'Obi', phone_number: u.phone });
    });

    it('rewrites only the notifications about the deleted user: another user of the same name stays named', async () => {
      // two users of one name (unique to this test), each inviting someone else
      const last = `Twin${crypto.randomUUID().replace(/[^a-f]/g, '').slice(0, 8)}`;
      const [gone, twin, c, d] = await Promise.all([
        signUp({ first_name: 'Zed', last_name: last }),
        signUp({ first_name: 'Zed', last_name: last }),
        signUp(),
        signUp(),
      ]);
      const invite = (from: TestUser, to: TestUser) =>
        post(escrowCreate, {
          category: 'goods_products',
          // the counterparty pays: they are invited at once
          payer_role: 'counterparty',
          title: `Zed ${last}`,
          counterparty_phone: to.phone,
          amount: 10_000,
        }, { token: from.accessToken });
      const goneDeal = expectOk(await invite(gone, c), 201);
      const twinDeal = expectOk(await invite(twin, d), 201);
      expectOk(await escrowOp('escrow-cancel', gone, goneDeal.escrow_id));
      const notes = (u: TestUser) =>
        testDb()<{ escrow_id: string; message: Record<string, unknown> }[]>`
          select escrow_id, message from public.notifications where user_id = ${u.id} order by created_at`;
      const before = { c: await notes(c), d: await notes(d), twin: await notes(twin) };
      expect(before.d.find((n) => n.escrow_id === twinDeal.escrow_id)?.message.inviter).toBe(`Zed ${last}`);

      expectOk(await deleteAccount(gone, await deleteCode(gone)));

      // the twin's counterparty and the twin still read the twin's name, unchanged
      expect(await notes(d)).toEqual(before.d);
      expect(await notes(twin)).toEqual(before.twin);
      // the deleted user's invitation names Deleted user; the title, equal to the name, is not a name
      const invited = (await notes(c)).find((n) => n.message.kind === 'invite_received');
      expect(invited?.message).toMatchObject({ inviter: 'Deleted user', title: `Zed ${last}` });
    });

    it('a deactivation the provider fails is not lost: an open operator flag, counted in admin-queue-list', async () => {
      const x = await signUp({ tier: 1 });
      expectOk(await post(virtualAccountCreate, {}, { token: x.accessToken }));
      await paystack.assignOutcome(customerEmailOf(x.id), true);
      const [va] = await testDb()<{ provider_account_id: string }[]>`
        select provider_account_id from public.virtual_accounts where user_id = ${x.id}`;
      expect(va?.provider_account_id).toMatch(/^\d+$/);
      await paystack.fail({ path: '/dedicated_account', field: 'id', value: va!.provider_account_id }, 'unavailable');
      const op = await newOperator(['support']);
      const queue = async () =>
        (expectOk(await get(adminQueueList, { token: op.accessToken })) as { queue: string; count: number }[])
          .find((q) => q.queue === 'deactivations_failed')?.count ?? -1;
      const before = await queue();

      expectOk(await deleteAccount(x, await deleteCode(x)));
      // the provider was asked (and failed): the flag the deletion wrote counts the attempt
      await expect.poll(async () => (await paystack.requests(`/dedicated_account/${va!.provider_account_id}`)).length)
        .toBe(1);
      const flags = () =>
        testDb()<{ details: Record<string, unknown>; resolved: boolean }[]>`
          select details, resolved_at is not null as resolved from private.operator_flags
           where kind = 'dedicated_account_deactivation_failed' and user_id = ${x.id}`;
      await expect.poll(async () => (await flags())[0]?.details.attempts).toBe(1);
      const [flag] = await flags();
      expect(flag).toMatchObject({
        resolved: false,
        details: { provider: 'paystack', provider_account_id: va!.provider_account_id, attempts: 1 },
      });
      expect(await queue()).toBeGreaterThanOrEqual(before + 1);
    });

    it("the deactivation is recorded in the deletion's own transaction, and resolved when the provider confirms", async () => {
      const x = await signUp({ tier: 1 });
      expectOk(await post(virtualAccountCreate, {}, { token: x.accessToken }));
      await paystack.assignOutcome(customerEmailOf(x.id), true);
      const [va] = await testDb()<{ provider_account_id: string }[]>`
        select provider_account_id from public.virtual_accounts where user_id = ${x.id}`;
      expectOk(await deleteAccount(x, await deleteCode(x)));
      // written with the deletion (the same transaction's now()): a crash before the call loses nothing
      const [flag] = await testDb()<{ with_deletion: boolean; provider_account_id: string }[]>`
        select f.created_at = u.deleted_at as with_deletion, f.details ->> 'provider_account_id' as provider_account_id
          from private.operator_flags f join private.users u on u.id = f.user_id
         where f.kind = 'dedicated_account_deactivation_failed' and f.user_id = ${x.id}`;
      expect(flag).toEqual({ with_deletion: true, provider_account_id: va!.provider_account_id });
      await expect.poll(async () => {
        const [row] = await testDb()<{ resolved: boolean; by: string | null; attempts: number }[]>`
          select resolved_at is not null as resolved, details ->> 'resolved_by' as by,
                 (details ->> 'attempts')::int as attempts
            from private.operator_flags where kind = 'dedicated_account_deactivation_failed' and user_id = ${x.id}`;
        return row;
      }).toEqual({ resolved: true, by: 'provider_confirmed', attempts: 0 });
      expect((await paystack.requests(`/dedicated_account/${va!.provider_account_id}`)).map((r) => r.method))
        .toEqual(['DELETE']);
    });
  });
});

// ---- a live stream of a deleted account ---------------------------------------------------------

describe('events-stream', () => {
  it('a stream of a deleted account ends within one heartbeat (2 s here), by token or by ticket; none opens again', async () => {
    const x = await signUp();
    const byToken = await openEvents({ token: x.accessToken });
    expect(byToken.status).toBe(200);
    const { ticket } = expectOk(await post(eventsTicket, undefined, { token: x.accessToken }), 201);
    const byTicket = await openEvents({ ticket });
    expect(byTicket.status).toBe(200);
    const code = await deleteCode(x);
    const started = Date.now();
    expectOk(await deleteAccount(x, code));
    // both end on their own (no close from here); each within one heartbeat of the deletion
    await Promise.all([byToken.ended, byTicket.ended]);
    expect(Date.now() - started).toBeLessThan(2_000 + 1_500);
    expect((await openEvents({ token: x.accessToken })).status).toBe(401);
    expect((await openEvents({ ticket })).status).toBe(401);
  });
});

// ---- operators' reads of a deleted account ------------------------------------------------------

/** A user who declined an escrow naming them, then deleted their account: the user and the escrow. */
async function deletedParty(): Promise<{ x: TestUser; c: TestUser; escrowId: string }> {
  const x = await signUp({ first_name: 'Obiageli', last_name: 'Nnamdi' });
  const c = await signUp();
  const named = expectOk(
    await post(escrowCreate, {
      category: 'goods_products',
      payer_role: 'initiator',
      title: 'Used phone',
      counterparty_phone: x.phone,
      amount: 10_000,
    }, { token: c.accessToken }),
    201,
  );
  expectOk(await escrowOp('escrow-decline', x, named.escrow_id));
  expectOk(await deleteAccount(x, await deleteCode(x)));
  return { x, c, escrowId: named.escrow_id };
}

describe('admin-user-get', () => {
  it('answers a deleted account (200): shown as deleted, no phone, never its hash', async () => {
    const { x } = await deletedParty();
    const op = await newOperator(['support']);
    const picture = expectOk(await get(adminUserGet, { token: op.accessToken, query: { user_id: x.id } }));
    expect(picture.profile).toEqual({
      id: x.id,
      phone: null,
      first_name: 'Deleted',
      last_name: 'user',
      kyc_tier: expect.any(Number),
      created_at: expect.any(String),
      deleted_at: expect.any(String),
    });
    expect(picture.active_sessions).toBe(0);
    const [stored] = await testDb()<{ phone: string }[]>`select phone from private.users where id = ${x.id}`;
    expect(JSON.stringify(picture)).not.toContain(stored!.phone.slice(0, 64));
    expect(JSON.stringify(picture)).not.toContain(x.phone.slice(4));
  });
});

describe('admin-search', () => {
  it('finds a deleted account by its id (shown as deleted), and nothing by its old phone', async () => {
    const { x } = await deletedParty();
    const op = await newOperator(['support']);
    for (const q of [x.phone, `0${x.phone.slice(4)}`]) {
      expect(expectOk(await get(adminSearch, { token: op.accessToken, query: { q } }))).toEqual({
        users: [],
        escrows: [],
      });
    }
    const byId = expectOk(await get(adminSearch, { token: op.accessToken, query: { q: x.id } }));
    expect(byId.users).toEqual([{
      id: x.id,
      phone: null,
      first_name: 'Deleted',
      last_name: 'user',
      kyc_tier: expect.any(Number),
      frozen: false,
      created_at: expect.any(String),
      deleted_at: expect.any(String),
    }]);
    const [stored] = await testDb()<{ phone: string }[]>`select phone from private.users where id = ${x.id}`;
    expect(JSON.stringify(byId)).not.toContain(stored!.phone.slice(0, 64));
  });
});

describe('admin-escrow-get', () => {
  it('answers an escrow with a deleted party (200): that party shown as deleted, the other as they are', async () => {
    const { x, c, escrowId } = await deletedParty();
    const op = await newOperator(['support']);
    const t = expectOk(await get(adminEscrowGet, { token: op.accessToken, query: { escrow_id: escrowId } }));
    expect(t.payee).toEqual({ id: x.id, first_name: 'Deleted', last_name: 'user', deleted_at: expect.any(String) });
    expect(t.payer).toEqual({ id: c.id, first_name: 'Ada', last_name: 'Obi', deleted_at: null });
  });
});

// ---- the search of every store -------------------------------------------------------------

/**
 * Where something of the deleted user may stay, and why (the retention decisions of
 * docs/compliance.md): the provider's webhook payloads are kept as received until the job purges
 * them (they are the evidence of what the provider said, and name the customer).
 */
const ALLOWED: readonly string[] = [
  // Paystack's dedicatedaccount.assign.success names the customer (names, phone, email): kept until purged
  'private.webhook_inbox.payload',
  // SMS sent to the counterparty (an invitation names its sender's first name): the counterparty's
  // messages, not the deleted user's phone; purged 90 days after creation like every SMS
  'private.sms_outbox.body',
  'private.sms_outbox.message',
];

/** Every (table, column) of the public and private schemas whose text holds one of `terms`. */
async function storesHolding(terms: string[]): Promise<string[]> {
  const sql = testDb();
  const columns = await sql<{ schema: string; table: string; column: string }[]>`
    select c.table_schema as schema, c.table_name as table, c.column_name as column
      from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
     where c.table_schema in ('public', 'private') and t.table_type = 'BASE TABLE'
       and (c.data_type in ('text', 'character varying', 'jsonb', 'json', 'bytea') or c.data_type = 'ARRAY')
     order by 1, 2, 3`;
  expect(columns.length).toBeGreaterThan(50);
  const found: string[] = [];
  for (const c of columns) {
    const [row] = await sql.unsafe<{ n: number }[]>(
      `select count(*)::int as n from "${c.schema}"."${c.table}" where "${c.column}"::text ilike any($1::text[])`,
      [terms.map((t) => `%${t}%`)],
    );
    if ((row?.n ?? 0) > 0) found.push(`${c.schema}.${c.table}.${c.column}`);
  }
  return found;
}

describe('account-delete', () => {
  describe('a user who touched every store', () => {
    it('leaves nothing that identifies them outside what retention keeps; counterparties keep the deal', async () => {
      const x = await signUp({ first_name: 'Zebulon', last_name: 'Quartermaine', tier: 4 });
      const c = await signUp({ first_name: 'Chiamaka', last_name: 'Nwosu', tier: 4 });
      const username = `zq_${x.id.slice(0, 8)}`;
      expectOk(
        await patch(
          profileUpdate,
          { username, bio: 'Quartermaine trades phones', address: '12 Zebulon Close, Ikeja' },
          {
            token: x.accessToken,
          },
        ),
      );
      await bindIdentityOf(x.id);
      const hashes = (await testDb()<{ id_hash: string }[]>`
        select id_hash from private.identity_bindings where user_id = ${x.id}`).map((r) => r.id_hash);
      expect(hashes).toHaveLength(2);

      // an escrow X pays (under an Idempotency-Key), funded, accepted and released
      const created = expectOk(
        await post(escrowCreate, {
          category: 'p2p_crypto',
          payer_role: 'initiator',
          title: 'USDT for naira',
          counterparty_phone: c.phone,
          amount: 5_000,
        }, { token: x.accessToken, headers: { 'Idempotency-Key': `delete-${x.id}` } }),
        201,
      );
      const paid = created.escrow_id as string;
      await fundWallet(x, created.fee_breakdown.total_charge);
      expectOk(await escrowOp('escrow-fund', x, paid, { method: 'wallet' }));
      expectOk(await escrowOp('escrow-accept', c, paid));
      expectOk(await escrowOp('escrow-release', x, paid));
      // an escrow naming X as its counterparty, which X declines
      const named = expectOk(
        await post(escrowCreate, {
          category: 'goods_products',
          payer_role: 'initiator',
          title: 'Used laptop',
          counterparty_phone: x.phone,
          amount: 10_000,
        }, { token: c.accessToken }),
        201,
      );
      expectOk(await escrowOp('escrow-decline', x, named.escrow_id));
      // messages on both, reviews both ways
      for (const conversation_id of [created.conversation_id, named.conversation_id]) {
        expectOk(
          await post(messageSend, { conversation_id, content: 'Thank you, all good' }, { token: x.accessToken }),
          201,
        );
      }
      expectOk(
        await post(reviewSubmit, { escrow_id: paid, rating: 5, feedback: 'Quartermaine was quick' }, {
          token: c.accessToken,
        }),
        201,
      );
      expectOk(
        await post(reviewSubmit, { escrow_id: paid, rating: 4, feedback: 'Signed, Zebulon' }, {
          token: x.accessToken,
        }),
        201,
      );
      // a dedicated account, assigned by the provider
      expectOk(await post(virtualAccountCreate, {}, { token: x.accessToken }));
      await paystack.assignOutcome(customerEmailOf(x.id), true);
      const [va] = await testDb()<{ account_number: string; provider_account_id: string }[]>`
        select account_number, provider_account_id from public.virtual_accounts where user_id = ${x.id}`;
      expect(va?.provider_account_id).toMatch(/^\d+$/);
      // a merchant with a webhook endpoint, an escrow of its own (cancelled) and a delivery of its event
      const merchant = expectOk(
        await post('merchant-create', { name: 'Lagos Gadgets' }, { token: x.accessToken }),
        201,
      );
      const key = expectOk(await post('merchant-key-create', { name: 'server' }, { token: x.accessToken }), 201);
      const endpoint = expectOk(
        await post('merchant-webhook-create', { url: 'https://hooks.example.com/escrow' }, { token: x.accessToken }),
        201,
      );
      const mEscrow = expectOk(
        await post('merchant-escrow-create', {
          reference: `del-${x.id.slice(0, 8)}`,
          category: 'goods_products',
          title: 'Phone 15',
          amount: 50_000,
          buyer_phone: newPhone().e164,
          seller_phone: newPhone().e164,
        }, { token: key.key }),
        201,
      );
      expectOk(await post('merchant-escrow-cancel', { escrow_id: mEscrow.id }, { token: key.key }));
      await testDb()`
        insert into private.webhook_deliveries (endpoint_id, event_id, type, next_attempt_at)
        select ${endpoint.id}, id, 'escrow.created', now() from private.events where escrow_id = ${mEscrow.id} limit 1`;
      // no endpoint closes a merchant yet: an operator's closing, in SQL
      await testDb()`update private.merchants set status = 'closed' where id = ${merchant.id}`;
      // an operator reads X's picture (the operator audit)
      const op = await newOperator(['support']);
      expectOk(
        await get(adminUserGet, { token: op.accessToken, query: { user_id: x.id, reason: 'a support ticket' } }),
      );

      const deleted = expectOk(await deleteAccount(x, await deleteCode(x)));
      expect(deleted.deleted).toBe(true);

      // the search
      const terms = [
        x.phone,
        `0${x.phone.slice(4)}`,
        x.phone.slice(1),
        'Zebulon',
        'Quartermaine',
        username,
        customerEmailOf(x.id),
        ...hashes,
      ];
      const found = await storesHolding(terms);
      expect(found.filter((f) => !ALLOWED.includes(f))).toEqual([]);

      // the old tokens are refused; the ledger still balances
      expectRefused(await get(walletGet, { token: x.accessToken }), 401, 'unauthenticated');
      expect(await ledgerInvariants(testDb())).toEqual(LEDGER_HOLDS);

      // the counterparty still sees the deals; the deleted party's names are Deleted user
      const seenPaid = expectOk(await get(escrowGet, { token: c.accessToken, query: { escrow_id: paid } }));
      expect(seenPaid).toMatchObject({
        initiator_id: x.id,
        counterparty_phone: c.phone.slice(0, 5) + '*******' + c.phone.slice(-2),
      });
      // both parties reviewed: the deal ended
      expect(seenPaid.status).toBe('ended');
      const seenNamed = expectOk(await get(escrowGet, { token: c.accessToken, query: { escrow_id: named.escrow_id } }));
      expect(seenNamed.counterparty_phone).toBe(`${x.phone.slice(0, 5)}*******${x.phone.slice(-2)}`);
      const feed = expectOk(
        await get(messageFeed, {
          token: c.accessToken,
          query: { conversation_id: created.conversation_id },
        }),
      );
      const fromX = feed.filter((i: { sender_id: string | null }) => i.sender_id === x.id);
      expect(fromX.length).toBeGreaterThan(0);
      for (const m of fromX) {
        expect([m.sender_first_name, m.sender_last_name].join(' ')).toBe('Deleted user');
        expect(m.content).toBe('Thank you, all good');
      }
      const reviews = expectOk(await get(reviewList, { token: c.accessToken }));
      expect(reviews).toHaveLength(1);
      expect(reviews[0]).toMatchObject({
        rating: 4,
        feedback: null,
        reviewer_first_name: 'Deleted',
        reviewer_last_name: 'user',
      });

      // the dedicated account was deactivated at the provider; a transfer still arriving goes to suspense
      await expect.poll(async () => (await paystack.requests(`/dedicated_account/${va!.provider_account_id}`)).length)
        .toBe(1);
      const [deactivation] = await paystack.requests(`/dedicated_account/${va!.provider_account_id}`);
      expect(deactivation?.method).toBe('DELETE');
      const [suspenseBefore] = await testDb()<{ balance: string }[]>`
        select balance::text from private.system_balances where kind = 'suspense'`;
      const d = await paystack.dvaDeposit(va!.account_number, 250_000);
      expect(d.responses[0]?.status).toBe(200);
      const [suspenseAfter] = await testDb()<{ balance: string }[]>`
        select balance::text from private.system_balances where kind = 'suspense'`;
      expect(BigInt(suspenseAfter!.balance) - BigInt(suspenseBefore?.balance ?? '0')).toBe(250_000n);
      const flags = await testDb()<{ received_amount: string }[]>`
        select received_amount::text from private.payment_flags
         where reason = 'deleted_account_deposit' and payload ->> 'user_id' = ${x.id}`;
      expect(flags).toEqual([{ received_amount: '250000' }]);
      expect(await ledgerInvariants(testDb())).toEqual(LEDGER_HOLDS);

      // a new account with the phone is linked to nothing of the old one's
      const fresh = await signUp({ phone: x.phone });
      expect(fresh.id).not.toBe(x.id);
      expect(expectOk(await get(escrowList, { token: fresh.accessToken }))).toEqual([]);
      expect(expectOk(await get(walletGet, { token: fresh.accessToken }))).toMatchObject({ balance: 0 });
      expect(expectOk(await get(reviewList, { token: fresh.accessToken }))).toEqual([]);
    });
  });

  describe('races', () => {
    /**
     * Runs the deletion of `x` so that it holds the account's row while `other` starts: the test holds
     * x's profile row, which the deletion updates after it locked the account and checked it, so
     * the deletion waits there; `other` is sent once the deletion waits, and the profile is let go
     * once `other` waits too (on the account's row). The interleaving that let an escrow or a
     * transaction slip in after the deletion's checks, every time.
     */
    async function deletionHolding(x: TestUser, other: () => Promise<ApiResult>) {
      const code = await deleteCode(x);
      const waiting = async () => {
        const [row] = await testDb()<{ n: number }[]>`
          select count(*)::int as n from pg_catalog.pg_stat_activity
           where wait_event_type = 'Lock' and datname = current_database()`;
        return row?.n ?? 0;
      };
      let del: Promise<ApiResult> | undefined;
      let second: Promise<ApiResult> | undefined;
      await testDb().begin(async (tx) => {
        await tx`select 1 from public.profiles where id = ${x.id} for update`;
        del = deleteAccount(x, code);
        await expect.poll(waiting, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
        second = other();
        await expect.poll(waiting, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      });
      return { del: await del!, second: await second! };
    }

    it('an escrow naming the user, created while the deletion runs, names no account: never a deleted party', async () => {
      const x = await signUp();
      const c = await signUp();
      const { del, second: esc } = await deletionHolding(x, () =>
        post(escrowCreate, {
          category: 'goods_products',
          payer_role: 'initiator',
          title: 'Race',
          counterparty_phone: x.phone,
          amount: 5_000,
        }, { token: c.accessToken }));
      expectOk(del);
      expect(esc.status, JSON.stringify(esc.body)).toBe(201);
      const [row] = await testDb()<{ counterparty_id: string | null }[]>`
        select counterparty_id from public.escrows where id = ${esc.body.data.escrow_id}`;
      expect(row).toEqual({ counterparty_id: null });
      // whoever signs up with the phone is the counterparty
      const fresh = await signUp({ phone: x.phone });
      const list = expectOk(await get(escrowList, { token: fresh.accessToken })) as { id: string }[];
      expect(list.map((e) => e.id)).toEqual([esc.body.data.escrow_id]);
    });

    it('a top-up started while the deletion runs is refused (401): never a deleted account with money pending', async () => {
      const x = await signUp({ tier: 1 });
      const { del, second: top } = await deletionHolding(
        x,
        () => post(walletTopup, { amount: 1_000 }, { token: x.accessToken }),
      );
      expectOk(del);
      expectRefused(top, 401, 'unauthenticated');
      const [row] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from public.transactions where user_id = ${x.id}`;
      expect(row).toEqual({ n: 0 });
    });

    it('either way round, a deletion racing an escrow naming the user or a top-up ends consistent', async () => {
      for (let i = 0; i < 3; i++) {
        const x = await signUp({ tier: 1 });
        const c = await signUp();
        const code = await deleteCode(x);
        const [del, esc, top] = await Promise.all([
          deleteAccount(x, code),
          post(escrowCreate, {
            category: 'goods_products',
            payer_role: 'initiator',
            title: 'Race',
            counterparty_phone: x.phone,
            amount: 5_000,
          }, { token: c.accessToken }),
          post(walletTopup, { amount: 1_000 }, { token: x.accessToken }),
        ]);
        expect(esc.status, JSON.stringify(esc.body)).toBe(201);
        const [row] = await testDb()<{ deleted: boolean; open_named: number; pending: number }[]>`
          select (select deleted_at is not null from private.users where id = ${x.id}) as deleted,
                 (select count(*)::int from public.escrows where counterparty_id = ${x.id}) as open_named,
                 (select count(*)::int from public.transactions where user_id = ${x.id} and status = 'pending') as pending`;
        if (del.status === 200) {
          expect(row).toEqual({ deleted: true, open_named: 0, pending: 0 });
          expect([200, 401]).toContain(top.status);
        } else {
          expect(['account_delete_escrow_open', 'account_delete_money_pending']).toContain(del.body.code);
          expect(row?.deleted).toBe(false);
        }
      }
    });
  });
});

/** Two identity numbers bound to the account, as identity-verify binds them (their keyed hashes). */
async function bindIdentityOf(userId: string): Promise<void> {
  for (const kind of ['nin', 'bvn']) {
    const hash = (await import('node:crypto')).createHash('sha256').update(`${kind}:${userId}`).digest('hex');
    await testDb()`
      insert into private.identity_bindings (kind, id_hash, id_last4, user_id, reference)
      values (${kind}, ${hash}, '1234', ${userId}, ${`ref-${kind}-${userId.slice(0, 8)}`})`;
  }
}
