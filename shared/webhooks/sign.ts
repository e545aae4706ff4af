// Signing an outbound webhook the Standard Webhooks way (docs/webhooks.md#signatures), through the
// `standardwebhooks` package so a receiver using any Standard Webhooks library verifies it:
// `webhook-signature` is `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`,
// and during the day after a secret's rotation it holds two of them, space-separated (the new
// secret's first), so a receiver still holding the old secret verifies too.
import { Webhook } from 'standardwebhooks';
import { base64url, randomBytes } from '../core/crypto.ts';

/** How long after a rotation deliveries are signed with the previous secret as well. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** An endpoint's secrets, decrypted: the current one and, after a rotation, the one it replaced. */
export type EndpointSecrets = { current: string; previous?: string | null; rotatedAt?: Date | null };

/** The secrets a delivery at `now` is signed with: the current one, and the previous one for 24 h. */
export function signingSecrets(s: EndpointSecrets, now: Date): string[] {
  const overlap = s.previous && s.rotatedAt && now.getTime() - s.rotatedAt.getTime() < ROTATION_OVERLAP_MS;
  return overlap ? [s.current, s.previous as string] : [s.current];
}

/** A new message id (`msg_` and 16 random bytes); the id stays the same across one event's retries. */
export function newMessageId(): string {
  return `msg_${base64url(randomBytes(16))}`;
}

/** The body every webhook carries: the event's type, its time (ISO 8601) and its data. */
export function webhookBody(type: string, data: Record<string, unknown>, occurredAt: Date): string {
  return JSON.stringify({ type, timestamp: occurredAt.toISOString(), data });
}

/** The `webhook-signature` value for a message: one `v1,<sig>` per secret, space-separated. */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: Date, body: string): string {
  if (secrets.length === 0) throw new Error('a webhook is signed with at least one secret');
  return secrets.map((secret) => new Webhook(secret).sign(id, timestamp, body)).join(' ');
}

/** The three Standard Webhooks headers and the content type of one attempt sent at `sentAt`. */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  sentAt: Date,
  body: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': signatureHeader(secrets, id, sentAt, body),
  };
}
