// Identity numbers bound to their holder (docs/kyc.md#identity-numbers-bound-to-their-holder),
// through the real server and the KYC fake: a NIN or BVN result passes only with the profile's
// names; a number that passed verifies one account only (a second account is refused 409
// identity_in_use and flagged for an operator, and of two at once only one passes); a number bound
// to a deleted account holds the new check pending for an operator.
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type BodyOf, expectOk, get, patch, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { kycFake } from '../support/kyc-fake.ts';
import { signUp, type TestUser } from '../support/users.ts';
import identityVerify from '../../supabase/functions/identity-verify/handler.ts';
import kycStatus from '../../supabase/functions/kyc-status/handler.ts';
import profileUpdate from '../../supabase/functions/profile-update/handler.ts';

type IdType = BodyOf<typeof identityVerify>['type'];
type Names = { firstName?: string; middleName?: string; lastName?: string } | null;

/** A random 11-digit number not ending in 0 (the sandbox's not-found): one no other test uses. */
const eleven = () => `${String(randomInt(1, 10_000_000_000)).padStart(10, '0')}${randomInt(1, 10)}`;
const status = async (u: TestUser) => expectOk(await get(kycStatus, { token: u.accessToken }));
const checkOf = async (u: TestUser, type: string) =>
  ((await status(u)).checks as { type: string }[]).find((c) => c.type === type) as Record<string, unknown>;
const ask = (u: TestUser, type: IdType, id_number: string) =>
  post(identityVerify, { type, id_number }, {
    token: u.accessToken,
  });

/** identity-verify, then the provider's result (names: as the fake's default, the request's own). */
async function verify(u: TestUser, type: IdType, id: string, names?: Names, result = 'found') {
  const r = expectOk(await ask(u, type, id), 201);
  const d = await kycFake.identityResult({ reference: r.reference, status: result, names });
  expect(d.responses.map((x) => x.status)).toEqual([200]);
  return r.reference as string;
}

const flagsOf = (u: TestUser) =>
  testDb()<{ kind: string; details: Record<string, unknown>; resolved_at: string | null }[]>`
    select kind, details, resolved_at from private.operator_flags where user_id = ${u.id} order by created_at`;
const bindingOf = async (type: string, reference: string) =>
  (await testDb()<{ user_id: string | null }[]>`
    select b.user_id from private.identity_bindings b
      join private.identity_requests r on r.check_type = b.kind and r.id_hash = b.id_hash
     where r.reference = ${reference} and b.kind = ${type}`)[0];

describe('identity-verify', () => {
  it("the attacker's story: a NIN and a BVN that passed on one account are refused on another (409 identity_in_use), flagged, revealing nothing of the first", async () => {
    const victim = await signUp({ tier: 2, first_name: 'Chidi', last_name: 'Okafor' });
    const attacker = await signUp({ tier: 2, first_name: 'Emeka', last_name: 'Nwosu' });
    const nin = eleven();
    const bvn = eleven();
    await verify(victim, 'nin', nin);
    await verify(victim, 'bvn', bvn);
    expect((await status(victim)).tier).toBe(3);
    const asked = (await kycFake.requests('/identity/verifications')).length;

    for (const [type, id, word] of [['nin', nin, 'NIN'], ['bvn', bvn, 'BVN']] as const) {
      const r = await ask(attacker, type, id);
      expect(r.status, JSON.stringify(r.body)).toBe(409);
      expect(r.body).toEqual({
        success: false,
        status: 409,
        code: 'identity_in_use',
        error: `This ${word} cannot verify this account: it is already verified on another one. If it is yours, ` +
          'contact support',
        details: [{
          field: 'id_number',
          message: `this ${word} already verifies another account`,
          code: 'identity_in_use',
        }],
      });
      // nothing of the other account: not its id, phone or names
      for (const secret of [victim.id, victim.phone, 'Chidi', 'Okafor', id]) {
        expect(JSON.stringify(r.body)).not.toContain(secret);
      }
    }
    // nothing was asked of the provider, nothing is pending, the tier stays
    expect((await kycFake.requests('/identity/verifications')).length).toBe(asked);
    const s = await status(attacker);
    expect(s.tier).toBe(2);
    expect(s.checks.filter((c: { type: string }) => c.type === 'nin' || c.type === 'bvn')).toEqual([]);
    // an operator is told, with the account the number is bound to, never the number
    const flags = await flagsOf(attacker);
    expect(flags.map((f) => [f.kind, f.details.check, f.details.bound_to, f.details.found, f.resolved_at])).toEqual([
      ['identity_in_use', 'nin', victim.id, 'request', null],
      ['identity_in_use', 'bvn', victim.id, 'request', null],
    ]);
    expect(JSON.stringify(flags)).not.toContain(nin);
    expect(JSON.stringify(flags)).not.toContain(bvn);

    // each refusal counts toward the day's limit: numbers cannot be tested without end
    expect((await ask(attacker, 'nin', nin)).status).toBe(409);
    expect((await ask(attacker, 'nin', nin)).status).toBe(409);
    const fourth = await ask(attacker, 'nin', eleven());
    expect(fourth.status).toBe(429);
    expect(fourth.body.code).toBe('rate_limited');
  });

  it('the holder may use their own bound number again only as the rules for a passed check say (409 kyc_check_passed)', async () => {
    const u = await signUp({ tier: 2, first_name: 'Ngozi', last_name: 'Eze' });
    const nin = eleven();
    await verify(u, 'nin', nin);
    const again = await ask(u, 'nin', nin);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('kyc_check_passed');
    expect(await flagsOf(u)).toEqual([]);
  });

  it('operator flags and bindings are private: row-level security on, no client role may read them', async () => {
    const rows = await testDb()<{ t: string; rls: boolean; anon: boolean; auth: boolean }[]>`
      select c.relname as t, c.relrowsecurity as rls,
             has_table_privilege('anon', c.oid, 'select') as anon,
             has_table_privilege('authenticated', c.oid, 'select') as auth
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'private' and c.relname in ('operator_flags', 'identity_bindings') order by 1`;
    expect(rows).toEqual([
      { t: 'identity_bindings', rls: true, anon: false, auth: false },
      { t: 'operator_flags', rls: true, anon: false, auth: false },
    ]);
  });
});

