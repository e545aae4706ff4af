// The operator's account actions and four eyes on large dispute resolutions, through the real
// server (docs/operators.md): admin-user-freeze (finance, at once: a withdrawal is 403
// account_frozen, a release to the frozen payee is credited and starts no payout),
// admin-user-unfreeze (finance, always a second operator: 202, then approved by another finance
// operator who has held the role 24 hours; refused on re-check when unfrozen meanwhile),
// admin-session-revoke (support: the old token is 401), admin-sms-resend (support: the same
// phone, never codes, withheld or old messages, at most 3 resends), and admin-dispute-resolve
// above FOUR_EYES_MIN_AMOUNT (202, the approval performs the split, 10 approvals at once settle
// it once). Wrong role: 403 operator_role_required; not an operator: 404.
import { describe, expect, it } from 'vitest';
import { type ApiResult, expectError as refused, expectOk as ok, get, post } from '../support/api.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import { halfUp, stored } from '../support/disputes.ts';
import { escrowOp, fundedDeal, fundWallet } from '../support/escrows.ts';
import { balances, holdTransfers, walletKobo } from '../support/ledger.ts';
import { kobo } from '../support/money.ts';
import { raiseTier } from '../support/kyc.ts';
import { newOperator, type Role, type TestOperator } from '../support/operators.ts';
import { addPayout } from '../support/payouts.ts';
import { signUp, type TestUser } from '../support/users.ts';
import adminApprovalDecide from '../../supabase/functions/admin-approval-decide/handler.ts';
import adminDisputeResolve from '../../supabase/functions/admin-dispute-resolve/handler.ts';
import adminSessionRevoke from '../../supabase/functions/admin-session-revoke/handler.ts';
import adminSmsResend from '../../supabase/functions/admin-sms-resend/handler.ts';
import adminUserFreeze from '../../supabase/functions/admin-user-freeze/handler.ts';
import adminUserUnfreeze from '../../supabase/functions/admin-user-unfreeze/handler.ts';
import disputeRaise from '../../supabase/functions/dispute-raise/handler.ts';
import disputeWithdraw from '../../supabase/functions/dispute-withdraw/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

const REASON = 'Fraud reported by the issuing bank for this account';

/** An operator who has held their roles for 25 hours: one who may approve. */
async function seasoned(roles: Role[]): Promise<TestOperator> {
  const op = await newOperator(roles);
  await testDb()`update private.operators set granted_at = now() - interval '25 hours' where user_id = ${op.id}`;
  return op;
}

const decide = (op: TestUser, approvalId: string, decision: 'approve' | 'reject' = 'approve') =>
  post(adminApprovalDecide, { approval_id: approvalId, decision, reason: 'Checked the case file myself' }, {
    token: op.accessToken,
  });

const frozen = async (userId: string) => {
  const [r] = await testDb()<{ f: boolean }[]>`select private.account_frozen(${userId}) as f`;
  return r!.f;
};

const withdraw = (u: TestUser, amount = 1_000) => post(walletWithdraw, { amount }, { token: u.accessToken });

/** The role and existence gates of an operator endpoint: 404 to a non-operator, 403 to a wrong role. */
async function gates(send: (token: string) => Promise<ApiResult>, wrongRole: Role) {
  const stranger = await signUp({ tier: 3 });
  refused(await send(stranger.accessToken), 404);
  const other = await newOperator([wrongRole]);
  expect(refused(await send(other.accessToken), 403)).toBeDefined();
  const r = await send(other.accessToken);
  expect(r.body).toMatchObject({ code: 'operator_role_required' });
}

