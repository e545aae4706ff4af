import { endpoint } from '../../../shared/endpoint.ts';
import { getPublicProfile } from '../../../shared/reviews.ts';
import { profilePublicGetQuery, publicProfileResponse } from '../../../shared/schemas/reviews.ts';

export default endpoint({
  name: 'profile-public-get',
  summary: "Reads another user's public profile: name, rating and completed deals",
  refusals: {
    404: 'No user with this id',
  },
  method: 'GET',
  auth: 'user',
  query: profilePublicGetQuery,
  response: publicProfileResponse,
  handler: ({ query }) => getPublicProfile(query.user_id),
});
