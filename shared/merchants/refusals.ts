// The refusals of the merchants area: merchant accounts and their API keys. A caller below tier 4
// gets kyc's kyc_tier_required (shared/kyc/refusals.ts), which words the merchant case too.
import { refusal } from '../core/http.ts';

export const MERCHANT_EXISTS = refusal<{ merchant_id: string }>({
  code: 'merchant_exists',
  status: 409,
  when: 'The caller already owns a merchant: an owner has one',
  then: 'Use the merchant you have (merchant-get)',
  message: () => 'You already have a merchant account',
  example: { merchant_id: '3b8f5c1e-7a2d-4e9b-8c6f-1d0a9e4b7c25' },
});

export const MERCHANT_NOT_FOUND = refusal({
  code: 'merchant_not_found',
  status: 404,
  when: 'The caller owns no merchant',
  then: 'Create one first (merchant-create, at KYC tier 4)',
  message: () => 'You have no merchant account',
  example: {},
});

export const MERCHANT_FROZEN = refusal({
  code: 'merchant_frozen',
  status: 403,
  when:
    'The merchant is frozen by an operator: no new key or webhook endpoint and no withdrawal while it is (its keys are refused too)',
  then: 'Contact support; removing an endpoint, rotating its secret and revoking a key still work',
  message: () => 'Your merchant account is frozen',
  example: {},
});

export const MERCHANT_KEY_NOT_FOUND = refusal<{ field: string }>({
  code: 'merchant_key_not_found',
  status: 404,
  when: "The key named is not one of the caller's merchant's keys",
  then: 'List the keys (merchant-key-list) and name one of them',
  message: () => 'API key not found',
  details: (f) => [{ field: f.field, message: "is not one of your merchant's keys" }],
  example: { field: 'key_id' },
});

export const MERCHANT_KEY_LIMIT = refusal<{ limit: number }>({
  code: 'merchant_key_limit',
  status: 409,
  when: 'The merchant already has as many live (unrevoked) API keys as a merchant may',
  then: 'Revoke a key it no longer uses (merchant-key-revoke), then make the new one',
  message: (f) => `A merchant may have at most ${f.limit} live API keys`,
  example: { limit: 10 },
});

export const MERCHANT_PARTY_IS_OWNER = refusal<{ field: string }>({
  code: 'merchant_party_is_owner',
  status: 409,
  when: "buyer_phone or seller_phone is the merchant owner's own phone: a merchant's escrows are between its customers",
  then: 'Name the two customers; to buy or sell yourself, use the app (escrow-create)',
  message: () => "The merchant's owner cannot be a party to its escrows",
  details: (f) => [{ field: f.field, message: "is the merchant owner's own phone" }],
  example: { field: 'seller_phone' },
});

export const MERCHANT_REFERENCE_REUSED = refusal<{ field: string; escrow_id: string }>({
  code: 'merchant_reference_reused',
  status: 409,
  when: "The reference names one of the merchant's escrows that was created with another request body",
  then: 'Send the same body to read that escrow again, or use a new reference for a new escrow',
  message: () => 'This reference belongs to an escrow created with other details',
  details: (f) => [{ field: f.field, message: `already names escrow ${f.escrow_id}, created with another body` }],
  example: { field: 'reference', escrow_id: '3b8f5c1e-7a2d-4e9b-8c6f-1d0a9e4b7c25' },
});

export const MERCHANT_ESCROW_CHECKOUT_ONLY = refusal<{ escrow_id: string }>({
  code: 'merchant_escrow_checkout_only',
  status: 409,
  when: "escrow-fund names a merchant's escrow: its buyer pays through the checkout page the merchant shows",
  then: "Pay through the merchant's checkout page (the checkout_url of merchant-escrow-create)",
  message: () => "A merchant's escrow is paid through the merchant's checkout page only",
  example: { escrow_id: '3b8f5c1e-7a2d-4e9b-8c6f-1d0a9e4b7c25' },
});

// The webhook endpoints and deliveries of a merchant.
export * from './webhook-refusals.ts';
