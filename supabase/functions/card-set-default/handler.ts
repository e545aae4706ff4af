import { endpoint } from '../../../shared/endpoint.ts';
import { setDefaultCard } from '../../../shared/instruments.ts';
import { cardIdBody } from '../../../shared/schemas/money.ts';

export default endpoint({
  name: 'card-set-default',
  method: 'POST',
  auth: 'user',
  idempotent: false,
  body: cardIdBody,
  handler: ({ user, body }) => setDefaultCard(user, body.card_id),
});
