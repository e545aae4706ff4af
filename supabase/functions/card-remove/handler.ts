import { endpoint } from '../../../shared/core/endpoint.ts';
import { CARD_NOT_FOUND } from '../../../shared/money/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { cardRemove } from '../../../shared/money/cards.ts';
import { cardIdBody, cardRemovedResponse } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'card-remove',
  summary: "Removes one of the caller's saved cards",
  description: "A signed-in user, for one of their own cards (anyone else's is unknown to them). The card and its " +
    'stored authorization are deleted; when it was the default, the newest remaining card becomes the default.',
  refusals: [CARD_NOT_FOUND],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a repeat finds the card gone (404)',
  body: cardIdBody,
  response: cardRemovedResponse,
  handler: ({ user, body }) => cardRemove(user, body.card_id),
});
