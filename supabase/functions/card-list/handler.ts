import { endpoint } from '../../../shared/endpoint.ts';
import { listCards } from '../../../shared/instruments.ts';
import { cardListResponse } from '../../../shared/schemas/money.ts';

export default endpoint({
  name: 'card-list',
  summary: "Lists the caller's saved cards, the default first",
  method: 'GET',
  auth: 'user',
  response: cardListResponse,
  handler: ({ user }) => listCards(user.claims),
});
