// The operator auth modes (docs/operators.md): a user session whose user holds an operator role
// now (private.operators). Anyone else, with or without a token, gets the 404 of a function that
// does not exist, before the method, the body or the query is looked at. An operator whose session
// (and refresh-token lineage) holds no live second-factor pass gets 401 second_factor_required,
// except on the two endpoints that give the pass (operatorSignedIn). One statement per request
// (private.operator_gate): the roles, the pass and whether the session is live.
import { asService } from '../core/db.ts';
import type { AuthMode } from '../core/endpoint.ts';
import { HttpError } from '../core/http.ts';
import { type AuthUser, bearerUser } from '../auth/session.ts';
import { OPERATOR_ROLE_REQUIRED, SECOND_FACTOR_REQUIRED } from './refusals.ts';

import type { OperatorRole } from './enums.ts';
export { OPERATOR_ROLES, type OperatorRole } from './enums.ts';

/** The caller of an operator endpoint: the user session and the roles held now. */
export interface OperatorCaller extends AuthUser {
  roles: OperatorRole[];
}

/**
 * The operator of the request, or null for anyone who is not one now (no token, a bad or expired
 * one, an ended session, no role). With `pass`, an operator without a live pass for this session
 * and lineage is refused 401 second_factor_required; with `roles`, one holding none of them 403
 * operator_role_required (after the pass). A database failure is thrown (a 500), never taken for
 * "not an operator".
 */
export async function operatorCaller(
  req: Request,
  opts: { pass: boolean; roles?: readonly OperatorRole[] },
): Promise<OperatorCaller | null> {
  let user: AuthUser;
  try {
    user = await bearerUser(req);
  } catch (err) {
    if (err instanceof HttpError && err.status === 401) return null;
    throw err;
  }
  const [gate] = await asService((tx) =>
    tx<{ roles: OperatorRole[]; passed: boolean; live: boolean }[]>`
      select roles, passed, live from private.operator_gate(${user.id}, ${user.sessionId}, ${user.lineage})`
  );
  if (!gate || !gate.live || gate.roles.length === 0) return null;
  if (opts.pass && !gate.passed) throw SECOND_FACTOR_REQUIRED.error({});
  if (opts.roles && !opts.roles.some((r) => gate.roles.includes(r))) {
    throw OPERATOR_ROLE_REQUIRED.error({ roles: [...opts.roles] });
  }
  return { ...user, roles: gate.roles };
}

/**
 * auth 'operator': an operator with a live second-factor pass in this session, holding one of
 * `roles` when given (else any role).
 */
export function operatorMode(roles?: readonly OperatorRole[]): AuthMode<OperatorCaller> {
  return {
    name: 'operator',
    hidden: true,
    refusals: roles ? [SECOND_FACTOR_REQUIRED, OPERATOR_ROLE_REQUIRED] : [SECOND_FACTOR_REQUIRED],
    roles,
    identify: (req) => operatorCaller(req, { pass: true, roles }),
  };
}

/** auth 'operator': any operator with a live pass. */
export const operatorSession: AuthMode<OperatorCaller> = operatorMode();

/** auth 'operator_signed_in': an operator, pass or not (admin-totp-enrol and admin-totp-verify only). */
export const operatorSignedIn: AuthMode<OperatorCaller> = {
  name: 'operator_signed_in',
  hidden: true,
  identify: (req) => operatorCaller(req, { pass: false }),
};
