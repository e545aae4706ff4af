// Operators (docs/operators.md): the grant script, the operator auth mode and the second factor,
// through the real server with codes computed from the enrolment's secret.
import { describe, expect, it } from 'vitest';
import { expectError as refused, expectOk as ok, get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import {
  bindIdentity,
  codeAt,
  enrol,
  grantRoles,
  newOperator,
  operatorScript,
  verifyCode,
} from '../support/operators.ts';
import { signUp } from '../support/users.ts';

const auditOf = (userId: string) =>
  testDb()<{ action: string; details: Record<string, unknown> }[]>`
    select action, details from private.admin_audit where admin_id = ${userId} order by id`;

describe('npm run operator:grant / operator:revoke', () => {
  it('refuses an account below tier 3 or without its NIN and BVN bound; grants, idempotently; revokes', async () => {
    const low = await signUp({ tier: 2 });
    let run = await operatorScript('grant', [low.phone, 'admin']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('KYC tier 2');
    const unbound = await signUp({ tier: 3 });
    await bindIdentity(unbound.id, ['nin']);
    run = await operatorScript('grant', [`0${unbound.phone.slice(4)}`, 'admin']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no bvn bound');
    await bindIdentity(unbound.id, ['bvn']);
    run = await operatorScript('grant', [unbound.phone, 'admin']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`done: ${unbound.phone} now holds the admin role`);
    run = await operatorScript('grant', [unbound.phone, 'admin']);
    expect(run.stdout).toContain('already held the admin role; nothing changed');
    run = await operatorScript('revoke', [unbound.phone, 'admin']);
    expect(run.code, run.stderr).toBe(0);
    expect((await auditOf(unbound.id)).map((r) => [r.action, r.details.role])).toEqual([
      ['operator.grant', 'admin'],
      ['operator.revoke', 'admin'],
    ]);
    const [n] = await testDb()<
      { n: number }[]
    >`select count(*)::int as n from private.operators where user_id = ${unbound.id}`;
    expect(n?.n).toBe(0);
  });

  it('usage: a malformed phone or an unknown role exits 2', async () => {
    expect((await operatorScript('grant', ['12345', 'admin'])).code).toBe(2);
    expect((await operatorScript('grant', ['+2348031234567', 'root'])).code).toBe(2);
    expect((await operatorScript('grant', ['+2348031234567'])).code).toBe(2);
  });
});

describe('the operator auth mode', () => {
  it('a non-operator gets 404 whatever the body; an operator without a pass 401 second_factor_required', async () => {
    const plain = await signUp({ tier: 3 });
    for (const body of [{ nonsense: true }, { dispute_id: 'x' }, 'not json']) {
      const res = await post('admin-dispute-resolve', body, { token: plain.accessToken });
      refused(res, 404);
      expect(res.body.error).toBe('No function named admin-dispute-resolve');
      refused(await post('admin-totp-verify', body, { token: plain.accessToken }), 404);
    }
    refused(await post('admin-totp-enrol', undefined, { token: plain.accessToken }), 404);
    const op = await signUp({ tier: 3 });
    await grantRoles(op, ['disputes']);
    const res = await post('admin-dispute-resolve', { nonsense: true }, { token: op.accessToken });
    refused(res, 401);
    expect(res.body.code).toBe('second_factor_required');
  });

  it('an operator without the role the endpoint needs gets 403 operator_role_required', async () => {
    const op = await newOperator(['support']);
    const res = await post('admin-dispute-resolve', { nonsense: true }, { token: op.accessToken });
    refused(res, 403);
    expect(res.body.code).toBe('operator_role_required');
  });
});

describe('admin-totp-enrol', () => {
  it('answers the secret once as an otpauth URI and an SVG QR code; active after the first verify', async () => {
    const op = await signUp({ tier: 3 });
    await grantRoles(op, ['disputes']);
    const res = await post('admin-totp-enrol', undefined, {
      token: op.accessToken,
      headers: { 'Idempotency-Key': 'k1' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.otpauth_uri).toMatch(
      /^otpauth:\/\/totp\/Escrow:%2B234\d{10}\?secret=[A-Z2-7]{32}&issuer=Escrow&algorithm=SHA1&digits=6&period=30$/,
    );
    expect(res.body.data.qr_svg).toMatch(/^<svg[\s\S]*<\/svg>$/);
    const [stored] = await testDb()<{ secret_enc: string }[]>`
      select secret_enc from private.operator_factors where user_id = ${op.id}`;
    expect(stored?.secret_enc).toMatch(/^v1:/);
    expect(stored?.secret_enc).not.toContain(new URL(res.body.data.otpauth_uri).searchParams.get('secret'));
    // the same Idempotency-Key is not answered from storage: a new secret replaces the pending one
    const again = await post('admin-totp-enrol', undefined, {
      token: op.accessToken,
      headers: { 'Idempotency-Key': 'k1' },
    });
    expect(again.body.data.otpauth_uri).not.toBe(res.body.data.otpauth_uri);
    const secret = await enrol(op.accessToken);
    expect((await verifyCode(op.accessToken, secret)).status).toBe(200);
    const closed = await post('admin-totp-enrol', undefined, { token: op.accessToken });
    refused(closed, 409);
    expect(closed.body.code).toBe('totp_already_active');
  });

  it('closes 24 hours after the grant; a factor reset opens it again', async () => {
    const op = await signUp({ tier: 3 });
    await grantRoles(op, ['finance']);
    await testDb()`update private.operators set granted_at = now() - interval '25 hours' where user_id = ${op.id}`;
    const res = await post('admin-totp-enrol', undefined, { token: op.accessToken });
    refused(res, 409);
    expect(res.body.code).toBe('totp_enrolment_closed');
    await testDb()`select private.operator_factor_reset(${op.id})`;
    expect((await post('admin-totp-enrol', undefined, { token: op.accessToken })).status).toBe(200);
  });
});

describe('admin-totp-verify', () => {
  it('an operator with no factor is told to enrol first (409 totp_not_enrolled), and a code passes nothing', async () => {
    const fresh = await signUp({ tier: 3 });
    await grantRoles(fresh, ['support']);
    const res = await post('admin-totp-verify', { code: '123456' }, { token: fresh.accessToken });
    refused(res, 409);
    expect(res.body.code).toBe('totp_not_enrolled');
    // still no pass: the operator endpoints answer 401 second_factor_required
    const noPass = await get('admin-queue-list', { token: fresh.accessToken });
    expect([noPass.status, noPass.body.code]).toEqual([401, 'second_factor_required']);
  });

  it("answers the operator's roles with the pass, as they are when it passes", async () => {
    const op = await signUp({ tier: 3 });
    await grantRoles(op, ['support', 'finance']);
    const secret = await enrol(op.accessToken);
    const first = ok(await verifyCode(op.accessToken, secret, 0));
    expect(first).toEqual({ passed: true, expires_at: expect.any(String), roles: ['finance', 'support'] });
    await testDb()`delete from private.operators where user_id = ${op.id} and role = 'finance'`;
    expect(ok(await verifyCode(op.accessToken, secret, 1)).roles).toEqual(['support']);
  });

  it('one step of drift either way; two steps refused; a code is never reused', async () => {
    const op = await newOperator(['disputes']); // passed with the code of step now
    const token = op.accessToken;
    const reuse = await verifyCode(token, op.secret, 0);
    refused(reuse, 409);
    expect(reuse.body.code).toBe('totp_invalid');
    refused(await verifyCode(token, op.secret, 2), 409);
    refused(await verifyCode(token, op.secret, -1), 409); // before the last accepted step
    expect((await verifyCode(token, op.secret, 1)).status).toBe(200);
    // a fresh operator: the step before now passes
    const other = await signUp({ tier: 3 });
    await grantRoles(other, ['support']);
    const s = await enrol(other.accessToken);
    expect((await verifyCode(other.accessToken, s, -1)).status).toBe(200);
    refused(await verifyCode(other.accessToken, s, -2), 409);
  });

  it('five wrong codes lock the factor for 15 minutes, even for the right code; after them it passes', async () => {
    const op = await signUp({ tier: 3 });
    await grantRoles(op, ['support']);
    const secret = await enrol(op.accessToken);
    const good = await codeAt(secret);
    const wrong = good === '000000' ? '111111' : '000000';
    for (let i = 0; i < 4; i++) {
      refused(await post('admin-totp-verify', { code: wrong }, { token: op.accessToken }), 409);
    }
    const fifth = await post('admin-totp-verify', { code: wrong }, { token: op.accessToken });
    refused(fifth, 429);
    expect(fifth.body.code).toBe('totp_locked');
    expect(fifth.headers.get('retry-after')).toBe('900');
    const locked = await post('admin-totp-verify', { code: good }, { token: op.accessToken });
    refused(locked, 429);
    // 15 minutes later (the lock moved back by 15 minutes, as the clock would move it)
    await testDb()`update private.operator_factors set locked_until = locked_until - interval '15 minutes'
                   where user_id = ${op.id}`;
    expect((await post('admin-totp-verify', { code: good }, { token: op.accessToken })).status).toBe(200);
  });

  it('the lock at the SQL level with explicit times: locked until 15 minutes after the fifth failure', async () => {
    const op = await signUp({ tier: 3 });
    await grantRoles(op, ['support']);
    await enrol(op.accessToken);
    const [{ session_id: session } = { session_id: '' }] = await testDb()<{ session_id: string }[]>`
      select id as session_id from private.sessions where user_id = ${op.id} limit 1`;
    const t0 = new Date('2030-01-01T00:00:00Z');
    const at = (s: number) => new Date(t0.getTime() + s * 1000);
    for (let i = 0; i < 5; i++) {
      await testDb()`select * from private.operator_totp_try(${op.id}, ${session}, ${session}, null, 43200, ${at(i)})`;
    }
    const [during] = await testDb()<{ outcome: string; wait: number }[]>`
      select outcome, wait from private.operator_totp_try(${op.id}, ${session}, ${session}, 999999999, 43200, ${
      at(
        4 + 899,
      )
    })`;
    expect(during).toEqual({ outcome: 'locked', wait: 1 });
    const [after] = await testDb()<{ outcome: string }[]>`
      select outcome from private.operator_totp_try(${op.id}, ${session}, ${session}, 999999999, 43200, ${
      at(
        4 + 900,
      )
    })`;
    expect(after?.outcome).toBe('ok');
  });

  it("a pass is the session's own: not another session's, nor a sibling's from refresh reuse", async () => {
    const op = await newOperator(['disputes']);
    const list = (token: string) => get('admin-dispute-list', { token });
    expect((await list(op.accessToken)).status).toBe(200);
    // a normal refresh keeps the pass (the same line of tokens)
    const r1 = await post('auth-refresh', { refresh_token: op.refreshToken });
    expect(r1.status).toBe(200);
    expect((await list(r1.body.data.session.access_token)).status).toBe(200);
    // the old token presented again inside the grace window: a sibling, which has no pass
    const sibling = await post('auth-refresh', { refresh_token: op.refreshToken });
    expect(sibling.status).toBe(200);
    const res = await list(sibling.body.data.session.access_token);
    refused(res, 401);
    expect(res.body.code).toBe('second_factor_required');
    // and the pass has not ended for the line that made it
    expect((await list(r1.body.data.session.access_token)).status).toBe(200);
  });
});
