// The KYC and identity providers this deployment uses (KYC_PROVIDER, IDENTITY_PROVIDER), made
// once from the configuration, and the mapping between tiers, Sumsub level names and check types.
import { getConfig } from '../core/config.ts';
import { httpIdentityProvider } from './identity-http.ts';
import type { IdentityProvider, KycProvider } from './provider.ts';
import { sandboxIdentityProvider, sandboxKycProvider } from './sandbox.ts';
import { sumsubProvider } from './sumsub.ts';

let kyc: KycProvider | undefined;
let identity: IdentityProvider | undefined;

/**
 * The sandboxes deliver to this server's own functions: next to SANDBOX_WEBHOOK_URL (webhook-payments)
 * when it is set, as on a staging deployment, else on this machine's PORT.
 */
const localFunction = (name: string) => {
  const payments = getConfig().SANDBOX_WEBHOOK_URL;
  return payments ? new URL(name, payments).toString() : `http://127.0.0.1:${getConfig().PORT}/functions/v1/${name}`;
};

export function kycProvider(): KycProvider {
  if (!kyc) {
    const c = getConfig();
    kyc = c.KYC_PROVIDER === 'sumsub'
      ? sumsubProvider({
        baseUrl: c.SUMSUB_BASE_URL,
        appToken: c.SUMSUB_APP_TOKEN as string,
        secretKey: c.SUMSUB_SECRET_KEY as string,
      })
      : sandboxKycProvider({
        webhookUrl: localFunction('webhook-kyc'),
        secret: c.KYC_WEBHOOK_SECRET,
        delayMs: c.SANDBOX_WEBHOOK_DELAY_MS,
      });
  }
  return kyc;
}

export function identityProvider(): IdentityProvider {
  if (!identity) {
    const c = getConfig();
    identity = c.IDENTITY_PROVIDER === 'http'
      ? httpIdentityProvider({ baseUrl: c.IDENTITY_BASE_URL as string, apiKey: c.IDENTITY_API_KEY as string })
      : sandboxIdentityProvider({
        webhookUrl: localFunction('webhook-identity'),
        token: c.IDENTITY_WEBHOOK_SECRET,
        delayMs: c.SANDBOX_WEBHOOK_DELAY_MS,
      });
  }
  return identity;
}

/** The KYC provider's level name for tier 1 or 2 (KYC_LEVEL_TIER1 / KYC_LEVEL_TIER2). */
export function levelName(level: 1 | 2): string {
  const c = getConfig();
  return level === 1 ? c.KYC_LEVEL_TIER1 : c.KYC_LEVEL_TIER2;
}

/** The check a level's review decides: tier 1's level is kyc_basic, tier 2's kyc_address; others none. */
export function checkTypeOfLevel(name: string): 'kyc_basic' | 'kyc_address' | null {
  const c = getConfig();
  if (name === c.KYC_LEVEL_TIER1) return 'kyc_basic';
  if (name === c.KYC_LEVEL_TIER2) return 'kyc_address';
  return null;
}

export { FINAL_REJECT_ERROR_CODE, isFinalRejection } from './sumsub.ts';
export { ProviderError } from './provider.ts';
export type { IdentityHolder, IdentityProvider, IdentityRequest, KycProvider, VerificationType } from './provider.ts';
