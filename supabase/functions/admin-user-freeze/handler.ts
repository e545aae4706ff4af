import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminUserFreeze } from '../../../shared/operators/accounts.ts';
import { adminUserActionBody, adminUserFreezeResponse } from '../../../shared/operators/schema.ts';
import { USER_NOT_FOUND } from '../../../shared/reviews/refusals.ts';

export default endpoint({
  name: 'admin-user-freeze',
  summary: "Freezes a user's account: no money leaves it and nothing new starts until it is unfrozen",
  description:
    'Operators with the finance role and a second-factor pass (to anyone else the function does not exist). From ' +
    'the commit on, the account withdraws, funds, creates, releases and adds nothing (403), merchants it owns are ' +
    'frozen with it, and money paid to it stays in its wallet (docs/money.md#frozen-accounts); requests in flight ' +
    'finish first. Freezing a frozen account changes nothing: 200 with `changed: false`, the first freeze and its ' +
    'reason standing; audited as `user.freeze`, undone by admin-user-unfreeze.',
  refusals: [USER_NOT_FOUND],
  method: 'POST',
  auth: operatorMode(['finance']),
  idempotent: true,
  repeat: 'freezes the account (a frozen account stays as it is)',
  body: adminUserActionBody,
  response: adminUserFreezeResponse,
  handler: ({ user, body }) => adminUserFreeze(user, body),
});
