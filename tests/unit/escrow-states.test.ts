import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderStatesDoc } from '../../scripts/lib/spec/escrow-states.ts';

describe('docs/escrow-states.md', () => {
  it('is the table in scripts/lib/spec/escrow-states.ts, rendered (run `npm run docs:states` after changing it)', () => {
    const committed = readFileSync(new URL('../../docs/escrow-states.md', import.meta.url), 'utf8');
    expect(committed).toBe(renderStatesDoc());
  });
});
