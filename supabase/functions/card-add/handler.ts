import { endpoint } from '../../../shared/endpoint.ts';
import { addCard } from '../../../shared/instruments.ts';
import { cardAddBody } from '../../../shared/schemas/money.ts';

export default endpoint({
  name: 'card-add',
  method: 'POST',
  auth: 'user',
  status: 201,
  idempotent: true,
  body: cardAddBody,
  handler: ({ user, body }) => addCard(user, body),
});
