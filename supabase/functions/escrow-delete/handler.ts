import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowDelete } from '../../../shared/escrow/escrow.ts';
import { escrowIdBody, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND, ESCROW_WRONG_PARTY, ESCROW_WRONG_STATE } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-delete',
  summary: "Deletes a draft escrow: it leaves both parties' escrow lists",
  description: 'Only the initiator, and only while the escrow is a `draft` (a cancelled escrow cannot be deleted). ' +
    'It becomes `deleted`: its pending funding transactions are canceled and its milestones cancelled, ' +
    '`escrow-list` shows it only when `status=deleted` is asked for, and its conversation is gone for both ' +
    'parties. No money moves and no one is notified.',
  refusals: [ESCROW_WRONG_PARTY, ESCROW_NOT_FOUND, ESCROW_WRONG_STATE],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a draft holds no money; a repeat is 409',
  body: escrowIdBody,
  response: escrowResponse,
  handler: ({ user, body }) => escrowDelete(user, body.escrow_id),
});
