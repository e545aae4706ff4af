// supabase/schema.sql is the catalog of public and private as the migrations leave it
// (scripts/lib/schema.ts, written by `npm run schema`). Here the same rendering is read from the
// test stack's database, migrated by the same files: a migration changed without regenerating the
// file, or the file edited by hand, fails this test.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderSchema, schemaDiff } from '../../scripts/lib/schema.ts';
import { testDb } from '../support/db.ts';

describe('supabase/schema.sql', () => {
  it('is what the migrations define (run `npm run schema` and commit it after changing a migration)', async () => {
    const committed = readFileSync(new URL('../../supabase/schema.sql', import.meta.url), 'utf8');
    // Suites running beside this one may hold a change of their own for a moment (invite-abuse adds
    // a check constraint to public.escrows and drops it again), so a difference is read again a
    // few times before it counts; a stale file differs every time.
    let diff = '';
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        diff = schemaDiff(committed, await renderSchema(testDb()));
      } catch (err) {
        // an object dropped while the catalog was being read
        diff = `reading the catalog failed: ${err instanceof Error ? err.message : String(err)}`;
      }
      if (!diff) break;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    expect(diff, `supabase/schema.sql is stale: run \`npm run schema\` and commit it. What differs:\n${diff}`).toBe('');
  });
});
