// The `http` identity-check provider: our own documented contract, which any provider or relay may
// implement. No Nigerian provider we looked at (Youverify, Smile ID, Prembly, Dojah, VerifyMe)
// authenticates its callbacks with a static token header as our spec's webhook-identity does, so
// a real provider is put behind a thin relay that speaks this:
//
//   POST {IDENTITY_BASE_URL}/verifications
//     Authorization: Bearer <IDENTITY_API_KEY>
//     {"reference", "verificationType": NIN|BVN|CAC|TIN|BANK_ACCOUNT|DIRECTOR, "idNumber",
//      "bankCode"? (BANK_ACCOUNT), "rcNumber"? (DIRECTOR),
//      "firstName", "lastName", "phone" (NIN and BVN: the account holder, as the profile says)}
//   -> 202 (or 200) {"reference", "status": "pending"}: accepted; a repeated reference is the same
//      request, not a second check. 4xx {"message"} or {"error"}: refused. 5xx or 429: try again later.
//
//   Later, the result: POST {our base}/webhook-identity
//     x-identity-webhook-token: <IDENTITY_WEBHOOK_SECRET>
//     {"reference", "verificationType", "status": "found" | "not_found" | ..., "idLast4"?,
//      "providerReference"?, "completedAt"?,
//      "firstName", "middleName"?, "lastName" (NIN and BVN: the names found for the number)}
//   ("found" passes, for a NIN or BVN only with the holder's names; anything else fails)
//
// The id number goes to the provider only: it is never logged nor put in an error message.
import { providerFetch } from '../core/outbound.ts';
import { errorMessage } from '../core/log.ts';
import { type IdentityProvider, ProviderError } from './provider.ts';

export function httpIdentityProvider(
  opts: { baseUrl: string; apiKey: string; timeoutMs?: number },
): IdentityProvider {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/verifications`;

  return {
    name: 'http',

    async requestCheck(input) {
      const body: Record<string, string> = {
        reference: input.reference,
        verificationType: input.verificationType,
        idNumber: input.idNumber,
      };
      if (input.bankCode !== undefined) body.bankCode = input.bankCode;
      if (input.rcNumber !== undefined) body.rcNumber = input.rcNumber;
      if (input.holder) {
        body.firstName = input.holder.firstName;
        body.lastName = input.holder.lastName;
        body.phone = input.holder.phone;
      }
      let res: Response;
      try {
        res = await providerFetch(url, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${opts.apiKey}`,
            'Content-Type': 'application/json',
            Accept: 'application/json',
          },
          body: JSON.stringify(body),
          // the key and the id number are not sent on to wherever a redirect points
          redirect: 'error',
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        throw new ProviderError('unavailable', `identity provider unreachable: ${errorMessage(err)}`);
      }
      if (res.ok) {
        await res.body?.cancel();
        return;
      }
      // 429: rate limited, which refuses nothing; like a 5xx, ask again later
      if (res.status < 400 || res.status >= 500 || res.status === 429) {
        await res.body?.cancel();
        throw new ProviderError('unavailable', `identity provider answered HTTP ${res.status}`, res.status);
      }
      const answer = (await res.json().catch(() => null)) as { message?: unknown; error?: unknown } | null;
      const said = typeof answer?.message === 'string'
        ? answer.message
        : typeof answer?.error === 'string'
        ? answer.error
        : '';
      // a provider may echo what it was sent: the number is cut out before the message goes anywhere
      const safe = (input.idNumber ? said.split(input.idNumber).join('[id number]') : said).slice(0, 300);
      throw new ProviderError(
        'refused',
        `identity provider refused (HTTP ${res.status})${safe ? `: ${safe}` : ''}`,
        res.status,
      );
    },
  };
}
