// A merchant's webhook endpoints and their deliveries (docs/merchants.md#webhook-endpoints). The
// owner manages the endpoints with their session: merchant-webhook-create, -list, -delete,
// -rotate-secret and -enable; the merchant's servers read and retry the deliveries with a key:
// webhook-delivery-list and webhook-delivery-retry. The endpoints are the delivery queue's own rows
// (shared/webhooks/queue.ts), owned by the merchant's id; each write is one SQL function that checks
// the endpoint or delivery is the caller's merchant's (supabase/migrations/20261127200000_merchant_webhooks.sql),
// so another merchant's is not found. A secret is made here, answered once and stored only
// encrypted under WEBHOOK_SECRET_KEY (shared/webhooks/secrets.ts).
import type { AuthUser } from '../auth/session.ts';
import { getConfig } from '../core/config.ts';
import { asService, callAsService } from '../core/db.ts';
import { messageIdOf } from '../webhooks/queue.ts';
import { encryptSecret, generateSecret, importSecretKey } from '../webhooks/secrets.ts';
import type { MerchantCaller } from './key-auth.ts';
import { MERCHANT_NOT_FOUND, WEBHOOK_DELIVERY_NOT_FOUND, WEBHOOK_ENDPOINT_NOT_FOUND } from './refusals.ts';
import {
  MAX_WEBHOOK_ENDPOINTS,
  type MerchantWebhookCreateResponse,
  type MerchantWebhookDeleteResponse,
  type MerchantWebhookEnableResponse,
  type MerchantWebhookListResponse,
  type MerchantWebhookResponse,
  type MerchantWebhookRotateResponse,
  type WebhookDeliveryListResponse,
  type WebhookDeliveryRetryResponse,
} from './webhook-schema.ts';

/** A new secret: what the owner is shown once, and its encrypted form, the only one stored. */
async function newSecret(): Promise<{ secret: string; encrypted: string }> {
  const value = getConfig().WEBHOOK_SECRET_KEY;
  if (!value) throw new Error('WEBHOOK_SECRET_KEY is not set');
  const secret = generateSecret();
  return { secret, encrypted: await encryptSecret(secret, await importSecretKey(value)) };
}

type EndpointRow = {
  id: string;
  url: string;
  event_types: MerchantWebhookResponse['event_types'];
  enabled: boolean;
  disabled_at: string | null;
  failing_since: string | null;
  created_at: string;
  previous_secret_until: string | null;
};

const endpointAnswer = (r: EndpointRow, now = Date.now()): MerchantWebhookResponse => ({
  id: r.id,
  url: r.url,
  event_types: r.event_types,
  enabled: r.enabled,
  disabled_at: r.disabled_at,
  failing_since: r.failing_since,
  created_at: r.created_at,
  // once the overlap is over, only the new secret signs: nothing to tell
  secret_rotated_until: r.previous_secret_until && Date.parse(r.previous_secret_until) > now
    ? r.previous_secret_until
    : null,
});

/** merchant-webhook-create: an endpoint of the caller's merchant, its secret answered this once. */
export async function merchantWebhookCreate(
  user: AuthUser,
  body: { url: string; event_types?: MerchantWebhookResponse['event_types'] },
): Promise<MerchantWebhookCreateResponse> {
  const made = await newSecret();
  // the same type twice is asked for once
  const types = body.event_types ? [...new Set(body.event_types)] : null;
  const [row] = await asService((tx) =>
    tx<Omit<EndpointRow, 'disabled_at' | 'failing_since' | 'previous_secret_until'>[]>`
      select id, url, event_types, enabled, created_at
        from private.merchant_webhook_create(${user.id}, ${body.url}, ${types}::text[], ${made.encrypted},
                                             ${MAX_WEBHOOK_ENDPOINTS})`
  );
  const r = row as EndpointRow;
  return {
    ...endpointAnswer({ ...r, disabled_at: null, failing_since: null, previous_secret_until: null }),
    secret: made.secret,
  };
}

/** merchant-webhook-list: the caller's merchant's endpoints, oldest first, never a secret. */
export async function merchantWebhookList(user: AuthUser): Promise<MerchantWebhookListResponse> {
  const [merchant, rows] = await callAsService((tx) => [
    tx<{ id: string }[]>`select id from private.merchants where owner_id = ${user.id}`,
    tx<EndpointRow[]>`
      select w.id, w.url, w.event_types, w.enabled, w.disabled_at, w.failing_since, w.created_at,
             w.previous_secret_until
        from private.webhook_endpoints w
       where w.owner_id = (select m.id from private.merchants m where m.owner_id = ${user.id})
       order by w.created_at, w.id`,
  ]);
  if (merchant.length === 0) throw MERCHANT_NOT_FOUND.error({});
  const now = Date.now();
  return rows.map((r) => endpointAnswer(r, now));
}

