import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { profilePublicGet } from '../../../shared/reviews/reviews.ts';
import { profilePublicGetQuery, publicProfileResponse } from '../../../shared/reviews/schema.ts';
import { USER_NOT_FOUND } from '../../../shared/reviews/refusals.ts';

export default endpoint({
  name: 'profile-public-get',
  summary: "Reads another user's public profile: name, rating and completed deals",
  refusals: [USER_NOT_FOUND],
  method: 'GET',
  auth: userSession,
  query: profilePublicGetQuery,
  response: publicProfileResponse,
  handler: ({ query }) => profilePublicGet(query.user_id),
});
