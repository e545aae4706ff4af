import { getConfig } from '../../core/config.ts';
import { paystackProvider } from './paystack.ts';
import type { PaymentsProvider } from './provider.ts';
import { sandboxProvider } from './sandbox.ts';

let provider: PaymentsProvider | undefined;

export function payments(): PaymentsProvider {
  if (!provider) {
    const c = getConfig();
    provider = c.PAYMENTS_PROVIDER === 'paystack'
      ? paystackProvider({
        baseUrl: c.PAYSTACK_BASE_URL,
        secretKey: c.PAYSTACK_SECRET_KEY as string,
        preferredBank: c.PAYSTACK_PREFERRED_BANK,
      })
      : sandboxProvider({
        webhookUrl: c.SANDBOX_WEBHOOK_URL ?? `http://127.0.0.1:${c.PORT}/functions/v1/webhook-payments`,
        secret: c.PAYMENTS_WEBHOOK_SECRET,
        delayMs: c.SANDBOX_WEBHOOK_DELAY_MS,
      });
  }
  return provider;
}

/** The address Paystack knows a user by (users are phone-first; nothing is mailed to it). */
export function customerEmail(userId: string): string {
  return `${userId}@${getConfig().PAYMENTS_EMAIL_DOMAIN}`;
}

export { ProviderError } from './provider.ts';
export type { PaymentsProvider } from './provider.ts';
