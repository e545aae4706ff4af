// The catalog of refusals: every code the service answers, each declared once, by core (what any
// endpoint answers) or by the area whose rule it is (shared/<area>/refusals.ts). Nothing here
// decides anything: endpoints declare the refusals they answer (`refusals` of endpoint({...})),
// and this list is what docs/errors.md and the document's code lists are made from
// (`npm run gen`); tests/unit/refusal-catalog.test.ts checks that every code is unique.
import type { AnyRefusal } from '../core/http.ts';
import { CORE_REFUSALS } from '../core/refusals.ts';
import * as auth from '../auth/refusals.ts';
import * as profile from '../profile/refusals.ts';
import * as escrow from '../escrow/refusals.ts';
import * as disputes from '../disputes/refusals.ts';
import * as conversations from '../conversations/refusals.ts';
import * as reviews from '../reviews/refusals.ts';
import * as notifications from '../notifications/refusals.ts';
import * as money from '../money/refusals.ts';
import * as kyc from '../kyc/refusals.ts';
import * as jobs from '../jobs/refusals.ts';
import * as merchants from '../merchants/refusals.ts';
import * as operators from '../operators/refusals.ts';
import * as freezes from '../freezes/refusals.ts';
import * as account from '../account/refusals.ts';

const isRefusal = (v: unknown): v is AnyRefusal =>
  typeof v === 'object' && v !== null && 'code' in v && 'status' in v && 'error' in v;

/** Each area's refusals, in the order a user meets the areas. */
export const AREA_REFUSALS: Readonly<Record<string, readonly AnyRefusal[]>> = Object.fromEntries(
  Object.entries({
    auth,
    profile,
    escrow,
    disputes,
    conversations,
    reviews,
    notifications,
    money,
    kyc,
    freezes,
    merchants,
    operators,
    account,
    jobs,
  })
    .map(([area, mod]) => [area, Object.values(mod as Record<string, unknown>).filter(isRefusal)]),
);

/** Every refusal: core's first, then the areas'. */
export const CATALOG: readonly AnyRefusal[] = [...CORE_REFUSALS, ...Object.values(AREA_REFUSALS).flat()];