describe('admin-user-freeze', () => {
  it('freezes at once: a withdrawal is 403 account_frozen; a release to the frozen payee starts no payout', async () => {
    const finance = await newOperator(['finance']);
    const deal = await fundedDeal({ amount: 20_000 });
    expect(await raiseTier(deal.payee.id, 3)).toBe(3);
    await addPayout(deal.payee);
    await fundWallet(deal.payee, 5_000);
    const frozeAt = ok(
      await post(adminUserFreeze, { user_id: deal.payee.id, reason: REASON }, {
        token: finance.accessToken,
      }),
    );
    expect(frozeAt).toMatchObject({ user_id: deal.payee.id, frozen: true, changed: true });
    expect(await frozen(deal.payee.id)).toBe(true);

    const w = await withdraw(deal.payee);
    expect(w.status).toBe(403);
    expect(w.body).toMatchObject({ code: 'account_frozen' });

    // the payer is not frozen: the release succeeds, the payee is credited and no payout starts
    const before = await walletKobo(deal.payee.id);
    ok(await escrowOp('escrow-release', deal.payer, deal.escrowId));
    expect(await walletKobo(deal.payee.id)).toBe(before + deal.feeBreakdown.seller_payout * 100);
    const [p] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_payout'`;
    expect(p!.n).toBe(0);

    // the audit row, in the same transaction
    const [a] = await testDb()<{ target_id: string; reason: string; details: Record<string, unknown> }[]>`
      select target_id, reason, details from private.admin_audit where admin_id = ${finance.id} and action = 'user.freeze'`;
    expect(a).toMatchObject({ target_id: deal.payee.id, reason: REASON, details: { changed: true } });
    await expectLedgerInvariants();
  });

  it('freezing a frozen account is 200 with changed false: the first freeze and its reason stand', async () => {
    const finance = await newOperator(['finance']);
    const u = await signUp();
    const first = ok(await post(adminUserFreeze, { user_id: u.id, reason: REASON }, { token: finance.accessToken }));
    const again = ok(
      await post(adminUserFreeze, { user_id: u.id, reason: 'Another reason, given later on' }, {
        token: finance.accessToken,
      }),
    );
    expect(again).toEqual({ ...first, changed: false });
    const [f] = await testDb()<{ reason: string; n: number }[]>`
      select min(reason) as reason, count(*)::int as n from private.account_freezes where user_id = ${u.id}`;
    expect(f).toEqual({ reason: REASON, n: 1 });
  });

  it('404 user_not_found for an unknown user; 403 to another role; 404 to a non-operator', async () => {
    const finance = await newOperator(['finance']);
    const r = await post(adminUserFreeze, { user_id: crypto.randomUUID(), reason: REASON }, {
      token: finance.accessToken,
    });
    refused(r, 404);
    expect(r.body).toMatchObject({ code: 'user_not_found' });
    const u = await signUp();
    await gates((token) => post(adminUserFreeze, { user_id: u.id, reason: REASON }, { token }), 'support');
    expect(await frozen(u.id)).toBe(false);
  });
});

