import { endpoint } from '../../../shared/core/endpoint.ts';
import { PROFILE_NOT_FOUND, USERNAME_TAKEN } from '../../../shared/profile/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { profileUpdate } from '../../../shared/profile/profile.ts';
import { profileResponse, profileUpdateBody } from '../../../shared/profile/schema.ts';

export default endpoint({
  name: 'profile-update',
  summary: "Changes fields of the caller's profile",
  refusals: [PROFILE_NOT_FOUND, USERNAME_TAKEN],
  method: 'PATCH',
  auth: userSession,
  idempotent: false,
  repeat: 'the same changes again change nothing',
  body: profileUpdateBody,
  response: profileResponse,
  handler: ({ user, body }) => profileUpdate(user, body),
});
