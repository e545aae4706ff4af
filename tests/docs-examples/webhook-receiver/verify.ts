// The receiver example of docs/webhooks.md, byte for byte after these comment lines: tsc
// type-checks it, tests/unit/webhooks.test.ts keeps the document and this file the same, and the
// local receiver of tests/integration/webhook-delivery.test.ts verifies every delivery with it.
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export type EscrowEvent = { type: string; timestamp: string; data: Record<string, unknown> };

/**
 * The event a delivery carries, or null when its signature does not hold. `rawBody` is the body
 * exactly as it arrived (verify before any JSON parsing); `secret` is the endpoint's whsec_ secret.
 */
export function verifyEscrowWebhook(
  secret: string,
  rawBody: string,
  headers: Record<string, string>,
): EscrowEvent | null {
  try {
    // checks webhook-signature against webhook-id, webhook-timestamp and the body, and refuses a
    // webhook-timestamp more than 5 minutes away from now (a replayed delivery)
    return new Webhook(secret).verify(rawBody, headers) as EscrowEvent;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return null;
    throw err;
  }
}
