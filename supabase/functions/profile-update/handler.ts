import { endpoint } from '../../../shared/core/endpoint.ts';
import { NAME_VERIFIED, PROFILE_NOT_FOUND, USERNAME_TAKEN } from '../../../shared/profile/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { profileUpdate } from '../../../shared/profile/profile.ts';
import { profileResponse, profileUpdateBody } from '../../../shared/profile/schema.ts';

export default endpoint({
  name: 'profile-update',
  summary: "Changes fields of the caller's profile",
  description: 'A signed-in user, on their own profile only. Only the fields sent change (at least one); a ' +
    '`username` another user has is refused, the phone number never changes after sign-up, and the first and ' +
    'last name no longer change once a NIN or BVN check matched them.',
  refusals: [PROFILE_NOT_FOUND, USERNAME_TAKEN, NAME_VERIFIED],
  method: 'PATCH',
  auth: userSession,
  idempotent: false,
  repeat: 'the same changes again change nothing',
  body: profileUpdateBody,
  response: profileResponse,
  handler: ({ user, body }) => profileUpdate(user, body),
});
