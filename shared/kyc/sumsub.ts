// Sumsub's HTTP API (https://docs.sumsub.com), the one call we make: an SDK access token for a
// user's applicant at a level. Every request is signed: X-App-Token (the app token), X-App-Access-Ts
// (unix seconds) and X-App-Access-Sig, the lowercase hex HMAC-SHA256 under the secret key of
// ts + METHOD + path + the body's exact bytes. The review's outcome arrives later at webhook-kyc.
//
// Errors come back as {description, code, correlationId, errorCode?, errorName?}. A 4xx is
// `refused` (among them 401 for a bad key or signature, and 409 with errorCode 1009: the applicant
// has a FINAL rejection, see isFinalRejection); a 5xx, a 429 (rate limited: nothing was refused,
// ask again later), a network error or a timeout is `unavailable`.
// The secret key and the token are never logged, nor put in an error message.
import { providerFetch } from '../core/outbound.ts';
import { hmacHex } from '../core/crypto.ts';
import { errorMessage } from '../core/log.ts';
import { type KycProvider, ProviderError } from './provider.ts';

/** Sumsub's errorCode for "applicant-with-final-reject" (HTTP 409). */
export const FINAL_REJECT_ERROR_CODE = 1009;

/** A Sumsub refusal, with Sumsub's own errorCode when its body had one. */
export class SumsubError extends ProviderError {
  constructor(message: string, httpStatus: number, readonly errorCode: number | null) {
    super('refused', message, httpStatus);
  }
}

/** True when Sumsub refused because the applicant at that level was rejected for good (FINAL). */
export function isFinalRejection(err: unknown): boolean {
  return err instanceof SumsubError && err.errorCode === FINAL_REJECT_ERROR_CODE;
}

interface SumsubErrorBody {
  description?: unknown;
  code?: unknown;
  correlationId?: unknown;
  errorCode?: unknown;
  errorName?: unknown;
}

const TOKEN_PATH = '/resources/accessTokens/sdk';
const enc = new TextEncoder();

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

export function sumsubProvider(
  opts: { baseUrl: string; appToken: string; secretKey: string; timeoutMs?: number },
): KycProvider {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  // The base is an origin (https://api.sumsub.com); a path prefix is kept for a proxy in front,
  // but the signature covers Sumsub's own path, the one Sumsub receives.
  const base = opts.baseUrl.replace(/\/+$/, '');

  async function post(path: string, payload: unknown): Promise<unknown> {
    const body = enc.encode(JSON.stringify(payload)); // serialised once: what is signed is what is sent
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = await hmacHex('SHA-256', opts.secretKey, concat(enc.encode(`${ts}POST${path}`), body));
    let res: Response;
    try {
      res = await providerFetch(`${base}${path}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'X-App-Token': opts.appToken,
          'X-App-Access-Ts': ts,
          'X-App-Access-Sig': sig,
        },
        body,
        // a redirect would need a new signature for its path: none is followed
        redirect: 'error',
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new ProviderError('unavailable', `sumsub unreachable: ${errorMessage(err)}`);
    }
    if (res.status >= 500 || res.status === 429) {
      await res.body?.cancel();
      throw new ProviderError('unavailable', `sumsub answered HTTP ${res.status}`, res.status);
    }
    let answer: unknown;
    try {
      answer = await res.json();
    } catch {
      answer = null;
    }
    if (res.status >= 400) {
      const e = (answer ?? {}) as SumsubErrorBody;
      const description = typeof e.description === 'string' && e.description ? e.description.slice(0, 300) : null;
      const errorCode = typeof e.errorCode === 'number' ? e.errorCode : null;
      throw new SumsubError(
        `sumsub refused (HTTP ${res.status}${errorCode !== null ? `, error ${errorCode}` : ''})` +
          (description ? `: ${description}` : ''),
        res.status,
        errorCode,
      );
    }
    if (!res.ok || answer === null) {
      throw new ProviderError('unavailable', `sumsub answered HTTP ${res.status} without a JSON body`, res.status);
    }
    return answer;
  }

  return {
    name: 'sumsub',

    async accessToken(input) {
      const answer = (await post(TOKEN_PATH, {
        userId: input.userId,
        levelName: input.levelName,
        ttlInSecs: input.ttlSeconds,
      })) as { token?: unknown };
      if (typeof answer.token !== 'string' || answer.token.length === 0) {
        throw new ProviderError('unavailable', 'sumsub answered without a token');
      }
      return { token: answer.token };
    },
  };
}
