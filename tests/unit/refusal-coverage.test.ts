// The rule npm test applies after a whole vitest run (scripts/lib/refusal-coverage.ts): every
// refusal an endpoint declares must have been answered to some test.
import { describe, expect, it } from 'vitest';
import type { EndpointMeta } from '../../shared/core/endpoint.ts';
import { seenStatuses, unseenRefusals } from '../../scripts/lib/refusal-coverage.ts';

const meta = (name: string, refusals: EndpointMeta['refusals']) => ({ name, refusals }) as EndpointMeta;

describe('declared refusals against the statuses the tests saw', () => {
  it('names each declared refusal no test received, and nothing else', () => {
    const metas = [
      meta('escrow-release', { 403: 'wrong party', 404: 'no escrow', 409: 'wrong state' }),
      meta('wallet-get', undefined),
      meta('auth-send-otp', { 429: 'too many codes' }),
    ];
    const seen = seenStatuses('escrow-release 200\nescrow-release 403\nescrow-release 409\nauth-send-otp 429\n');
    expect(unseenRefusals(metas, seen)).toEqual([{ name: 'escrow-release', status: 404, description: 'no escrow' }]);
  });

  it('counts a status only for the operation that answered it', () => {
    const metas = [meta('card-remove', { 404: 'no card' })];
    expect(unseenRefusals(metas, seenStatuses('payout-remove 404\n'))).toHaveLength(1);
    expect(unseenRefusals(metas, seenStatuses('card-remove 404\n'))).toEqual([]);
  });

  it('ignores lines that are not "<operation> <status>"', () => {
    expect([...seenStatuses('escrow-get 200\n\n  garbage\nEscrow 404\nwallet-get 20\n')]).toEqual(['escrow-get 200']);
  });
});
