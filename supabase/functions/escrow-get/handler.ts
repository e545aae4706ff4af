import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { escrowGet } from '../../../shared/escrow/escrow.ts';
import { escrowIdQuery, escrowResponse } from '../../../shared/escrow/schema.ts';
import { ESCROW_NOT_FOUND } from '../../../shared/escrow/refusals.ts';

export default endpoint({
  name: 'escrow-get',
  summary: 'Reads one escrow the caller is a party to',
  description: 'Either party, in any state; to anyone else the escrow does not exist. To the initiator ' +
    '`counterparty_id` stays null until the counterparty accepts or declines. Changes nothing.',
  refusals: [ESCROW_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  query: escrowIdQuery,
  response: escrowResponse,
  handler: ({ user, query }) => escrowGet(user, query.escrow_id),
});
