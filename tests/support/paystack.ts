// deno-lint-ignore-file no-explicit-any -- answers of the real server are read as untyped JSON here
// Driving the Paystack fake (tests/fakes/paystack.ts) from tests. The answers webhook-payments
// gave to the webhooks the fake delivered are checked against its response schema (./responses.ts).
import { inject } from 'vitest';
import { checkSuccessBody } from './responses.ts';

const fakeUrl = () => inject('fakePaystackUrl');

/** The email the service gives Paystack for a user (shared/money/payments/index.ts customerEmail). */
export const customerEmailOf = (userId: string) => `${userId}@customers.escrow.ng`;

async function control<T = any>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${fakeUrl()}/_fake${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const out = await res.json();
  if (!res.ok) throw new Error(`fake paystack ${path}: ${JSON.stringify(out)}`);
  const deliveries = (out as { responses?: unknown }).responses;
  if (Array.isArray(deliveries)) {
    for (const r of deliveries as { status: number; body: unknown }[]) {
      await checkSuccessBody('webhook-payments', r.status, r.body);
    }
  }
  return out as T;
}

export interface Delivery {
  responses: { status: number; body: any }[];
}
export interface DeliveryOptions {
  times?: number;
  concurrent?: boolean;
  signature?: string;
}

export const paystack = {
  requests: (path?: string) =>
    control<{ method: string; path: string; body: any; query: Record<string, string>; authorization: string | null }[]>(
      `/requests${path ? `?path=${encodeURIComponent(path)}` : ''}`,
    ),
  registerAccount: (bank_code: string, account_number: string, account_name: string) =>
    control('/accounts', { bank_code, account_number, account_name }),
  /** Calls to path whose body or query field equals value fail: refused, a 500, or no answer (timeout). */
  fail: (match: { path: string; field: string; value: string }, mode: 'refuse' | 'unavailable' | 'timeout') =>
    control('/fail', { match, mode }),
  deliver: (event: string, data: unknown, opts: DeliveryOptions = {}) =>
    control<Delivery>('/deliver', { event, data, ...opts }),
  /** charge.success as Paystack would send it; amount/currency override the event's (currency null: left out), not verify's. */
  chargeSuccess: (reference: string, opts: DeliveryOptions & { amount?: number; currency?: string | null } = {}) =>
    control<Delivery>('/charge-success', { reference, ...opts }),
  transferOutcome: (
    reference: string,
    event: 'transfer.success' | 'transfer.failed' | 'transfer.reversed',
    opts: DeliveryOptions = {},
  ) => control<Delivery>('/transfer-outcome', { reference, event, ...opts }),
  assignOutcome: (email: string, success: boolean, opts: DeliveryOptions & { account_number?: string } = {}) =>
    control<Delivery & { customer_code: string }>('/assign-outcome', { email, success, ...opts }),
  /** What verify will answer for a charge (amount in kobo, currency default NGN); no webhook is sent. */
  chargeStatus: (reference: string, status: string, amount?: number, currency?: string) =>
    control('/charge-status', { reference, status, amount, currency }),
  transferStatus: (reference: string, status: string) => control('/transfer-status', { reference, status }),
  /** Every charge the fake was asked for; status null until someone pays it. */
  charges: () =>
    control<{ reference: string; amount: number; status: string | null; channels: string[] | null }[]>('/charges'),
  /** For `seconds`, every API call fails that way, whatever it asks; mode 'none' ends it early. */
  outage: (mode: 'unavailable' | 'timeout' | 'none', seconds = 0) => control('/outage', { mode, seconds }),
  /**
   * A card authorization the fake issues to the customer `email` (a card charge completed at its
   * checkout page), which check_authorization confirms for that email only; `code` picks the code
   * (AUTH_decline... makes later charges of it declined).
   */
  authorize: (email: string, code?: string) =>
    control<{ authorization_code: string; signature: string }>('/authorize', { email, authorization_code: code }),
  /** authorize() for a user's own customer email: the code, issued to them. */
  authorizeUser: async (userId: string, code?: string) =>
    (await control<{ authorization_code: string }>('/authorize', {
      email: customerEmailOf(userId),
      authorization_code: code,
    })).authorization_code,
  /** Every refund the fake was asked for (reference: the charge's). */
  refunds: () => control<{ id: number; reference: string; amount: number; status: string }[]>('/refunds'),
  /** A refund webhook for the refund of the charge `reference`; amount/currency override the event's. */
  refundOutcome: (
    reference: string,
    event: 'refund.pending' | 'refund.processing' | 'refund.processed' | 'refund.failed',
    opts: DeliveryOptions & { amount?: number; currency?: string } = {},
  ) => control<Delivery>('/refund-outcome', { reference, event, ...opts }),
  /** What GET /refund will answer for the refund of the charge `reference`; no webhook is sent. */
  refundStatus: (reference: string, status: string) => control('/refund-status', { reference, status }),
  dvaDeposit: (account_number: string, amount: number, opts: DeliveryOptions & { customer_code?: string } = {}) =>
    control<Delivery & { data: any }>('/dva-deposit', { account_number, amount, ...opts }),
};
