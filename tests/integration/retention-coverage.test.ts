// Every table of the public and private schemas has a retention decision: it is in
// shared/compliance/retention.ts (what it holds about people, what account deletion does, how long
// it is kept and why), or in that file's list of tables that hold no personal data, with the reason.
// The tables are read from the migrated test database, so a migration that adds a table fails here
// until someone decides. The facts of the file itself are checked too: each purge period is one
// PostgreSQL reads, and what is kept under a legal obligation is purged no sooner than 5 years.
import { describe, expect, it } from 'vitest';
import { NO_PERSONAL_DATA, PURGE_KINDS, purgePeriods, RETENTION } from '../../shared/compliance/retention.ts';
import { testDb } from '../support/db.ts';

describe('the retention table', () => {
  it('decides every table of the public and private schemas', async () => {
    const rows = await testDb()<{ name: string }[]>`
      select n.nspname || '.' || c.relname as name
        from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       where n.nspname in ('public', 'private') and c.relkind in ('r', 'p')
       order by 1`;
    const tables = rows.map((r) => r.name);
    expect(tables.length).toBeGreaterThan(40);
    const decided = new Set([...RETENTION.flatMap((e) => e.tables), ...Object.keys(NO_PERSONAL_DATA)]);
    const undecided = tables.filter((t) => !decided.has(t));
    expect(
      undecided,
      'add each to shared/compliance/retention.ts (RETENTION, or NO_PERSONAL_DATA with a reason)',
    ).toEqual([]);
    const unknown = [...decided].filter((t) => !tables.includes(t));
    expect(unknown, 'retention.ts names tables the database does not have').toEqual([]);
  });

  it('names each table once', () => {
    const all = [...RETENTION.flatMap((e) => e.tables), ...Object.keys(NO_PERSONAL_DATA)];
    expect(all.filter((t, i) => all.indexOf(t) !== i)).toEqual([]);
  });

  it('gives every purge a period PostgreSQL reads, and nothing kept by law goes before 5 years', async () => {
    const periods = purgePeriods();
    expect(Object.keys(periods).sort()).toEqual([...PURGE_KINDS].sort());
    const legal = new Set(
      RETENTION.filter((e) => e.basis.includes('legal obligation')).flatMap((e) => e.purges.map((p) => p.kind)),
    );
    for (const [kind, after] of Object.entries(periods)) {
      const [r] = await testDb()<{ ok: boolean; five: boolean }[]>`
        select ${after}::interval > interval '0' as ok, ${after}::interval >= interval '5 years' as five`;
      expect(r!.ok, `${kind}: ${after}`).toBe(true);
      if (legal.has(kind as typeof PURGE_KINDS[number])) expect(r!.five, `${kind} is kept by law: ${after}`).toBe(true);
    }
  });

  it('says for every store what it holds, what deletion does and why', () => {
    for (const e of RETENTION) {
      expect(e.personal.length, e.store).toBeGreaterThan(0);
      expect(e.deletion.length, e.store).toBeGreaterThan(0);
      expect(e.basis.length, e.store).toBeGreaterThan(0);
      expect(e.why.length, e.store).toBeGreaterThan(0);
      expect(e.purges.length > 0 || !!e.kept, `${e.store}: a purge, or how long it is kept`).toBe(true);
    }
  });
});
