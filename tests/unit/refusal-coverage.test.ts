// The rule npm test applies after a whole vitest run (scripts/lib/refusal-coverage.ts): every
// refusal an endpoint declares, by code, must have been answered to some test.
import { describe, expect, it } from 'vitest';
import type { EndpointMeta } from '../../shared/core/endpoint.ts';
import { type AnyRefusal, refusal, type RefusalStatus } from '../../shared/core/http.ts';
import { seenRefusals, unseenRefusals } from '../../scripts/lib/refusal-coverage.ts';

const r = (status: RefusalStatus, code: string): AnyRefusal =>
  refusal({ code, status, when: code.replace(/_/g, ' '), then: '', message: () => code, example: {} });
const meta = (name: string, refusals: AnyRefusal[]) => ({ name, refusals }) as unknown as EndpointMeta;

describe('declared refusals against the codes the tests saw', () => {
  it('names each declared refusal no test received, and nothing else', () => {
    const metas = [
      meta('escrow-release', [r(403, 'wrong_party'), r(404, 'no_escrow'), r(409, 'wrong_state')]),
      meta('wallet-get', []),
      meta('auth-send-otp', [r(429, 'rate_limited')]),
    ];
    const seen = seenRefusals(
      'escrow-release 200\nescrow-release 403 wrong_party\nescrow-release 409 wrong_state\nauth-send-otp 429 rate_limited\n',
    );
    expect(unseenRefusals(metas, seen)).toEqual([
      { name: 'escrow-release', status: 404, code: 'no_escrow', when: 'no escrow' },
    ]);
  });

  it('counts a code only for the operation and status that answered it', () => {
    const metas = [meta('escrow-fund', [r(409, 'wrong_state'), r(409, 'insufficient_funds')])];
    expect(unseenRefusals(metas, seenRefusals('escrow-fund 409 wrong_state\n'))).toHaveLength(1);
    expect(unseenRefusals(metas, seenRefusals('escrow-fund 409 wrong_state\nescrow-fund 409 insufficient_funds\n')))
      .toEqual([]);
    expect(unseenRefusals(metas, seenRefusals('escrow-get 409 insufficient_funds\n'))).toHaveLength(2);
  });

  it("covers a refusal of an endpoint that performs another's action when that endpoint declared and answered it", () => {
    const decide = {
      ...meta('admin-approval-decide', [r(409, 'approval_own_action'), r(409, 'charge_not_held'), r(503, 'down')]),
      performsFor: ['admin-charge-resolve'],
    } as unknown as EndpointMeta;
    const resolve = meta('admin-charge-resolve', [r(409, 'charge_not_held')]);
    const seen = seenRefusals(
      'admin-approval-decide 409 approval_own_action\nadmin-charge-resolve 409 charge_not_held\n',
    );
    // 503 down: declared by neither the action's endpoint nor answered anywhere
    expect(unseenRefusals([decide, resolve], seen).map((u) => `${u.name} ${u.code}`)).toEqual([
      'admin-approval-decide down',
    ]);
    // not answered by the action's endpoint either: both are named
    const none = seenRefusals('admin-approval-decide 409 approval_own_action\n');
    expect(unseenRefusals([decide, resolve], none).map((u) => `${u.name} ${u.code}`)).toEqual([
      'admin-approval-decide charge_not_held',
      'admin-approval-decide down',
      'admin-charge-resolve charge_not_held',
    ]);
  });

  it('ignores lines that are not "<operation> <status> <code>"', () => {
    expect([
      ...seenRefusals('escrow-get 404 escrow_not_found\n\n  garbage\nEscrow 404 x\nwallet-get 20 y\nescrow-get 200\n'),
    ])
      .toEqual(['escrow-get 404 escrow_not_found']);
  });
});
