// The closed lists of the webhook queue's columns (tests/integration/enums.test.ts compares each
// with its column's check constraint).

/** A delivery's state: waiting for its next attempt, answered 2xx, or out of attempts (or gone). */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** Whose id an endpoint's owner_id is: a user's or a merchant's (how its deliveries are rendered). */
export const WEBHOOK_OWNER_KINDS = ['user', 'merchant'] as const;
export type WebhookOwnerKind = (typeof WEBHOOK_OWNER_KINDS)[number];
