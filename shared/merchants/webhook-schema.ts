// Request and response schemas of a merchant's webhook endpoints (merchant-webhook-create, -list,
// -delete, -rotate-secret, -enable) and their deliveries (webhook-delivery-list, -retry).
import { z } from 'zod';
import { getConfig } from '../core/config.ts';
import { count, timestamp, uuid } from '../core/schema.ts';
import { HTTP_URL_PATTERN, httpUrl, queryInt, uuidSchema } from '../core/validation.ts';
import { parseDestination } from '../webhooks/address.ts';
import { WEBHOOK_DELIVERY_STATUSES } from '../webhooks/enums.ts';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/types.ts';

/** How many webhook endpoints a merchant may have. */
export const MAX_WEBHOOK_ENDPOINTS = 10;

/**
 * Why a URL may not be registered, or null when it may: the rules of shared/webhooks/address.ts
 * that hold whatever the host resolves to (https, http only on the local stack; no user or
 * password; port 443 or 8443, any on the local stack; no literal address that is not public, loopback allowed on the local stack). What the
 * host resolves to is checked at every delivery, not here: it can change after registration.
 */
export function webhookUrlProblem(url: string, opts: { local: boolean }): string | null {
  const parsed = parseDestination(url, opts);
  if (parsed.ok) return null;
  switch (parsed.reason) {
    case 'scheme_not_allowed':
      return 'must be an https URL';
    case 'credentials_in_url':
      return 'must not hold a user name or password';
    case 'port_not_allowed':
      return 'must use port 443 or 8443';
    case 'address_refused':
      return `must not point at a private, loopback or reserved address: ${parsed.detail}`;
    default:
      return 'must be an absolute http(s) URL';
  }
}

const URL_FORM = new RegExp(HTTP_URL_PATTERN);

const webhookUrl = httpUrl()
  .superRefine((value, ctx) => {
    // a URL the form above refused has its one problem already
    if (!URL_FORM.test(value)) return;
    const problem = webhookUrlProblem(value, { local: getConfig().local });
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .describe(
    'Where the events are sent, as a signed POST: https (http only on a local stack), no user name or password, ' +
      'port 443 or 8443 (any on a local stack), ' +
      'and no private, loopback or reserved address (the host is resolved and checked again at every delivery)',
  );

// ---- requests ----------------------------------------------------------------------------------

export const webhookEventType = z.enum(WEBHOOK_EVENT_TYPES);

export const merchantWebhookCreateBody = z.strictObject({
  url: webhookUrl,
  event_types: z.array(webhookEventType).min(1).max(WEBHOOK_EVENT_TYPES.length).optional().describe(
    'The event types to send; without it, all of them (and any added later)',
  ),
});

const endpointTarget = z.strictObject({
  endpoint_id: uuidSchema.describe('The id of one of your endpoints, from merchant-webhook-list'),
});
export const merchantWebhookDeleteBody = endpointTarget;
export const merchantWebhookRotateBody = endpointTarget;
export const merchantWebhookEnableBody = endpointTarget;

export const webhookDeliveryListQuery = z.strictObject({
  endpoint_id: uuidSchema.optional().describe("Only this endpoint's deliveries"),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
  limit: queryInt(20, 1, 100),
  before: uuidSchema.optional().describe(
    'The next page: the deliveries listed after this one (the id of the last delivery of the page before). ' +
      'Deliveries made together share their creation time, so the page boundary is a delivery, not a time',
  ),
});

export const webhookDeliveryRetryBody = z.strictObject({
  delivery_id: uuidSchema.describe('The id of a delivery, from webhook-delivery-list'),
});

// ---- responses ---------------------------------------------------------------------------------

export const merchantWebhookResponse = z.strictObject({
  id: uuid,
  url: z.string(),
  event_types: z.array(webhookEventType).nullable().describe('The types sent; null: all of them'),
  enabled: z.boolean(),
  disabled_at: timestamp.nullable().describe('When it was disabled after failing for more than 5 days'),
  failing_since: timestamp.nullable().describe('The first failure of an unbroken run of failed attempts'),
  created_at: timestamp,
  secret_rotated_until: timestamp.nullable().describe(
    'After a rotation: until when the previous secret signs too (24 hours after the rotation)',
  ),
});
export type MerchantWebhookResponse = z.input<typeof merchantWebhookResponse>;

const secretField = z.string().regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/).describe(
  'The signing secret, shown this once: only an encrypted copy is kept',
);

export const merchantWebhookCreateResponse = merchantWebhookResponse.extend({ secret: secretField });
export type MerchantWebhookCreateResponse = z.input<typeof merchantWebhookCreateResponse>;

export const merchantWebhookListResponse = z.array(merchantWebhookResponse);
export type MerchantWebhookListResponse = z.input<typeof merchantWebhookListResponse>;

export const merchantWebhookDeleteResponse = z.strictObject({
  endpoint_id: uuid,
  deliveries_stopped: count.describe('Its deliveries that were still pending and will not be sent'),
});
export type MerchantWebhookDeleteResponse = z.input<typeof merchantWebhookDeleteResponse>;

export const merchantWebhookRotateResponse = z.strictObject({
  endpoint_id: uuid,
  secret: secretField,
  previous_secret_until: timestamp.describe('Until when the previous secret signs deliveries too'),
});
export type MerchantWebhookRotateResponse = z.input<typeof merchantWebhookRotateResponse>;

export const merchantWebhookEnableResponse = z.strictObject({
  endpoint_id: uuid,
  deliveries_due: count.describe('Its pending deliveries, now due at once'),
});
export type MerchantWebhookEnableResponse = z.input<typeof merchantWebhookEnableResponse>;

export const webhookDeliveryResponse = z.strictObject({
  id: uuid,
  endpoint_id: uuid,
  event_id: z.int().describe('The event of the log it carries'),
  message_id: z.string().describe('Its `webhook-id` header: the same on every attempt'),
  type: webhookEventType,
  status: z.enum(WEBHOOK_DELIVERY_STATUSES),
  attempts: count.describe('Attempts of the current series (a retry starts a new one)'),
  next_attempt_at: timestamp.nullable().describe('When a pending delivery is next tried'),
  last_attempt_at: timestamp.nullable(),
  last_status_code: z.int().nullable().describe("The receiver's last HTTP status (null: no answer)"),
  last_reason: z.string().nullable().describe('Why the last attempt failed (docs/webhooks.md#retries)'),
  response_excerpt: z.string().nullable().describe("The first 4 KiB at most of the receiver's last answer"),
  duration_ms: z.int().nullable(),
  created_at: timestamp,
  delivered_at: timestamp.nullable(),
});
export type WebhookDeliveryResponse = z.input<typeof webhookDeliveryResponse>;

export const webhookDeliveryListResponse = z.array(webhookDeliveryResponse);
export type WebhookDeliveryListResponse = z.input<typeof webhookDeliveryListResponse>;

export const webhookDeliveryRetryResponse = z.strictObject({
  delivery_id: uuid,
  status: z.enum(WEBHOOK_DELIVERY_STATUSES),
  next_attempt_at: timestamp.nullable(),
});
export type WebhookDeliveryRetryResponse = z.input<typeof webhookDeliveryRetryResponse>;
