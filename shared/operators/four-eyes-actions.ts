// Every action that may wait for a second operator, by its action name: admin-approval-decide
// performs an approved one through this table. An action is added here when its endpoint is.
import type { FourEyesAction } from './approvals.ts';
import { DISPUTE_RESOLVE } from '../disputes/disputes.ts';
import { USER_UNFREEZE } from './accounts.ts';
import { chargeResolve, payoutRetry } from './money.ts';
import { FACTOR_RESET, ROLE_GRANT } from './roles.ts';

// deno-lint-ignore no-explicit-any
export const FOUR_EYES_ACTIONS: Readonly<Record<string, FourEyesAction<any, any, any>>> = {
  [ROLE_GRANT.action]: ROLE_GRANT,
  [FACTOR_RESET.action]: FACTOR_RESET,
  [chargeResolve.action]: chargeResolve,
  [payoutRetry.action]: payoutRetry,
  [USER_UNFREEZE.action]: USER_UNFREEZE,
  [DISPUTE_RESOLVE.action]: DISPUTE_RESOLVE,
};
