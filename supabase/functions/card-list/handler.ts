import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { cardList } from '../../../shared/money/cards.ts';
import { cardListResponse } from '../../../shared/money/schema.ts';

export default endpoint({
  name: 'card-list',
  summary: "Lists the caller's saved cards, the default first",
  description: 'A signed-in user, for their own cards only: the default first, then the newest; never the ' +
    'authorization code. Changes nothing.',
  method: 'GET',
  auth: userSession,
  response: cardListResponse,
  handler: ({ user }) => cardList(user),
});