describe('webhook-identity', () => {
  it('a NIN found under other names fails with NAME_MISMATCH: the tier does not rise and the number is not bound', async () => {
    const u = await signUp({ tier: 2, first_name: 'Chidi', last_name: 'Okafor' });
    const nin = eleven();
    const ref = await verify(u, 'nin', nin, { firstName: 'EMEKA', lastName: 'OKAFOR' });
    expect(await checkOf(u, 'nin')).toMatchObject({
      status: 'failed',
      reject_labels: ['NAME_MISMATCH'],
      can_retry: true,
    });
    await verify(u, 'bvn', eleven());
    expect((await status(u)).tier).toBe(2);
    expect(await bindingOf('nin', ref)).toBeUndefined();
    const [inbox] = await testDb()<{ outcome: string; payload: Record<string, unknown> }[]>`
      select outcome, payload from private.kyc_webhook_inbox where key like ${`identity:${ref}:%`}`;
    expect(inbox?.outcome).toBe('nin:name_mismatch');
    // the names returned are compared, never kept
    expect(inbox?.payload.namesMatch).toBe(false);
    expect(JSON.stringify(inbox?.payload)).not.toContain('EMEKA');
    // no names at all cannot bind the number either
    await verify(u, 'nin', nin, null);
    expect(await checkOf(u, 'nin')).toMatchObject({ status: 'failed', reject_labels: ['NAME_MISMATCH'] });
    // the holder's names, in the registry's order with a middle name, pass: tier 3
    await verify(u, 'nin', nin, { firstName: 'OKAFOR', middleName: 'EMEKA', lastName: 'CHIDI' });
    expect(await checkOf(u, 'nin')).toMatchObject({ status: 'passed' });
    expect((await status(u)).tier).toBe(3);
  });

  it('accents, tone marks and case: the profile "Adébáyọ̀ Ògúnlesí" is the registry\'s "ADEBAYO OGUNLESI"', async () => {
    const u = await signUp({ tier: 2, first_name: 'Adébáyọ̀', last_name: 'Ògúnlesí' });
    await verify(u, 'bvn', eleven(), { firstName: 'ADEBAYO', lastName: 'OGUNLESI' });
    expect(await checkOf(u, 'bvn')).toMatchObject({ status: 'passed' });
    // the business checks do not compare names
    await verify(u, 'cac', 'RC1234567', null);
    expect(await checkOf(u, 'cac')).toMatchObject({ status: 'passed' });
  });

  it('two accounts submitting one NIN at once: only one passes, the other fails IDENTITY_IN_USE and is flagged', async () => {
    for (let round = 0; round < 5; round++) {
      // the attacker copied the holder's names too: only the binding tells them apart
      const a = await signUp({ tier: 2, first_name: 'Chidi', last_name: 'Okafor' });
      const b = await signUp({ tier: 2, first_name: 'Chidi', last_name: 'Okafor' });
      const nin = eleven();
      const [ra, rb] = await Promise.all([ask(a, 'nin', nin), ask(b, 'nin', nin)]);
      expect([ra.status, rb.status]).toEqual([201, 201]);
      const results = await Promise.all([
        kycFake.identityResult({ reference: ra.body.data.reference }),
        kycFake.identityResult({ reference: rb.body.data.reference }),
      ]);
      expect(results.map((d) => d.responses[0]?.status)).toEqual([200, 200]);
      const checks = [await checkOf(a, 'nin'), await checkOf(b, 'nin')];
      const passed = checks.filter((c) => c.status === 'passed');
      expect(passed, JSON.stringify(checks)).toHaveLength(1);
      const loser = checks[0]?.status === 'passed' ? b : a;
      const winner = loser === a ? b : a;
      expect(checks.find((c) => c.status !== 'passed')).toMatchObject({
        status: 'failed',
        reject_labels: ['IDENTITY_IN_USE'],
      });
      const flags = await flagsOf(loser);
      expect(flags).toHaveLength(1);
      expect(flags[0]).toMatchObject({ kind: 'identity_in_use', details: { check: 'nin', found: 'result' } });
      expect(flags[0]?.details.bound_to).toBe(winner.id);
      expect(await bindingOf('nin', (loser === a ? ra : rb).body.data.reference)).toEqual({ user_id: winner.id });
    }
  });

  it('a number bound to a deleted account: the binding stays with no holder, and a new check of it is held pending for an operator, never passed', async () => {
    const gone = await signUp({ tier: 2, first_name: 'Tunde', last_name: 'Bakare' });
    const nin = eleven();
    const first = await verify(gone, 'nin', nin);
    await testDb()`delete from private.users where id = ${gone.id}`;
    expect(await bindingOf('nin', first)).toBeUndefined(); // the request went with the account
    const [kept] = await testDb()<{ n: number; holders: number }[]>`
      select count(*)::int as n, count(user_id)::int as holders from private.identity_bindings where reference = ${first}`;
    expect(kept).toEqual({ n: 1, holders: 0 });

    const next = await signUp({ tier: 2, first_name: 'Tunde', last_name: 'Bakare' });
    const ref = await verify(next, 'nin', nin);
    expect(await checkOf(next, 'nin')).toMatchObject({ status: 'pending' });
    expect((await status(next)).tier).toBe(2);
    const [req] = await testDb()<{ status: string }[]>`
      select status from private.identity_requests where reference = ${ref}`;
    expect(req?.status).toBe('held');
    expect((await flagsOf(next)).map((f) => [f.kind, f.details.check, f.details.reference])).toEqual([
      ['identity_holder_erased', 'nin', ref],
    ]);
    // a redelivery or a second result releases nothing
    await kycFake.identityResult({ reference: ref, status: 'found', times: 2 });
    await kycFake.identityResult({ reference: ref, status: 'FOUND' });
    expect(await checkOf(next, 'nin')).toMatchObject({ status: 'pending' });
    expect((await status(next)).tier).toBe(2);
    expect(await flagsOf(next)).toHaveLength(1);
  });
});

