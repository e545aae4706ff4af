// admin-role-revoke never takes the last admin's role, through the real server: with every other
// admin row of private.operators set aside, the one admin left giving up their own admin role is
// refused 409 last_admin, and keeps it. A clock suite not for the job but for the database to
// itself: the suites that run in parallel grant admins all the time, so only here can the
// database hold exactly one. The rows set aside are put back exactly (granted_at, granted_by) in
// a finally block, before the next clock suite starts.
import { describe, expect, it } from 'vitest';
import { expectError as refused, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { newOperator } from '../support/operators.ts';
import adminRoleRevoke from '../../supabase/functions/admin-role-revoke/handler.ts';

interface AdminRow {
  user_id: string;
  granted_at: string;
  granted_by: string;
}

/** Every admin row but `keep`'s, granted_at as text (microseconds and offset kept). */
const otherAdmins = (keep: string) =>
  testDb()<AdminRow[]>`
    select user_id::text as user_id, granted_at::text as granted_at, granted_by from private.operators
     where role = 'admin' and user_id <> ${keep} order by user_id`;

describe('admin-role-revoke', () => {
  it('the only admin cannot give up the admin role: 409 last_admin; the role, the audit and the other admins stay', async () => {
    const [a, b] = await Promise.all([newOperator(['admin']), newOperator(['admin'])]);
    // another admin at least, granted at a moment with microseconds, to be put back exactly
    await testDb()`update private.operators set granted_at = now() - interval '3 days 0.123456 seconds'
                    where user_id = ${b.id} and role = 'admin'`;
    const aside = await otherAdmins(a.id);
    expect(aside.map((r) => r.user_id)).toContain(b.id);
    try {
      await testDb()`delete from private.operators where role = 'admin' and user_id <> ${a.id}`;
      const [left] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from private.operators where role = 'admin'`;
      expect(left?.n).toBe(1);

      refused(
        await post(adminRoleRevoke, { user_id: a.id, role: 'admin', reason: 'Leaving the service today' }, {
          token: a.accessToken,
        }),
        409,
        'last_admin',
      );
      const roles = await testDb()<{ role: string }[]>`select role from private.operators where user_id = ${a.id}`;
      expect(roles.map((r) => r.role)).toEqual(['admin']);
      expect(
        await testDb()`select 1 from private.admin_audit where action = 'role.revoke' and target_id = ${a.id}`,
      ).toHaveLength(0);
    } finally {
      if (aside.length > 0) {
        await testDb()`
          insert into private.operators (user_id, role, granted_at, granted_by)
          select r.user_id::uuid, 'admin', r.granted_at::timestamptz, r.granted_by
            from jsonb_to_recordset(${testDb().json(aside as never)}::jsonb)
                 as r(user_id text, granted_at text, granted_by text)
          on conflict (user_id, role) do nothing`;
      }
    }
    expect(await otherAdmins(a.id)).toEqual(aside);
  });
});