describe('admin-user-unfreeze', () => {
  it('waits for a second finance operator with 24 hours of tenure; then the money moves again', async () => {
    const finance = await newOperator(['finance']);
    const u = await signUp({ tier: 3 });
    await fundWallet(u, 5_000);
    await addPayout(u);
    ok(await post(adminUserFreeze, { user_id: u.id, reason: REASON }, { token: finance.accessToken }));

    const asked = await post(adminUserUnfreeze, { user_id: u.id, reason: 'The bank withdrew its fraud report' }, {
      token: finance.accessToken,
    });
    const { approval } = ok(asked, 202);
    expect(approval).toMatchObject({
      action: 'user.unfreeze',
      target_type: 'user',
      target_id: u.id,
      status: 'pending',
      roles: ['finance'],
      amount: null,
    });
    expect(await frozen(u.id)).toBe(true);
    refused(await withdraw(u), 403);

    // not the one who asked; not one who got the role a moment ago; not another role
    expect((await decide(finance, approval.id)).body).toMatchObject({ code: 'approval_own_action' });
    const fresh = await newOperator(['finance']);
    expect((await decide(fresh, approval.id)).body).toMatchObject({ code: 'approval_tenure_required' });
    const support = await seasoned(['support']);
    expect((await decide(support, approval.id)).body).toMatchObject({ code: 'operator_role_required' });
    expect(await frozen(u.id)).toBe(true);

    const second = await seasoned(['finance']);
    expect(ok(await decide(second, approval.id))).toMatchObject({ status: 'approved', decided_by: second.id });
    expect(await frozen(u.id)).toBe(false);
    const [a] = await testDb()<{ admin_id: string; details: Record<string, unknown> }[]>`
      select admin_id, details from private.admin_audit where action = 'user.unfreeze' and target_id = ${u.id}`;
    expect(a).toMatchObject({ admin_id: second.id, details: { approval_id: approval.id } });
    expect(ok(await withdraw(u))).toMatchObject({ type: 'withdrawal', amount: 1_000 });
  });

  it('409 account_not_frozen when there is nothing to undo, and on re-check when unfrozen meanwhile', async () => {
    const finance = await newOperator(['finance']);
    const u = await signUp();
    const none = await post(adminUserUnfreeze, { user_id: u.id, reason: 'Nothing to undo here at all' }, {
      token: finance.accessToken,
    });
    refused(none, 409);
    expect(none.body).toMatchObject({ code: 'account_not_frozen' });
    refused(
      await post(adminUserUnfreeze, { user_id: crypto.randomUUID(), reason: 'Nobody has this id at all' }, {
        token: finance.accessToken,
      }),
      404,
    );

    ok(await post(adminUserFreeze, { user_id: u.id, reason: REASON }, { token: finance.accessToken }));
    const { approval } = ok(
      await post(adminUserUnfreeze, { user_id: u.id, reason: 'The bank withdrew its fraud report' }, {
        token: finance.accessToken,
      }),
      202,
    );
    // unfrozen by other means meanwhile (the SQL function, as a script would)
    await testDb()`select private.user_unfreeze(${u.id}, ${finance.id}, 'undone by the test meanwhile')`;
    const second = await seasoned(['finance']);
    const late = await decide(second, approval.id);
    refused(late, 409);
    expect(late.body).toMatchObject({ code: 'account_not_frozen' });
    const [row] = await testDb()<{ status: string }[]>`select status from private.approvals where id = ${approval.id}`;
    expect(row!.status).toBe('pending');
  });

  it('403 to another role; 404 to a non-operator', async () => {
    const finance = await newOperator(['finance']);
    const u = await signUp();
    ok(await post(adminUserFreeze, { user_id: u.id, reason: REASON }, { token: finance.accessToken }));
    await gates((token) => post(adminUserUnfreeze, { user_id: u.id, reason: REASON }, { token }), 'disputes');
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.approvals where target_id = ${u.id}`;
    expect(n!.n).toBe(0);
  });
});

describe('admin-session-revoke', () => {
  it('ends every session of the user: the old token is 401, the refresh token too; audited with the count', async () => {
    const support = await newOperator(['support']);
    const u = await signUp();
    ok(await get(profileGet, { token: u.accessToken }));
    const r = ok(
      await post(adminSessionRevoke, { user_id: u.id, reason: 'The user reports a stolen phone' }, {
        token: support.accessToken,
      }),
    );
    expect(r).toEqual({ user_id: u.id, sessions_ended: 1 });
    const after = await get(profileGet, { token: u.accessToken });
    expect(after.status).toBe(401);
    refused(await post('auth-refresh', { refresh_token: u.refreshToken }), 401);
    const [a] = await testDb()<{ details: Record<string, unknown> }[]>`
      select details from private.admin_audit where admin_id = ${support.id} and action = 'session.revoke'`;
    expect(a!.details).toEqual({ sessions_ended: 1 });
    // none left: 0
    expect(
      ok(
        await post(adminSessionRevoke, { user_id: u.id, reason: 'The user reports a stolen phone' }, {
          token: support.accessToken,
        }),
      ),
    ).toEqual({ user_id: u.id, sessions_ended: 0 });
  });

  it('404 user_not_found; 403 to another role; 404 to a non-operator', async () => {
    const support = await newOperator(['support']);
    const r = await post(adminSessionRevoke, { user_id: crypto.randomUUID(), reason: REASON }, {
      token: support.accessToken,
    });
    expect(r.body).toMatchObject({ code: 'user_not_found' });
    const u = await signUp();
    await gates((token) => post(adminSessionRevoke, { user_id: u.id, reason: REASON }, { token }), 'finance');
    ok(await get(profileGet, { token: u.accessToken }));
  });
});

describe('admin-sms-resend', () => {
  /** A message queued for `phone` (a tier change notice), `hoursAgo` old; its id. */
  async function queued(phone: string, hoursAgo = 0, withheld: string | null = null): Promise<number> {
    const [r] = await testDb()<{ id: string }[]>`
      insert into private.sms_outbox (phone, message, body, sent_at, withheld, created_at)
      values (${phone}, '{"kind":"kyc_tier_changed","tier":2,"raised":true}'::jsonb, 'Your account is now at tier 2.',
              now() - ${hoursAgo} * interval '1 hour', ${withheld}, now() - ${hoursAgo} * interval '1 hour')
      returning id::text`;
    return Number(r!.id);
  }
  const resend = (op: TestUser, smsId: number) =>
    post(adminSmsResend, { sms_id: smsId, reason: 'The user says the message never arrived' }, {
      token: op.accessToken,
    });

  it('queues the same text to the same phone and sends it; at most 3 resends of one message, even at once', async () => {
    const support = await newOperator(['support']);
    const u = await signUp();
    const id = await queued(u.phone);
    const first = ok(await resend(support, id));
    expect(first).toMatchObject({ resend_of: id, kind: 'kyc_tier_changed', resends: 1 });
    const [row] = await testDb()<{ phone: string; body: string; sent: boolean; resend_of: string }[]>`
      select phone, body, sent_at is not null as sent, resend_of::text from private.sms_outbox where id = ${first.sms_id}`;
    expect(row).toEqual({ phone: u.phone, body: 'Your account is now at tier 2.', sent: true, resend_of: String(id) });
    // a resend of the resend counts for the first message; 5 at once: 2 more go, 3 are refused
    const answers = await Promise.all([
      resend(support, first.sms_id),
      ...Array.from({ length: 4 }, () => resend(support, id)),
    ]);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
    const over = answers.filter((a) => a.status !== 200);
    expect(over).toHaveLength(3);
    for (const a of over) expect(a.body).toMatchObject({ code: 'sms_resend_limit', status: 409 });
    const [n] = await testDb()<
      { n: number }[]
    >`select count(*)::int as n from private.sms_outbox where resend_of = ${id}`;
    expect(n!.n).toBe(3);
    const audit = await testDb()<{ details: Record<string, unknown> }[]>`
      select details from private.admin_audit where admin_id = ${support.id} and action = 'sms.resend' order by id`;
    expect(audit.map((a) => a.details.resends)).toEqual([1, 2, 3]);
    expect(audit[0]!.details).toMatchObject({ sms_id: id, resent_as: first.sms_id, kind: 'kyc_tier_changed' });
  });

  it('refuses one-time codes, withheld messages, messages over 24 hours old and unknown ids', async () => {
    const support = await newOperator(['support']);
    const u = await signUp();
    const [otp] = await testDb()<{ id: string }[]>`
      select id::text from private.sms_outbox where phone = ${u.phone} and message ->> 'kind' = 'otp_code'
       order by id desc limit 1`;
    const code = await resend(support, Number(otp!.id));
    refused(code, 409);
    expect(code.body).toMatchObject({ code: 'sms_one_time_code' });
    expect((await resend(support, await queued(u.phone, 0, 'invite_daily_cap'))).body).toMatchObject({
      code: 'sms_withheld',
    });
    expect((await resend(support, await queued(u.phone, 25))).body).toMatchObject({ code: 'sms_too_old' });
    ok(await resend(support, await queued(u.phone, 23)));
    const none = await resend(support, 9_000_000_000);
    refused(none, 404);
    expect(none.body).toMatchObject({ code: 'sms_not_found' });
    const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.sms_outbox where phone = ${u.phone} and resend_of is not null`;
    expect(n!.n).toBe(1);
  });

  it('403 to another role; 404 to a non-operator', async () => {
    const u = await signUp();
    const id = await queued(u.phone);
    await gates(
      (token) => post(adminSmsResend, { sms_id: id, reason: 'The user says it never arrived' }, { token }),
      'finance',
    );
    const [n] = await testDb()<
      { n: number }[]
    >`select count(*)::int as n from private.sms_outbox where resend_of = ${id}`;
    expect(n!.n).toBe(0);
  });
});

