// One name per operation across the layers (docs/architecture.md#one-name-per-operation): the
// function folder `escrow-release` calls the service function `escrowRelease`, exported by a module
// of the area its first word(s) name (shared/escrow/), and takes its request and response schemas
// from that area's schema.ts (or the shapes every area shares, shared/core/schema.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importSpecifiers } from '../../scripts/lib/imports.ts';
import { serviceNameOf } from '../../scripts/lib/spec/operation-map.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const functions = readdirSync(`${root}supabase/functions`)
  .filter((n) => statSync(`${root}supabase/functions/${n}`).isDirectory())
  .sort();

/** The area of each operation, by its first word(s); the first prefix that matches wins. */
const AREAS: readonly [prefix: string, area: string][] = [
  ['account-', 'account'],
  ['admin-dispute-', 'disputes'],
  ['admin-', 'operators'],
  ['auth-', 'auth'],
  ['card-', 'money'],
  ['conversation-', 'conversations'],
  ['dispute-', 'disputes'],
  ['escrow-', 'escrow'],
  ['events-', 'events'],
  ['identity-', 'kyc'],
  ['jobs-', 'jobs'],
  ['kyc-', 'kyc'],
  ['merchant-', 'merchants'],
  ['message-', 'conversations'],
  ['milestone-', 'escrow'],
  ['notification-', 'notifications'],
  ['payout-', 'money'],
  ['profile-public-', 'reviews'],
  ['profile-', 'profile'],
  ['review-', 'reviews'],
  ['transaction-', 'money'],
  ['virtual-account-', 'money'],
  ['wallet-', 'money'],
  ['webhook-delivery-', 'merchants'],
  ['webhook-identity', 'kyc'],
  ['webhook-kyc', 'kyc'],
  ['webhook-payments', 'money'],
];

/** Operations with no service and no area: the openapi function serves the committed document itself. */
const NO_SERVICE = new Set(['openapi']);

const areaOf = (op: string) => AREAS.find(([prefix]) => op.startsWith(prefix))?.[1];

/** What is wrong with a handler's names, given its operation and source text (empty: nothing). */
function problems(op: string, handler: string): string[] {
  if (NO_SERVICE.has(op)) return [];
  const area = areaOf(op);
  if (!area) return [`${op}: no area for this operation; add its prefix to AREAS in this test`];
  const dir = `supabase/functions/${op}`;
  const imports = [...handler.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/g)].map((m) => ({
    names: (m[1] as string).split(',').map((n) => n.trim().replace(/^type\s+/, '')),
    path: posix.normalize(posix.join(dir, m[2] as string)),
  }));
  const out: string[] = [];
  const service = serviceNameOf(op);
  const from = imports.find((i) => i.names.includes(service))?.path;
  if (!from) out.push(`${op}: import its service function ${service} (the operation's name in camelCase)`);
  else if (!from.startsWith(`shared/${area}/`)) out.push(`${op}: ${service} comes from ${from}, not shared/${area}/`);
  if (!new RegExp(`\\b${service}\\(`).test(handler)) out.push(`${op}: the handler does not call ${service}(...)`);
  const schemas = importSpecifiers(handler)
    .map((s) => posix.normalize(posix.join(dir, s)))
    .filter((p) => p.endsWith('/schema.ts'));
  for (const s of schemas) {
    if (s !== `shared/${area}/schema.ts` && s !== 'shared/core/schema.ts') {
      out.push(`${op}: takes schemas from ${s}; its own are in shared/${area}/schema.ts`);
    }
  }
  return out;
}

describe('one name per operation', () => {
  it('every handler calls <operationInCamelCase> from its area and takes its schemas from its area', () => {
    const found = functions.flatMap((op) =>
      problems(op, readFileSync(`${root}supabase/functions/${op}/handler.ts`, 'utf8'))
    );
    expect(found).toEqual([]);
  });

  it('every area named in AREAS is a folder of shared/', () => {
    const missing = [...new Set(AREAS.map(([, a]) => a))].filter((a) => {
      try {
        return !statSync(`${root}shared/${a}`).isDirectory();
      } catch {
        return true;
      }
    });
    expect(missing).toEqual([]);
  });

  it('finds each kind of problem in a sample', () => {
    const good = `import { escrowRelease } from '../../../shared/escrow/escrow.ts';
import { escrowIdBody } from '../../../shared/escrow/schema.ts';
export default endpoint({ handler: ({ user, body }) => escrowRelease(user, body.escrow_id) });`;
    expect(problems('escrow-release', good)).toEqual([]);
    const renamed = good.replaceAll('escrowRelease', 'releaseEscrow');
    expect(problems('escrow-release', renamed)).toEqual([
      "escrow-release: import its service function escrowRelease (the operation's name in camelCase)",
      'escrow-release: the handler does not call escrowRelease(...)',
    ]);
    const elsewhere = good.replace('shared/escrow/escrow.ts', 'shared/money/wallet.ts')
      .replace('shared/escrow/schema.ts', 'shared/money/schema.ts');
    expect(problems('escrow-release', elsewhere)).toEqual([
      'escrow-release: escrowRelease comes from shared/money/wallet.ts, not shared/escrow/',
      'escrow-release: takes schemas from shared/money/schema.ts; its own are in shared/escrow/schema.ts',
    ]);
    expect(problems('ledger-peek', good)).toEqual([
      'ledger-peek: no area for this operation; add its prefix to AREAS in this test',
    ]);
  });
});
