import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { profileNokUpdate } from '../../../shared/profile/profile.ts';
import { nextOfKinResponse, nokUpdateBody } from '../../../shared/profile/schema.ts';

export default endpoint({
  name: 'profile-nok-update',
  summary: "Sets or changes the caller's next of kin",
  description: 'A signed-in user, for their own next of kin: one per user, created by the first call and replaced ' +
    'whole by the next (every field is required). Nothing else changes.',
  method: 'PATCH',
  auth: userSession,
  idempotent: false,
  repeat: 'the same next of kin again changes nothing',
  body: nokUpdateBody,
  response: nextOfKinResponse,
  handler: ({ user, body }) => profileNokUpdate(user, body),
});
