import { endpoint } from '../../../shared/endpoint.ts';
import { getProfile } from '../../../shared/profile.ts';
import { profileResponse } from '../../../shared/schemas/profile.ts';

export default endpoint({
  name: 'profile-get',
  summary: "Reads the caller's own profile",
  method: 'GET',
  auth: 'user',
  response: profileResponse,
  handler: ({ user }) => getProfile(user.claims),
});
