import { endpoint } from '../../../shared/core/endpoint.ts';
import { KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { cardAdd } from '../../../shared/money/cards.ts';
import { cardAddBody, cardResponse } from '../../../shared/money/schema.ts';
import { CARD_AUTHORIZATION_INVALID } from '../../../shared/money/refusals.ts';
import { PROVIDER_UNAVAILABLE } from '../../../shared/core/refusals.ts';
import { ACCOUNT_FROZEN } from '../../../shared/freezes/refusals.ts';

export default endpoint({
  name: 'card-add',
  summary: 'Saves a card from the authorization of a successful card charge',
  description: 'A signed-in user at KYC tier 1 or above, with what the provider returned for their successful card ' +
    "charge. The payments provider must first confirm `authorization_code` as a reusable card of the caller's " +
    '(409 otherwise; 503 when it cannot be asked), and nothing is saved before. The first saved card becomes the ' +
    'default; the same card again (same `signature`) keeps its one row, refreshed, and answers 200. The ' +
    'authorization code is kept apart and never answered.',
  refusals: [ACCOUNT_FROZEN, KYC_TIER_REQUIRED, CARD_AUTHORIZATION_INVALID, PROVIDER_UNAVAILABLE],
  alsoSucceedsWith: [{ status: 200, description: 'The card was saved already: the saved card' }],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: 'provider',
  repeat: 'saves a card (a card saved already answers 200 with it)',
  body: cardAddBody,
  response: cardResponse,
  handler: ({ user, body }) => cardAdd(user, body),
});
