// The KYC and identity sandboxes: no keys, no network beyond ourselves. Each answers at once and,
// a moment later (SANDBOX_WEBHOOK_DELAY_MS), posts the outcome to our own webhook-kyc or
// webhook-identity, correctly signed and in the shape the real provider sends, so a newcomer
// walks a user from tier 0 to 3 with `npm start` alone, through the code paths production uses.
// The call never waits for the delivery; a delivery that fails is logged as a warning.
import { providerFetch } from '../core/outbound.ts';
import { sha256Hex } from '../core/crypto.ts';
import { errorMessage, log } from '../core/log.ts';
import type { IdentityProvider, KycProvider } from './provider.ts';
import { signKycPayload } from './signature.ts';

/** Sumsub's createdAtMs: 'YYYY-MM-DD HH:mm:ss.SSS', UTC (a string, not epoch milliseconds). */
export function sumsubTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

// Events of one process never share a createdAtMs (webhook-kyc orders and dedupes by it).
let lastEventMs = 0;
function nextEventMs(): number {
  lastEventMs = Math.max(Date.now(), lastEventMs + 1);
  return lastEventMs;
}

async function post(url: string, headers: Record<string, string>, body: string, what: Record<string, unknown>) {
  try {
    const res = await providerFetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body,
    });
    await res.body?.cancel();
    if (!res.ok) log.warn('sandbox.webhook_rejected', { ...what, status: res.status });
  } catch (err) {
    log.warn('sandbox.webhook_failed', { ...what, error: errorMessage(err) });
  }
}

/**
 * Sumsub without Sumsub: every applicant passes. After the delay it sends applicantPending (the
 * documents were "submitted") and then applicantReviewed with reviewAnswer GREEN.
 */
export function sandboxKycProvider(opts: { webhookUrl: string; secret: string; delayMs: number }): KycProvider {
  const deliver = async (event: Record<string, unknown>) => {
    const body = JSON.stringify(event);
    const digest = await signKycPayload(opts.secret, body, 'HMAC_SHA512_HEX');
    await post(
      opts.webhookUrl,
      { 'x-payload-digest': digest, 'x-payload-digest-alg': 'HMAC_SHA512_HEX' },
      body,
      { provider: 'kyc', type: event.type, externalUserId: event.externalUserId, levelName: event.levelName },
    );
  };

  return {
    name: 'sandbox',
    async accessToken(input) {
      // Sumsub keeps one applicant per userId + level: the same ids every time within the process
      const seed = await sha256Hex(`${input.userId}\n${input.levelName}`);
      const common = {
        applicantId: seed.slice(0, 24),
        inspectionId: seed.slice(24, 48),
        applicantType: 'individual',
        externalUserId: input.userId,
        levelName: input.levelName,
        sandboxMode: true,
      };
      setTimeout(async () => {
        await deliver({
          ...common,
          correlationId: `req-${crypto.randomUUID()}`,
          type: 'applicantPending',
          reviewStatus: 'pending',
          createdAtMs: sumsubTimestamp(nextEventMs()),
        });
        await deliver({
          ...common,
          correlationId: `req-${crypto.randomUUID()}`,
          type: 'applicantReviewed',
          reviewStatus: 'completed',
          reviewResult: { reviewAnswer: 'GREEN' },
          createdAtMs: sumsubTimestamp(nextEventMs()),
        });
      }, opts.delayMs);
      return { token: `_act-sandbox-${crypto.randomUUID()}` };
    },
  };
}

/**
 * An identity-check provider without one. The rule: a number whose last digit is 0 is `not_found`
 * (the check fails); any other number is `found` (it passes). So 12345678901 passes and 12345678900
 * shows a newcomer what a failure looks like. A NIN or BVN found comes back with the holder's names
 * as a registry writes them (capitals, surname first), so they match the profile.
 */
export function sandboxIdentityProvider(
  opts: { webhookUrl: string; token: string; delayMs: number },
): IdentityProvider {
  return {
    name: 'sandbox',
    async requestCheck(input) {
      // Only what the result needs is kept for the delivery, never the whole number.
      const status = input.idNumber.endsWith('0') ? 'not_found' : 'found';
      const idLast4 = input.idNumber.slice(-4);
      const { reference, verificationType } = input;
      const names = input.holder && status === 'found'
        ? { lastName: input.holder.lastName.toUpperCase(), firstName: input.holder.firstName.toUpperCase() }
        : {};
      setTimeout(() => {
        const body = JSON.stringify({
          reference,
          verificationType,
          status,
          idLast4,
          ...names,
          provider: 'sandbox',
          completedAt: new Date().toISOString(),
        });
        void post(opts.webhookUrl, { 'x-identity-webhook-token': opts.token }, body, {
          provider: 'identity',
          reference,
          verificationType,
        });
      }, opts.delayMs);
    },
  };
}
