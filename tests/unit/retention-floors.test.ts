// The retention floors the database enforces (private.retention_floor, read from the newest
// migration that defines it) against shared/compliance/retention.ts: every kind kept under a legal
// obligation has a floor, the floor is its period, and no other kind has one.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RETENTION } from '../../shared/compliance/retention.ts';

const dir = fileURLToPath(new URL('../../supabase/migrations/', import.meta.url));

/** The kinds and the interval of the newest definition of private.retention_floor. */
function floorsInSql(): { kinds: string[]; floor: string } {
  const defining = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .filter((f) => /function private\.retention_floor\(/.test(readFileSync(dir + f, 'utf8')));
  const sql = readFileSync(dir + defining.at(-1)!, 'utf8');
  const start = sql.search(/function private\.retention_floor\(/);
  const open = sql.indexOf('$$', start);
  const body = sql.slice(open + 2, sql.indexOf('$$', open + 2));
  const list = /p_kind in \(([^)]*)\)/.exec(body)![1]!;
  return {
    kinds: [...list.matchAll(/'(\w+)'/g)].map((m) => m[1]!).sort(),
    floor: /then interval '([^']+)'/.exec(body)![1]!,
  };
}

describe('the retention floors in the database', () => {
  const legal = RETENTION.filter((e) => e.basis.includes('legal obligation')).flatMap((e) => e.purges);

  it('has a floor for every kind kept under a legal obligation, and for no other', () => {
    expect(floorsInSql().kinds).toEqual(legal.map((p) => p.kind).sort());
  });

  it("is each such kind's period", () => {
    const { floor } = floorsInSql();
    expect(legal.filter((p) => p.after !== floor)).toEqual([]);
  });
});
