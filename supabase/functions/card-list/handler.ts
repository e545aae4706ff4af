import { endpoint } from '../../../shared/endpoint.ts';
import { listCards } from '../../../shared/instruments.ts';

export default endpoint({
  name: 'card-list',
  method: 'GET',
  auth: 'user',
  handler: ({ user }) => listCards(user.claims),
});
