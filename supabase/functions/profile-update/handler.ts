import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { profileUpdate } from '../../../shared/profile/profile.ts';
import { profileResponse, profileUpdateBody } from '../../../shared/profile/schema.ts';

export default endpoint({
  name: 'profile-update',
  summary: "Changes fields of the caller's profile",
  refusals: {
    409: 'That username is taken',
  },
  method: 'PATCH',
  auth: userSession,
  idempotent: false,
  repeat: 'the same changes again change nothing',
  body: profileUpdateBody,
  response: profileResponse,
  handler: ({ user, body }) => profileUpdate(user, body),
});
