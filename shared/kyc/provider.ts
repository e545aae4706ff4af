// The KYC and identity-check providers as the rest of the code sees them (docs/kyc.md). Both answer asynchronously: a result arrives later as a webhook (webhook-kyc,
// webhook-identity), which is the only way a check passes or fails. Failures of a call are the
// payments provider's ProviderError: `refused` (the provider said no; nothing started) or
// `unavailable` (no usable answer; try again later).
export { ProviderError } from '../money/payments/provider.ts';

/** The identity provider's names of our identity check types (the spec's webhook-identity table). */
export type VerificationType = 'NIN' | 'BVN' | 'CAC' | 'TIN' | 'BANK_ACCOUNT' | 'DIRECTOR';

export interface KycProvider {
  readonly name: 'sandbox' | 'sumsub';
  /**
   * An SDK access token for the user's applicant at a level (Sumsub: POST
   * /resources/accessTokens/sdk with {userId, levelName, ttlInSecs}). The user id becomes the
   * applicant's externalUserId, which webhook-kyc receives back. The sandbox also schedules the
   * review's outcome: a signed applicantReviewed webhook to webhook-kyc.
   */
  accessToken(input: { userId: string; levelName: string; ttlSeconds: number }): Promise<{ token: string }>;
}

export interface IdentityRequest {
  /** Ours (identity-verify's answer), echoed by the provider in its webhook. */
  reference: string;
  verificationType: VerificationType;
  /** The number to check, whole: sent to the provider only, never stored or logged. */
  idNumber: string;
  /** BANK_ACCOUNT only: the bank's code (the account number is idNumber). */
  bankCode?: string;
  /** DIRECTOR only: the company's registration number (idNumber is the director's NIN or BVN). */
  rcNumber?: string;
  /**
   * NIN and BVN only: the account holder as the profile names them, and the phone (E.164). The
   * provider returns the names it found for the number, which must be these (shared/kyc/names.ts).
   */
  holder?: IdentityHolder;
}

/** Who the account holder says they are (their profile's names and the account's phone). */
export interface IdentityHolder {
  firstName: string;
  lastName: string;
  phone: string;
}

export interface IdentityProvider {
  readonly name: 'sandbox' | 'http';
  /** Asks for a check; its result arrives at webhook-identity with the same reference. */
  requestCheck(input: IdentityRequest): Promise<void>;
}
