// The handler example of docs/adding-a-function.md compiles: its code lives, byte for byte, in
// tests/docs-examples/escrow-create/handler.ts, which tsc type-checks with everything else (the
// document once showed a call that did not). This test keeps the two the same, and the example
// the same definition as the real escrow-create.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EndpointMeta } from '../../shared/core/endpoint.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The ```ts block of step 3 (the one holding `export default endpoint(`), without its indentation. */
function documentedHandler(markdown: string): string {
  const blocks = [...markdown.matchAll(/^( *)```ts\n([\s\S]*?)^\1```$/gm)];
  const block = blocks.find((b) => (b[2] as string).includes('export default endpoint('));
  if (!block) throw new Error('docs/adding-a-function.md has no ```ts block with export default endpoint(');
  const indent = (block[1] as string).length;
  return (block[2] as string)
    .split('\n')
    .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
    .join('\n');
}

/** The checked copy without its leading comment lines. */
const checkedCopy = () =>
  read('tests/docs-examples/escrow-create/handler.ts')
    .split('\n')
    .filter((line, i, all) => !(line.startsWith('//') && all.slice(0, i).every((l) => l.startsWith('//'))))
    .join('\n');

describe('docs/adding-a-function.md', () => {
  it('shows the code of tests/docs-examples/escrow-create/handler.ts (type-checked by tsc)', () => {
    expect(documentedHandler(read('docs/adding-a-function.md'))).toBe(checkedCopy());
  });

  it('the example is the real escrow-create definition', async () => {
    const meta = async (path: string) => {
      const mod = (await import(new URL(`../../${path}`, import.meta.url).href)) as { default: { meta: EndpointMeta } };
      return mod.default.meta;
    };
    const example = await meta('tests/docs-examples/escrow-create/handler.ts');
    const real = await meta('supabase/functions/escrow-create/handler.ts');
    for (
      const key of [
        'name',
        'summary',
        'description',
        'method',
        'auth',
        'status',
        'idempotent',
        'repeat',
        'query',
        'body',
        'response',
      ] as const
    ) {
      expect(example[key], key).toBe(real[key]);
    }
  });
});
