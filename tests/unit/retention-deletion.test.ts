// The retention table's "on account deletion" texts (shared/compliance/retention.ts, generated
// into docs/compliance.md) against what private.account_delete does: the function's body is read
// from the newest migration that defines it, and every table it deletes from or updates must be
// described as such by the entry that lists the table.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RETENTION } from '../../shared/compliance/retention.ts';

const dir = fileURLToPath(new URL('../../supabase/migrations/', import.meta.url));

/** The body of the newest definition of private.account_delete. */
function accountDeleteBody(): string {
  const defining = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .filter((f) => /function private\.account_delete\(/.test(readFileSync(dir + f, 'utf8')));
  const sql = readFileSync(dir + defining.at(-1)!, 'utf8');
  const start = sql.search(/function private\.account_delete\(/);
  const open = sql.indexOf('$$', start);
  return sql.slice(open + 2, sql.indexOf('$$', open + 2));
}

const entryOf = (table: string) => RETENTION.find((e) => e.tables.includes(table));

describe('the retention table on account deletion', () => {
  const body = accountDeleteBody();
  const deleted = [...new Set([...body.matchAll(/delete from ((?:public|private)\.\w+)/g)].map((m) => m[1]!))];
  const updated = [...new Set([...body.matchAll(/update ((?:public|private)\.\w+)/g)].map((m) => m[1]!))];

  it('reads the deletion from the SQL', () => {
    expect(deleted).toContain('private.identity_requests');
    expect(updated).toContain('public.notifications');
  });

  it('names every table the deletion deletes from as deleted (or released)', () => {
    const wrong = deleted.filter((t) => !/deleted|released/.test(entryOf(t)?.deletion ?? ''));
    expect(wrong).toEqual([]);
  });

  it('does not say "rows deleted" of a table whose rows the deletion keeps and rewrites', () => {
    const wrong = updated.filter((t) => /^rows deleted/.test(entryOf(t)?.deletion ?? 'rows deleted'));
    expect(wrong).toEqual([]);
  });

  it("says what the SQL does with the phone, the reviews about the user, the counterparties' notifications and the dedicated account", () => {
    expect(body).toMatch(/p_phone_hash \|\| ':' \|\| p_user::text/);
    expect(entryOf('private.users')?.deletion).toContain('`<keyed hash>:<user id>`');
    expect(body).toMatch(/reviewer_id = p_user or reviewee_id = p_user/);
    expect(entryOf('public.reviews')?.deletion).toMatch(/about the user/);
    expect(body).toMatch(/'"Deleted user"'/);
    expect(entryOf('public.notifications')?.deletion).toMatch(/counterparties' notifications .*`Deleted user`/);
    expect(body).toMatch(/set status = 'inactive', account_name = null/);
    expect(entryOf('public.virtual_accounts')?.deletion).toMatch(
      /dedicated account kept inactive with its name erased/,
    );
  });
});
