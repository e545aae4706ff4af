import { endpoint } from '../../../shared/core/endpoint.ts';
import { userSession } from '../../../shared/auth/session.ts';
import { merchantCreate } from '../../../shared/merchants/merchants.ts';
import { merchantCreateBody, merchantCreateResponse } from '../../../shared/merchants/schema.ts';
import { MERCHANT_EXISTS } from '../../../shared/merchants/refusals.ts';
import { KYC_TIER_REQUIRED } from '../../../shared/kyc/refusals.ts';

export default endpoint({
  name: 'merchant-create',
  summary: "Opens the caller's merchant account, which creates escrows for its customers with API keys",
  description: 'A signed-in user at KYC tier 4, who becomes its owner; an owner has one merchant. The merchant is ' +
    "`active` at once and holds no key yet (merchant-key-create). Its name appears in its customers' SMS, so it " +
    'holds only letters A-Z, digits and spaces, with no web address or phone number.',
  refusals: [KYC_TIER_REQUIRED, MERCHANT_EXISTS],
  method: 'POST',
  auth: userSession,
  status: 201,
  idempotent: true,
  repeat: 'creates the merchant; a repeat without a key finds it there (409)',
  body: merchantCreateBody,
  response: merchantCreateResponse,
  handler: ({ user, body }) => merchantCreate(user, body),
});