/** merchant-webhook-delete: the endpoint and its deliveries go; nothing pending is sent any more. */
export async function merchantWebhookDelete(
  user: AuthUser,
  body: { endpoint_id: string },
): Promise<MerchantWebhookDeleteResponse> {
  const [row] = await asService((tx) =>
    tx<MerchantWebhookDeleteResponse[]>`
      select endpoint_id, deliveries_stopped from private.merchant_webhook_delete(${user.id}, ${body.endpoint_id})`
  );
  return row as MerchantWebhookDeleteResponse;
}

/** merchant-webhook-rotate-secret: a new secret, answered this once; the old one signs too for 24 hours. */
export async function merchantWebhookRotateSecret(
  user: AuthUser,
  body: { endpoint_id: string },
): Promise<MerchantWebhookRotateResponse> {
  const made = await newSecret();
  const [row] = await asService((tx) =>
    tx<{ endpoint_id: string; previous_secret_until: string }[]>`
      select endpoint_id, previous_secret_until
        from private.merchant_webhook_rotate(${user.id}, ${body.endpoint_id}, ${made.encrypted}, now())`
  );
  const r = row as { endpoint_id: string; previous_secret_until: string };
  return { endpoint_id: r.endpoint_id, secret: made.secret, previous_secret_until: r.previous_secret_until };
}

/** merchant-webhook-enable: the endpoint on again; its pending deliveries due at once. */
export async function merchantWebhookEnable(
  user: AuthUser,
  body: { endpoint_id: string },
): Promise<MerchantWebhookEnableResponse> {
  const [row] = await asService((tx) =>
    tx<MerchantWebhookEnableResponse[]>`
      select endpoint_id, deliveries_due from private.merchant_webhook_enable(${user.id}, ${body.endpoint_id}, now())`
  );
  return row as MerchantWebhookEnableResponse;
}

type DeliveryRow = Omit<WebhookDeliveryListResponse[number], 'message_id' | 'event_id'> & { event_id: string };

/** webhook-delivery-list: the deliveries of the key's merchant's endpoints, newest first. */
export async function webhookDeliveryList(
  user: MerchantCaller,
  q: { endpoint_id?: string; status?: string; limit: number; before?: string },
): Promise<WebhookDeliveryListResponse> {
  const [found, rows] = await callAsService((tx) => [
    // whether the endpoint and the cursor named are the merchant's (anyone else's: not found)
    tx<{ endpoint: boolean; before: boolean }[]>`
      select exists (select 1 from private.webhook_endpoints w
                      where w.id = ${q.endpoint_id ?? null}::uuid and w.owner_id = ${user.merchantId}) as endpoint,
             exists (select 1 from private.webhook_deliveries b join private.webhook_endpoints w on w.id = b.endpoint_id
                      where b.id = ${q.before ?? null}::uuid and w.owner_id = ${user.merchantId}) as before`,
    tx<DeliveryRow[]>`
      select d.id, d.endpoint_id, d.event_id::text, d.type, d.status, d.attempts, d.next_attempt_at,
             d.last_attempt_at, d.last_status_code, d.last_reason, d.response_excerpt, d.duration_ms, d.created_at,
             d.delivered_at
        from private.webhook_deliveries d
        join private.webhook_endpoints w on w.id = d.endpoint_id
       where w.owner_id = ${user.merchantId}
         ${q.endpoint_id ? tx`and d.endpoint_id = ${q.endpoint_id}` : tx``}
         ${q.status ? tx`and d.status = ${q.status}` : tx``}
         ${
      q.before
        ? tx`and (d.created_at, d.id) < (select b.created_at, b.id from private.webhook_deliveries b
                                           where b.id = ${q.before})`
        : tx``
    }
       order by d.created_at desc, d.id desc
       limit ${q.limit}`,
  ]);
  if (q.endpoint_id && !found[0]?.endpoint) throw WEBHOOK_ENDPOINT_NOT_FOUND.error({ field: 'endpoint_id' });
  if (q.before && !found[0]?.before) throw WEBHOOK_DELIVERY_NOT_FOUND.error({ field: 'before' });
  return rows.map((d) => ({
    id: d.id,
    endpoint_id: d.endpoint_id,
    event_id: Number(d.event_id),
    message_id: messageIdOf(d.id),
    type: d.type,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.next_attempt_at,
    last_attempt_at: d.last_attempt_at,
    last_status_code: d.last_status_code,
    last_reason: d.last_reason,
    response_excerpt: d.response_excerpt,
    duration_ms: d.duration_ms,
    created_at: d.created_at,
    delivered_at: d.delivered_at,
  }));
}

/** webhook-delivery-retry: a failed or pending delivery of the merchant's starts a new series, due now. */
export async function webhookDeliveryRetry(
  user: MerchantCaller,
  body: { delivery_id: string },
): Promise<WebhookDeliveryRetryResponse> {
  const [row] = await asService((tx) =>
    tx<WebhookDeliveryRetryResponse[]>`
      select delivery_id, status, next_attempt_at
        from private.merchant_webhook_delivery_retry(${user.merchantId}, ${body.delivery_id}, now())`
  );
  return row as WebhookDeliveryRetryResponse;
}
