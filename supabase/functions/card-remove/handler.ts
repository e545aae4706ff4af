import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { cardRemove } from '../../../shared/money/cards.ts';
import { cardIdBody, cardRemovedResponse } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'card-remove',
  summary: "Removes one of the caller's saved cards",
  refusals: {
    404: "No saved card of the caller's with this id",
  },
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a repeat finds the card gone (404)',
  body: cardIdBody,
  response: cardRemovedResponse,
  handler: ({ user, body }) => cardRemove(user, body.card_id),
});
