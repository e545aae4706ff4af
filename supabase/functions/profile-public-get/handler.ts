import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { profilePublicGet } from '../../../shared/reviews/reviews.ts';
import { profilePublicGetQuery, publicProfileResponse } from '../../../shared/reviews/schema.ts';
import { USER_NOT_FOUND } from '../../../shared/reviews/refusals.ts';

export default endpoint({
  name: 'profile-public-get',
  summary: "Reads another user's public profile: name, rating and completed deals",
  description: 'Any signed-in user, about any user. Only what a counterparty may see before trusting someone: first ' +
    'name and last initial, username, avatar, KYC tier, sign-up date, completed deals (escrows released to the ' +
    'payee) and the rating; never the phone, the address or the next of kin. Changes nothing.',
  refusals: [USER_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  query: profilePublicGetQuery,
  response: publicProfileResponse,
  handler: ({ query }) => profilePublicGet(query.user_id),
});
