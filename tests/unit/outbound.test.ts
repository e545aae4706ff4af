// Every call to another service goes through shared/core/outbound.ts providerFetch, which makes sure a
// bearer request's session is live first (docs/performance.md): a bare fetch( anywhere else in
// shared/ would let an ended session cost a provider call, a charge or an SMS.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const shared = fileURLToPath(new URL('../../shared/', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('providerFetch', () => {
  it('is the only fetch in shared/', () => {
    const bare = files(shared)
      .filter((f) => !f.endsWith('outbound.ts'))
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .map((line, i) => ({ f, line: i + 1, text: line }))
          .filter(({ text }) => /(^|[^.\w])fetch\(/.test(text) && !/^\s*(\/\/|\*)/.test(text))
          .map(({ f, line }) => `${f.slice(shared.length)}:${line}`)
      );
    expect(bare).toEqual([]);
    // and the adapters do use it
    const users = files(shared).filter((f) => readFileSync(f, 'utf8').includes('providerFetch('));
    expect(users.length).toBeGreaterThanOrEqual(6);
  });
});
