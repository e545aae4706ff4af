import { endpoint } from '../../../shared/core/endpoint.ts';
import { PROFILE_NOT_FOUND } from '../../../shared/profile/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { profileGet } from '../../../shared/profile/profile.ts';
import { profileResponse } from '../../../shared/profile/schema.ts';

export default endpoint({
  name: 'profile-get',
  summary: "Reads the caller's own profile",
  description: 'A signed-in user, for their own profile only, with its avatar and next of kin (null until set). ' +
    'Changes nothing.',
  refusals: [PROFILE_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  response: profileResponse,
  handler: ({ user }) => profileGet(user),
});