describe('profile-update', () => {
  it('the names a NIN or BVN check matched no longer change; the other fields still do', async () => {
    const u = await signUp({ tier: 2, first_name: 'Chidi', last_name: 'Okafor' });
    await verify(u, 'nin', eleven());
    const renamed = await patch(profileUpdate, { first_name: 'Aliko', last_name: 'Dangote' }, { token: u.accessToken });
    expect([renamed.status, renamed.body.code]).toEqual([409, 'name_verified']);
    expect(renamed.body.details?.[0]?.field).toBe('first_name');
    const last = await patch(profileUpdate, { last_name: 'Dangote' }, { token: u.accessToken });
    expect([last.status, last.body.details?.[0]?.field]).toEqual([409, 'last_name']);
    // the same names again, and other fields, change nothing that was matched
    expectOk(await patch(profileUpdate, { first_name: 'Chidi', bio: 'Phones and laptops' }, { token: u.accessToken }));
    const [row] = await testDb()<{ first_name: string; last_name: string }[]>`
      select first_name, last_name from public.profiles where id = ${u.id}`;
    expect(row).toEqual({ first_name: 'Chidi', last_name: 'Okafor' });
  });

  it('before any identity check, names change as before', async () => {
    const u = await signUp({ tier: 2, first_name: 'Chidi', last_name: 'Okafor' });
    expectOk(await patch(profileUpdate, { first_name: 'Emeka' }, { token: u.accessToken }));
  });
});
