// Paystack's HTTP API (https://paystack.com/docs/api). Amounts are kobo; our transaction id is
// the `reference`, so a retried call can never charge or pay twice. See docs/providers/paystack.md.
import { providerFetch } from '../../core/outbound.ts';
import { errorMessage } from '../../core/log.ts';
import { type PaymentsProvider, ProviderError, type RefundAnswer } from './provider.ts';

/** A refund as Paystack answers it (create, fetch, list). */
interface PaystackRefund {
  id: number | string;
  status: string;
  amount: number | string;
  currency?: string | null;
  transaction?: number | string | { id?: number | string; reference?: string };
}

const refundAnswer = (r: PaystackRefund): RefundAnswer => ({
  refundId: String(r.id),
  status: String(r.status),
  amountKobo: Number.isSafeInteger(Number(r.amount)) ? Number(r.amount) : null,
  currency: typeof r.currency === 'string' && r.currency.length > 0 ? r.currency.toUpperCase() : null,
});

interface Envelope<T> {
  status: boolean;
  message: string;
  data: T;
}

/** How long a call waits for Paystack's answer before its outcome is unknown ('unavailable'). */
const DEFAULT_TIMEOUT_MS = 15_000;

export function paystackProvider(
  opts: { baseUrl: string; secretKey: string; preferredBank?: string; timeoutMs?: number },
): PaymentsProvider {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  async function call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await providerFetch(new URL(path, opts.baseUrl), {
        method,
        headers: {
          Authorization: `Bearer ${opts.secretKey}`,
          'Content-Type': 'application/json',
          Accept: 'application/json',
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new ProviderError('unavailable', `paystack unreachable: ${errorMessage(err)}`);
    }
    const payload = (await res.json().catch(() => null)) as Envelope<T> | null;
    if (res.status >= 500 || payload === null) {
      throw new ProviderError('unavailable', `paystack answered HTTP ${res.status}`, res.status);
    }
    if (!res.ok || payload.status !== true) {
      throw new ProviderError('refused', payload.message || `paystack refused (HTTP ${res.status})`, res.status);
    }
    return payload.data;
  }

  return {
    name: 'paystack',

    async initializeCharge(input) {
      const data = await call<{ authorization_url: string; access_code: string; reference: string }>(
        'POST',
        '/transaction/initialize',
        {
          email: input.email,
          amount: String(input.amountKobo),
          reference: input.reference,
          currency: 'NGN',
          metadata: input.metadata,
          ...(input.callbackUrl ? { callback_url: input.callbackUrl } : {}),
          ...(input.channels ? { channels: [...input.channels] } : {}),
        },
      );
      return { authorizationUrl: data.authorization_url, accessCode: data.access_code, reference: data.reference };
    },

    async chargeAuthorization(input) {
      const data = await call<{ status: string; gateway_response?: string }>(
        'POST',
        '/transaction/charge_authorization',
        {
          email: input.email,
          amount: String(input.amountKobo),
          authorization_code: input.authorizationCode,
          reference: input.reference,
          currency: 'NGN',
          metadata: input.metadata,
        },
      );
      const status = data.status === 'success' ? 'success' : data.status === 'failed' ? 'failed' : 'pending';
      return { status, message: data.gateway_response ?? data.status };
    },

    async checkAuthorization(input) {
      try {
        await call<{ amount: number | string; currency: string }>('POST', '/transaction/check_authorization', {
          authorization_code: input.authorizationCode,
          email: input.email,
          amount: String(input.amountKobo),
          currency: 'NGN',
        });
        return true;
      } catch (err) {
        // 400/404/422: the authorization does not exist, is not that customer's, or is not reusable.
        // Any other refusal (a bad key: 401) says nothing about the card: no answer.
        if (err instanceof ProviderError && err.kind === 'refused') {
          if ([400, 404, 422].includes(err.httpStatus ?? 0)) return false;
          throw new ProviderError('unavailable', err.message, err.httpStatus);
        }
        throw err;
      }
    },

    async assignDedicatedAccount(input) {
      await call('POST', '/dedicated_account/assign', {
        email: input.email,
        first_name: input.firstName,
        last_name: input.lastName,
        phone: input.phone,
        preferred_bank: opts.preferredBank ?? 'wema-bank',
        country: 'NG',
      });
      return { status: 'pending' as const };
    },

    async deactivateDedicatedAccount(input) {
      // DELETE /dedicated_account/:dedicated_account_id: the account stops receiving transfers
      await call('DELETE', `/dedicated_account/${encodeURIComponent(input.providerAccountId)}`);
    },

    async resolveAccount(input) {
      const q = new URLSearchParams({ account_number: input.accountNumber, bank_code: input.bankCode });
      try {
        const data = await call<{ account_name: string }>('GET', `/bank/resolve?${q}`);
        return { accountName: data.account_name };
      } catch (err) {
        // Paystack answers 422 (or 400/404) when the number does not exist at that bank. Any other
        // refusal (a bad key: 401) says nothing about the account: treat it as no answer.
        if (err instanceof ProviderError && err.kind === 'refused') {
          if ([400, 404, 422].includes(err.httpStatus ?? 0)) return null;
          throw new ProviderError('unavailable', err.message, err.httpStatus);
        }
        throw err;
      }
    },

    async createTransferRecipient(input) {
      const data = await call<{ recipient_code: string }>('POST', '/transferrecipient', {
        type: 'nuban',
        name: input.name,
        account_number: input.accountNumber,
        bank_code: input.bankCode,
        currency: 'NGN',
      });
      return { recipientCode: data.recipient_code };
    },

    async initiateTransfer(input) {
      const data = await call<{ transfer_code: string; status: string }>('POST', '/transfer', {
        source: 'balance',
        amount: input.amountKobo,
        recipient: input.recipientCode,
        reference: input.reference,
        reason: input.reason,
        currency: 'NGN',
      });
      return { transferCode: data.transfer_code, status: data.status };
    },

    async verifyCharge(reference) {
      try {
        const data = await call<
          { status: string; amount: number | string; currency?: string | null; id: number | string }
        >(
          'GET',
          `/transaction/verify/${encodeURIComponent(reference)}`,
        );
        return {
          status: String(data.status),
          amountKobo: Number(data.amount),
          currency: typeof data.currency === 'string' && data.currency.length > 0 ? data.currency.toUpperCase() : null,
          chargeId: String(data.id),
        };
      } catch (err) {
        // 400/404: Paystack has no transaction with that reference
        if (err instanceof ProviderError && err.kind === 'refused' && [400, 404].includes(err.httpStatus ?? 0)) {
          return null;
        }
        throw err;
      }
    },

    async verifyTransfer(reference) {
      try {
        const data = await call<{ status: string; transfer_code?: string }>(
          'GET',
          `/transfer/verify/${encodeURIComponent(reference)}`,
        );
        return { status: data.status, transferCode: data.transfer_code ?? null };
      } catch (err) {
        if (err instanceof ProviderError && err.kind === 'refused' && [400, 404].includes(err.httpStatus ?? 0)) {
          return null;
        }
        throw err;
      }
    },

    async refund(input) {
      const data = await call<PaystackRefund>('POST', '/refund', {
        transaction: input.chargeReference,
        amount: input.amountKobo,
        currency: 'NGN',
        merchant_note: input.note,
      });
      return refundAnswer(data);
    },

    async findRefund(input) {
      // the refunds of one transaction (Paystack's id for it when we have it, else our reference)
      const q = new URLSearchParams({ transaction: input.chargeId ?? input.chargeReference, currency: 'NGN' });
      const data = await call<PaystackRefund[]>('GET', `/refund?${q}`);
      const ours = (Array.isArray(data) ? data : []).filter((r) => {
        const t = r.transaction;
        if (t === undefined || t === null) return true;
        if (typeof t === 'object') {
          return t.reference === input.chargeReference || (input.chargeId !== null && String(t.id) === input.chargeId);
        }
        // a bare id (the list's shape): the query named the transaction already
        return input.chargeId === null || String(t) === input.chargeId || String(t) === input.chargeReference;
      });
      // one refund is ever asked per charge; the latest answer wins if the provider shows more
      const latest = ours[ours.length - 1];
      return latest ? refundAnswer(latest) : null;
    },
  };
}
