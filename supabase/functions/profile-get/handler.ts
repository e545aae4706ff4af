import { endpoint } from '../../../shared/endpoint.ts';
import { getProfile } from '../../../shared/profile.ts';

export default endpoint({
  name: 'profile-get',
  method: 'GET',
  auth: 'user',
  handler: ({ user }) => getProfile(user.claims),
});
