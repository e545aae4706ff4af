// The operators' reads through the real server (docs/operators.md#reading-a-user-and-an-escrow,
// #queues): admin-search, admin-user-get, admin-escrow-get and admin-queue-list. Who may call them
// (every role; a non-operator gets the 404 of a missing function, an operator without a pass 401),
// what they reveal (identity numbers and account numbers masked, message content only with an open
// dispute or a reason), the audit row of each read, an escrow's timeline read back against the
// ledger, and the queues' counts moving as a dispute escalates, a charge is held, a number is flagged.
import { randomInt, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { type ApiResult, expectError as refused, expectOk as ok, get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { raise } from '../support/disputes.ts';
import { type Deal, escrowOp, fundedDeal, newDeal } from '../support/escrows.ts';
import { kycFake } from '../support/kyc-fake.ts';
import { raiseTier } from '../support/kyc.ts';
import { kobo } from '../support/money.ts';
import { grantRoles, newOperator, type Role, type TestOperator } from '../support/operators.ts';
import { addPayout } from '../support/payouts.ts';
import { signUp, type TestUser } from '../support/users.ts';
import adminEscrowGet from '../../supabase/functions/admin-escrow-get/handler.ts';
import adminQueueList from '../../supabase/functions/admin-queue-list/handler.ts';
import adminSearch from '../../supabase/functions/admin-search/handler.ts';
import adminUserGet from '../../supabase/functions/admin-user-get/handler.ts';
import identityVerify from '../../supabase/functions/identity-verify/handler.ts';
import messageSend from '../../supabase/functions/message-send/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';

const ROLES: Role[] = ['support', 'finance', 'disputes', 'admin'];
let ops: Record<Role, TestOperator>;
let noPass: TestUser;

beforeAll(async () => {
  const made = await Promise.all(ROLES.map((r) => newOperator([r])));
  ops = Object.fromEntries(ROLES.map((r, i) => [r, made[i]!])) as Record<Role, TestOperator>;
  // an operator who signed in but never passed the second factor
  noPass = await signUp({ tier: 3 });
  await grantRoles(noPass, ['support']);
}, 60_000);

/** The audit rows of an operator for an action, oldest first. */
const auditOf = (operator: TestUser, action: string) =>
  testDb()<
    { target_type: string | null; target_id: string | null; reason: string | null; details: Record<string, unknown> }[]
  >`
    select target_type, target_id::text, reason, details from private.admin_audit
     where admin_id = ${operator.id} and action = ${action} order by id`;

/** Who must not see an operator endpoint: a user, no token, a token that is no token; and an operator with no pass. */
async function expectHidden(call: (token: string | undefined) => Promise<ApiResult>, name: string) {
  const stranger = await signUp();
  for (const token of [stranger.accessToken, undefined, 'not.a.token']) {
    const r = await call(token);
    refused(r, 404);
    expect(r.body.error).toBe(`No function named ${name}`);
  }
  refused(await call(noPass.accessToken), 401, 'second_factor_required');
}

/**
 * The read of `call` while the operator's role is revoked under it: the audit row cannot be
 * written (404 operator_not_found) and nothing of the read is answered. The test holds the
 * operator's rows locked, revokes them once the request waits on that lock, and commits.
 */
async function revokedMidRead(call: (token: string) => Promise<ApiResult>) {
  const op = await newOperator(['support']);
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  try {
    let answer: Promise<ApiResult> | undefined;
    await sql.begin(async (tx) => {
      await tx`select 1 from private.operators where user_id = ${op.id} for update`;
      answer = call(op.accessToken);
      // the request passes the gate (a plain read) and then waits on the lock in private.operator_record
      for (let i = 0; i < 100; i++) {
        const [w] = await testDb()<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where wait_event_type = 'Lock' and query like '%operator_record%'`;
        if ((w?.n ?? 0) > 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await tx`delete from private.operators where user_id = ${op.id}`;
    });
    const r = await answer!;
    refused(r, 404, 'operator_not_found');
    expect(await testDb()`select 1 from private.admin_audit where admin_id = ${op.id} and action <> 'operator.grant'`)
      .toHaveLength(0);
  } finally {
    await sql.end();
  }
}

/** A random 11-digit number not ending in 0 (the identity fake's not-found). */
const eleven = () => `${String(randomInt(1, 10_000_000_000)).padStart(10, '0')}${randomInt(1, 10)}`;

/** identity-verify of a number, then the provider's passing result through the KYC fake. */
async function verifyNumber(u: TestUser, type: 'nin' | 'bvn', id: string) {
  const r = ok(await post(identityVerify, { type, id_number: id }, { token: u.accessToken }), 201);
  const d = await kycFake.identityResult({ reference: r.reference, status: 'found' });
  expect(d.responses.map((x) => x.status)).toEqual([200]);
}

const search = (token: string | undefined, q: string) => get(adminSearch, { token, query: { q } });
const userGet = (token: string | undefined, user_id: string, reason?: string) =>
  get(adminUserGet, { token, query: { user_id, reason } });
const escrowGet = (token: string | undefined, escrow_id: string, reason?: string) =>
  get(adminEscrowGet, { token, query: { escrow_id, reason } });
const queues = async (token: string) => {
  const list = ok(await get(adminQueueList, { token }));
  return Object.fromEntries(list.map((q) => [q.queue, q]));
};

describe('admin-search', () => {
  it('does not exist for a non-operator (404); 401 second_factor_required without a pass', async () => {
    const u = await signUp();
    await expectHidden((token) => search(token, u.phone), 'admin-search');
  });

  it('every role finds a user by the 0-prefixed phone, the +234 phone and the id; the audit keeps the kind, never the phone', async () => {
    const u = await signUp({ first_name: 'Ngozi', last_name: 'Eze', tier: 1 });
    const local = `0${u.phone.slice(4)}`;
    for (const role of ROLES) {
      const op = ops[role];
      for (const q of [local, u.phone, u.id, u.id.toUpperCase()]) {
        const found = ok(await search(op.accessToken, q));
        expect(found.users, `${role} ${q}`).toEqual([{
          id: u.id,
          phone: u.phone,
          first_name: 'Ngozi',
          last_name: 'Eze',
          kyc_tier: 1,
          frozen: false,
          created_at: expect.any(String),
          deleted_at: null,
        }]);
        expect(found.escrows).toEqual([]);
      }
      const rows = await auditOf(op, 'user.search');
      expect(rows.slice(-4).map((r) => [r.target_type, r.target_id, r.reason, r.details])).toEqual(
        ['phone', 'phone', 'id', 'id'].map((kind) => [null, null, null, {
          query_kind: kind,
          users_found: 1,
          escrows_found: 0,
          user_ids: [u.id],
          escrow_ids: [],
        }]),
      );
      expect(JSON.stringify(rows)).not.toContain(u.phone.slice(4));
    }
  });

  it('finds an escrow by its id, and a payment by its reference leading to its user', async () => {
    const deal = await fundedDeal({ amount: 3_000 });
    const op = ops.support;
    const byEscrow = ok(await search(op.accessToken, deal.escrowId));
    expect(byEscrow.escrows).toEqual([{
      id: deal.escrowId,
      status: 'funded',
      amount: 3_000,
      payer_id: deal.payer.id,
      payee_id: deal.payee.id,
      created_at: expect.any(String),
    }]);
    expect(byEscrow.users).toEqual([]);
    const [topup] = await testDb()<{ id: string; provider_charge_id: string | null }[]>`
      select id, provider_charge_id from public.transactions where user_id = ${deal.payer.id} and type = 'wallet_topup'`;
    expect(ok(await search(op.accessToken, topup!.id)).users.map((x) => x.id)).toEqual([deal.payer.id]);
    expect(topup!.provider_charge_id).not.toBeNull();
    expect(ok(await search(op.accessToken, topup!.provider_charge_id!)).users.map((x) => x.id)).toEqual([
      deal.payer.id,
    ]);
    // the wallet funding of the escrow leads to the payer and the escrow
    const [funding] = await testDb()<{ id: string }[]>`
      select id from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_funding'`;
    const byFunding = ok(await search(op.accessToken, funding!.id));
    expect(byFunding.users.map((x) => x.id)).toEqual([deal.payer.id]);
    expect(byFunding.escrows.map((x) => x.id)).toEqual([deal.escrowId]);
    const nothing = ok(await search(op.accessToken, 'no-such-reference'));
    expect(nothing).toEqual({ users: [], escrows: [] });
    const [last] = (await auditOf(op, 'user.search')).slice(-1);
    expect(last!.details).toEqual({
      query_kind: 'reference',
      users_found: 0,
      escrows_found: 0,
      user_ids: [],
      escrow_ids: [],
    });
  });

  it('400 for an empty or over-long q', async () => {
    for (const q of ['', '   ', 'x'.repeat(101)]) {
      expect(refused(await search(ops.support.accessToken, q), 400)).toEqual(['q']);
    }
  });

  it('404 operator_not_found when the role is revoked while the search runs', async () => {
    const u = await signUp();
    await revokedMidRead((token) => search(token, u.phone));
  });
});

describe('admin-user-get', () => {
  it('does not exist for a non-operator (404); 401 second_factor_required without a pass', async () => {
    const u = await signUp();
    await expectHidden((token) => userGet(token, u.id), 'admin-user-get');
  });

  it('every role reads the whole picture; identity and account numbers never whole; an audit row per read with the reason', async () => {
    const u = await signUp({ first_name: 'Chidi', last_name: 'Okafor', tier: 2 });
    const nin = eleven();
    const bvn = eleven();
    await verifyNumber(u, 'nin', nin);
    await verifyNumber(u, 'bvn', bvn);
    await addPayout(u);
    const [account] = await testDb()<{ account_number: string }[]>`
      select account_number from public.payout_accounts where user_id = ${u.id}`;
    const deal = await fundedDeal({ amount: 2_000 });
    await raise(deal, 'payer');
    for (const role of ROLES) {
      const reason = `Reading as ${role}: the user called support`;
      const picture = ok(await userGet(ops[role].accessToken, u.id, reason));
      expect(picture.profile).toEqual({
        id: u.id,
        phone: u.phone,
        first_name: 'Chidi',
        last_name: 'Okafor',
        kyc_tier: 3,
        created_at: expect.any(String),
        deleted_at: null,
      });
      const checks = Object.fromEntries(picture.kyc_checks.map((c) => [c.type, c]));
      expect(checks.nin).toMatchObject({ status: 'passed', id_number: `********${nin.slice(-3)}` });
      expect(checks.bvn).toMatchObject({ status: 'passed', id_number: `********${bvn.slice(-3)}` });
      const text = JSON.stringify(picture);
      for (const whole of [nin, bvn, nin.slice(-4), bvn.slice(-4), account!.account_number]) {
        expect(text).not.toContain(whole);
      }
      expect(picture.payout_accounts).toEqual([{
        id: expect.any(String),
        bank_name: 'Guaranty Trust Bank',
        account_number: `******${account!.account_number.slice(-4)}`,
        is_default: true,
        verified: expect.any(Boolean),
      }]);
      expect(picture).toMatchObject({ frozen: null, operator_roles: [], merchants: [], cards: [], escrows: [] });
      expect(picture.active_sessions).toBeGreaterThanOrEqual(1);
      const [row] = (await auditOf(ops[role], 'user.read')).slice(-1);
      expect(row).toEqual({
        target_type: 'user',
        target_id: u.id,
        reason,
        details: { frozen: false, kyc_tier: 3, open_disputes: 0 },
      });
    }
    // the payer's side: escrows with its role, transactions, the open dispute; a read without a reason
    const payer = ok(await userGet(ops.support.accessToken, deal.payer.id));
    expect(payer.escrows).toEqual([{
      id: deal.escrowId,
      status: 'disputed',
      role: 'payer',
      amount: 2_000,
      created_at: expect.any(String),
    }]);
    expect(payer.open_disputes).toEqual([{
      id: expect.any(String),
      escrow_id: deal.escrowId,
      status: 'negotiation',
      created_at: expect.any(String),
    }]);
    expect(payer.transactions.map((t) => [t.kind, t.status, t.held_for_review]).sort()).toEqual([
      ['escrow_funding', 'succeeded', false],
      ['wallet_topup', 'succeeded', false],
    ]);
    expect(payer.wallet).toEqual({ balance: 0, in_escrow: deal.feeBreakdown.total_charge, pending_payouts: 0 });
    const [row] = (await auditOf(ops.support, 'user.read')).slice(-1);
    expect(row).toMatchObject({ target_id: deal.payer.id, reason: null, details: { open_disputes: 1 } });
  });

  it('shows a freeze in force with its reason and the operator roles held', async () => {
    const u = await signUp({ tier: 1 });
    await testDb()`select private.user_freeze(${u.id}, ${ops.finance.id}, 'reported stolen phone')`;
    const picture = ok(await userGet(ops.support.accessToken, u.id));
    expect(picture.frozen).toEqual({
      since: expect.any(String),
      reason: 'reported stolen phone',
      frozen_by: ops.finance.id,
    });
    expect(ok(await search(ops.support.accessToken, u.phone)).users[0]!.frozen).toBe(true);
    expect(ok(await userGet(ops.support.accessToken, ops.admin.id)).operator_roles).toEqual(['admin']);
  });

  it("lists the latest SMS to the user's phone with their state and resends, never their text", async () => {
    const u = await signUp();
    const other = await signUp();
    /** A tier notice to `phone` with its outbox columns set as given; its id. */
    const sms = async (
      phone: string,
      cols: { sent?: boolean; withheld?: string; expired?: boolean; attempts?: number },
    ) => {
      const [r] = await testDb()<{ id: string }[]>`
        insert into private.sms_outbox (phone, message, body, sent_at, withheld, expires_at, attempts)
        values (${phone}, '{"kind":"kyc_tier_changed","tier":2,"raised":true}'::jsonb, 'The secret text of a notice.',
                ${cols.sent ? testDb()`now()` : null}, ${cols.withheld ?? null},
                ${cols.expired ? testDb()`now() - interval '1 minute'` : null}, ${cols.attempts ?? 0})
        returning id::text`;
      return Number(r!.id);
    };
    const [otp] = await testDb()<{ id: string; body: string }[]>`
      select id::text, body from private.sms_outbox where phone = ${u.phone} and message ->> 'kind' = 'otp_code'
       order by id desc limit 1`;
    const sent = await sms(u.phone, { sent: true });
    const withheld = await sms(u.phone, { withheld: 'invite_daily_cap' });
    const expired = await sms(u.phone, { expired: true });
    const failed = await sms(u.phone, { attempts: 5 });
    const queuedId = await sms(u.phone, {});
    await sms(other.phone, { sent: true });
    const [resent] = await testDb()<{ id: string }[]>`
      insert into private.sms_outbox (phone, message, body, sent_at, resend_of)
      select phone, message, body, now(), id from private.sms_outbox where id = ${sent} returning id::text`;
    const picture = ok(await userGet(ops.support.accessToken, u.id));
    const byId = new Map(picture.sms.map((m) => [m.id, m]));
    expect(picture.sms.map((m) => m.id)).toEqual([...picture.sms.map((m) => m.id)].sort((a, b) => b - a));
    expect(byId.get(Number(resent!.id))).toEqual({
      id: Number(resent!.id),
      kind: 'kyc_tier_changed',
      status: 'sent',
      withheld: null,
      resend_of: sent,
      resends: 1,
      created_at: expect.any(String),
      sent_at: expect.any(String),
    });
    expect(byId.get(sent)).toMatchObject({ status: 'sent', resend_of: null, resends: 1 });
    expect(byId.get(withheld)).toMatchObject({ status: 'withheld', withheld: 'invite_daily_cap', sent_at: null });
    expect(byId.get(expired)).toMatchObject({ status: 'expired', resends: 0 });
    expect(byId.get(failed)).toMatchObject({ status: 'failed' });
    expect(byId.get(queuedId)).toMatchObject({ status: 'queued' });
    expect(byId.get(Number(otp!.id))).toMatchObject({ kind: 'otp_code', status: 'sent' });
    // only this phone's messages, and no text: not the notice's, not the one-time code's
    expect(picture.sms).toHaveLength(7);
    const text = JSON.stringify(picture);
    expect(text).not.toContain('The secret text');
    expect(otp!.body).toMatch(/[0-9]{6}/);
    expect(text).not.toContain(otp!.body.match(/[0-9]{6}/)![0]);
    // the 20 latest only
    for (let i = 0; i < 20; i++) await sms(u.phone, { sent: true });
    const latest = ok(await userGet(ops.support.accessToken, u.id)).sms;
    expect(latest).toHaveLength(20);
    expect(latest.some((m) => m.id === Number(resent!.id))).toBe(false);
  });

  it('404 user_not_found for an unknown id; 400 for a malformed id or reason', async () => {
    refused(await userGet(ops.support.accessToken, randomUUID()), 404, 'user_not_found');
    expect(refused(await userGet(ops.support.accessToken, 'not-a-uuid'), 400)).toEqual(['user_id']);
    expect(refused(await userGet(ops.support.accessToken, ops.admin.id, 'short'), 400)).toEqual(['reason']);
  });

  it('404 operator_not_found when the role is revoked while the read runs', async () => {
    const u = await signUp();
    await revokedMidRead((token) => userGet(token, u.id));
  });
});

describe('admin-escrow-get', () => {
  it('does not exist for a non-operator (404); 401 second_factor_required without a pass', async () => {
    const deal = await newDeal();
    await expectHidden((token) => escrowGet(token, deal.escrowId), 'admin-escrow-get');
  });

  it("a released escrow's timeline: the funding and release transfers sum to nothing left, the events, the payout", async () => {
    const deal = await fundedDeal({ amount: 5_000 });
    expect(await raiseTier(deal.payee.id, 3)).toBe(3);
    await addPayout(deal.payee);
    ok(await escrowOp('escrow-release', deal.payer, deal.escrowId));
    for (const role of ROLES) {
      const t = ok(await escrowGet(ops[role].accessToken, deal.escrowId));
      expect(t.escrow).toMatchObject({
        id: deal.escrowId,
        status: 'released',
        amount: 5_000,
        total_charge: deal.feeBreakdown.total_charge,
        held: 0,
      });
      expect(t.payer).toEqual({ id: deal.payer.id, first_name: 'Ini', last_name: 'Obi', deleted_at: null });
      expect(t.payee).toEqual({ id: deal.payee.id, first_name: 'Cou', last_name: 'Obi', deleted_at: null });
      // into the hold: the funding; out of it: the release, exactly what went in
      const ins = t.transfers.filter((x) => x.hold_change > 0);
      const outs = t.transfers.filter((x) => x.hold_change < 0);
      expect(ins.map((x) => x.hold_change)).toEqual([deal.feeBreakdown.total_charge]);
      expect(outs.length).toBeGreaterThanOrEqual(1);
      expect(kobo(t.transfers.reduce((s, x) => s + x.hold_change, 0))).toBe(0);
      for (const x of t.transfers) {
        expect(x.entries.reduce((s, e) => s + kobo(e.amount), 0), x.kind).toBe(0);
        expect(x.entries.find((e) => e.account === 'escrow_hold')).toEqual({
          account: 'escrow_hold',
          owner_id: deal.escrowId,
          amount: x.hold_change,
        });
      }
      // the payee's wallet got the seller payout out of the release
      const payeeIn = outs.flatMap((x) => x.entries).filter((e) =>
        e.account === 'user_wallet' && e.owner_id === deal.payee.id
      );
      expect(kobo(payeeIn.reduce((s, e) => s + e.amount, 0))).toBe(kobo(deal.feeBreakdown.seller_payout));
      const statuses = t.events.filter((e) => e.kind === 'escrow').map((e) => e.status);
      expect(statuses).toContain('funded');
      expect(statuses[statuses.length - 1]).toBe('released');
      expect(t.payouts).toEqual([expect.objectContaining({
        user_id: deal.payee.id,
        amount: deal.feeBreakdown.seller_payout,
      })]);
      expect(t.dispute).toBeNull();
    }
    const rows = await auditOf(ops.admin, 'escrow.read');
    expect(rows.slice(-1)).toEqual([{
      target_type: 'escrow',
      target_id: deal.escrowId,
      reason: null,
      details: { status: 'released', dispute_status: null, content_shown: false },
    }]);
  });

  it('message content: hidden without an open dispute or a reason, shown with a reason, shown with an open dispute', async () => {
    const deal = await fundedDeal({ amount: 2_500 });
    const content = `Meet me at the gate ${randomUUID()}`;
    ok(
      await post(messageSend, { conversation_id: deal.conversationId, content }, { token: deal.payer.accessToken }),
      201,
    );
    const op = ops.support;

    const hidden = ok(await escrowGet(op.accessToken, deal.escrowId));
    expect(hidden.messages).toEqual({ count: 1, content_shown: false, items: null });
    expect(JSON.stringify(hidden)).not.toContain(content);

    const reason = 'The payer reports an offer to pay outside the escrow';
    const withReason = ok(await escrowGet(op.accessToken, deal.escrowId, reason));
    expect(withReason.messages).toEqual({
      count: 1,
      content_shown: true,
      items: [{ id: expect.any(String), sender_id: deal.payer.id, content, created_at: expect.any(String) }],
    });

    ok(await raise(deal, 'payer'), 201);
    const disputed = ok(await escrowGet(op.accessToken, deal.escrowId));
    expect(disputed.messages.content_shown).toBe(true);
    expect(disputed.messages.items!.map((m) => m.content)).toContain(content);
    expect(disputed.dispute).toMatchObject({
      status: 'negotiation',
      reason_code: 'item_not_as_described',
      reason: 'The phone has a cracked screen',
      raised_by: deal.payer.id,
      proposals: [],
    });

    const rows = (await auditOf(op, 'escrow.read')).slice(-3);
    expect(rows.map((r) => [r.target_id, r.reason, r.details.content_shown, r.details.dispute_status])).toEqual([
      [deal.escrowId, null, false, null],
      [deal.escrowId, reason, true, null],
      [deal.escrowId, null, true, 'negotiation'],
    ]);
  });

  it('404 escrow_not_found for an unknown id; 400 for a malformed one', async () => {
    refused(await escrowGet(ops.disputes.accessToken, randomUUID()), 404, 'escrow_not_found');
    expect(refused(await escrowGet(ops.disputes.accessToken, 'abc'), 400)).toEqual(['escrow_id']);
  });

  it('404 operator_not_found when the role is revoked while the read runs', async () => {
    const deal = await newDeal();
    await revokedMidRead((token) => escrowGet(token, deal.escrowId));
  });
});

describe('admin-queue-list', () => {
  it('does not exist for a non-operator (404); 401 second_factor_required without a pass', async () => {
    await expectHidden((token) => get(adminQueueList, { token }), 'admin-queue-list');
  });

  it('every queue, in one order, for every role; no audit row', async () => {
    for (const role of ROLES) {
      const list = ok(await get(adminQueueList, { token: ops[role].accessToken }));
      expect(list.map((q) => q.queue)).toEqual([
        'disputes_negotiation',
        'disputes_escalated',
        'charges_held',
        'payouts_failed',
        'webhooks_failed',
        'identity_flags',
        'deactivations_failed',
      ]);
      for (const q of list) {
        expect(q.oldest_at === null).toBe(q.count === 0);
        expect(q.oldest_age_seconds === null).toBe(q.count === 0);
      }
    }
    expect(
      await testDb()`select 1 from private.admin_audit where admin_id = ${ops.support.id} and action like 'queue%'`,
    )
      .toHaveLength(0);
  });

  it('counts move: a dispute raised and escalated, a charge held for review, an identity number flagged', async () => {
    const token = ops.finance.accessToken;
    const before = await queues(token);

    const deal: Deal = await fundedDeal({ amount: 1_500 });
    const d = ok(await raise(deal, 'payer'), 201);
    const raised = await queues(token);
    expect(raised.disputes_negotiation!.count).toBeGreaterThanOrEqual(before.disputes_negotiation!.count + 1);

    // escalated (as the job does at the deadline), long ago: the oldest of its queue
    const long = '2020-01-01T00:00:00.000000Z';
    await testDb()`update public.disputes set status = 'escalated', escalated_at = ${long} where id = ${d.id}`;
    const escalated = await queues(token);
    expect(escalated.disputes_escalated!.count).toBeGreaterThanOrEqual(before.disputes_escalated!.count + 1);
    expect(Date.parse(escalated.disputes_escalated!.oldest_at!)).toBe(Date.parse(long));
    expect(escalated.disputes_escalated!.oldest_age_seconds).toBeGreaterThan(3600 * 24 * 365);

    // a card top-up whose provider reported another amount: held for review
    const u = await signUp({ tier: 1 });
    const topup = ok(await post(walletTopup, { amount: 1_000 }, { token: u.accessToken }));
    const [held] = await testDb()<{ outcome: string }[]>`
      select private.charge_hold_for_review(${topup.reference}, 'amount_mismatch', 150000, 'success', '{}') as outcome`;
    expect(held!.outcome).toBe('held_for_review');
    const afterHold = await queues(token);
    expect(afterHold.charges_held!.count).toBeGreaterThanOrEqual(before.charges_held!.count + 1);
    const picture = ok(await userGet(token, u.id));
    expect(picture.transactions).toEqual([expect.objectContaining({
      id: topup.reference,
      held_for_review: true,
      // both figures, so that the operator sees what the provider took, not only what was expected
      review: { reason: 'amount_mismatch', expected_amount: 1_000, received_amount: 1_500 },
    })]);

    // a NIN bound to one account, submitted by another: flagged for an operator
    const holder = await signUp({ tier: 2 });
    const other = await signUp({ tier: 2 });
    const nin = eleven();
    await verifyNumber(holder, 'nin', nin);
    refused(
      await post(identityVerify, { type: 'nin', id_number: nin }, { token: other.accessToken }),
      409,
      'identity_in_use',
    );
    const flagged = await queues(token);
    expect(flagged.identity_flags!.count).toBeGreaterThanOrEqual(before.identity_flags!.count + 1);
  });
});
