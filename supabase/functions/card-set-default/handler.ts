import { endpoint } from '../../../shared/core/endpoint.ts';
import { CARD_NOT_FOUND } from '../../../shared/money/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { cardSetDefault } from '../../../shared/money/cards.ts';
import { cardIdBody, cardResponse } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'card-set-default',
  summary: "Makes one of the caller's saved cards the default",
  description: 'A signed-in user, for one of their own cards; the previous default stops being one. The default is ' +
    'listed first by `card-list`; a charge still names its card with `card_id`.',
  refusals: [CARD_NOT_FOUND],
  method: 'POST',
  auth: userSession,
  idempotent: false,
  repeat: 'a repeat sets the same default again',
  body: cardIdBody,
  response: cardResponse,
  handler: ({ user, body }) => cardSetDefault(user, body.card_id),
});
