import { endpoint } from '../../../shared/endpoint.ts';
import { updateProfile } from '../../../shared/profile.ts';
import { profileUpdateBody } from '../../../shared/schemas/profile.ts';

export default endpoint({
  name: 'profile-update',
  method: 'PATCH',
  auth: 'user',
  idempotent: false,
  body: profileUpdateBody,
  handler: ({ user, body }) => updateProfile(user.claims, body),
});