describe('admin-dispute-resolve', () => {
  /** A funded deal of NGN `amount` with a dispute raised by the payer; `escalated`: as the job leaves it. */
  async function disputed(amount: number, escalated: boolean) {
    const deal = await fundedDeal({ amount });
    const d = ok(
      await post(disputeRaise, {
        escrow_id: deal.escrowId,
        reason_code: 'item_not_received',
        reason: 'Nothing arrived after two weeks',
      }, { token: deal.payer.accessToken }),
      201,
    );
    // the negotiation's deadline passed: escalated as the scheduled job leaves it (this suite has no clock)
    if (escalated) {
      await testDb()`update public.disputes set status = 'escalated', escalated_at = now() where id = ${d.id}`;
    }
    return { deal, disputeId: d.id as string };
  }

  it('a split of an escalated dispute above NGN 1,000,000: 202, then approved, the ledger moves once for 10 approvals', async () => {
    const first = await newOperator(['disputes']);
    const amount = 1_500_000;
    const { deal, disputeId } = await disputed(amount, true);
    const before = await balances(deal);
    const { amount: A, payerFee, vat, sellerFee } = await stored(deal.escrowId);
    const body = {
      dispute_id: disputeId,
      outcome: 'split' as const,
      payee_amount: 900_000,
      resolution: 'Part of the order arrived: the seller keeps 900,000',
    };
    const asked = await post(adminDisputeResolve, body, { token: first.accessToken });
    const { approval } = ok(asked, 202) as { approval: { id: string } };
    expect(asked.body.data).toMatchObject({
      approval: {
        action: 'dispute.resolve',
        target_type: 'dispute',
        target_id: disputeId,
        amount,
        roles: ['disputes'],
      },
    });
    // nothing moved yet; the same request again answers the same approval
    expect(await balances(deal)).toEqual(before);
    expect(ok(await post(adminDisputeResolve, body, { token: first.accessToken }), 202)).toMatchObject({
      approval: { id: approval.id },
    });

    const approvers = await Promise.all([seasoned(['disputes']), seasoned(['disputes'])]);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => decide(approvers[i % 2]!, approval.id)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect(a.body).toMatchObject({ code: 'approval_not_pending' });
    }

    const P = kobo(900_000);
    const after = await balances(deal);
    expect(after.hold).toBe(0);
    expect(after.payee - before.payee).toBe(P - halfUp(sellerFee, P, A));
    expect(after.payer - before.payer).toBe(A - P + halfUp(payerFee, A - P, A) + halfUp(vat, A - P, A));
    // the split left the hold once: one transfer to the payee, one back to the payer
    expect((await holdTransfers(deal.escrowId)).map((t) => t.key)).toEqual([
      `dispute-refund:${disputeId}`,
      `dispute-release:${disputeId}`,
    ]);
    const [d] = await testDb()<{ status: string; outcome: string; resolved_by: string; resolution: string }[]>`
      select status, outcome, resolved_by, resolution from public.disputes where id = ${disputeId}`;
    const winner = answers.findIndex((a) => a.status === 200);
    expect(d).toEqual({
      status: 'resolved',
      outcome: 'split',
      resolved_by: approvers[winner % 2]!.id,
      resolution: body.resolution,
    });
    await expectLedgerInvariants();
  });

  it('the re-check: a dispute withdrawn meanwhile is 409 dispute_wrong_state and the approval stays pending', async () => {
    const first = await newOperator(['disputes']);
    const { deal, disputeId } = await disputed(1_200_000, false);
    const { approval } = ok(
      await post(adminDisputeResolve, {
        dispute_id: disputeId,
        outcome: 'refund',
        resolution: 'Nothing was delivered: refund the buyer',
      }, { token: first.accessToken }),
      202,
    ) as { approval: { id: string } };
    ok(await post(disputeWithdraw, { escrow_id: deal.escrowId }, { token: deal.payer.accessToken }));
    const second = await seasoned(['disputes']);
    const late = await decide(second, approval.id);
    refused(late, 409);
    expect(late.body).toMatchObject({ code: 'dispute_wrong_state' });
    const [row] = await testDb()<{ status: string }[]>`select status from private.approvals where id = ${approval.id}`;
    expect(row!.status).toBe('pending');
    const [e] = await testDb()<{ status: string }[]>`select status from public.escrows where id = ${deal.escrowId}`;
    expect(e!.status).toBe('funded');
  });

  it('at or below the threshold it acts at once', async () => {
    const op = await newOperator(['disputes']);
    const { disputeId } = await disputed(1_000_000, true);
    const r = ok(
      await post(adminDisputeResolve, {
        dispute_id: disputeId,
        outcome: 'release',
        resolution: 'Delivered as the tracking shows',
      }, { token: op.accessToken }),
    );
    expect(r).toMatchObject({ status: 'resolved', outcome: 'release' });
  });
});
