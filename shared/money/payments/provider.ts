// The payments provider as the rest of the code sees it. `paystack` speaks Paystack's HTTP API;
// `sandbox` answers locally and delivers signed webhooks back to us, for work without keys.

/** The ways a hosted checkout may offer to pay (Paystack's `channels`). */
export type CheckoutChannel = 'card' | 'bank_transfer' | 'ussd';

export interface ChargeInit {
  reference: string;
  amountKobo: number;
  email: string;
  metadata: Record<string, unknown>;
  callbackUrl?: string;
  /** the ways the checkout page offers; the provider's own choice when left out */
  channels?: readonly CheckoutChannel[];
}

export interface ChargeAuthorization extends Omit<ChargeInit, 'callbackUrl' | 'channels'> {
  authorizationCode: string;
}

export type ChargeStatus = 'success' | 'failed' | 'pending';

/** The provider's own answer about a charge (Paystack: GET /transaction/verify/:reference). */
export interface ChargeVerification {
  status: string;
  amountKobo: number;
  currency: string | null;
  chargeId: string;
}

/** The currency every charge of ours is made in. */
const CHARGE_CURRENCY = 'NGN';

/**
 * Why a charge's figures (from an event or from the provider's verify) differ from what its
 * transaction expects, in kobo and naira; null when they agree. The one rule for "value only for
 * what the provider confirms", used by webhook-payments and by reconciliation.
 */
export function chargeMismatch(
  amountKobo: number | null,
  currency: string | null,
  expected: number,
): 'currency_mismatch' | 'amount_mismatch' | null {
  if (currency !== CHARGE_CURRENCY) return 'currency_mismatch';
  return amountKobo !== expected ? 'amount_mismatch' : null;
}

export interface PaymentsProvider {
  readonly name: 'paystack' | 'sandbox';
  initializeCharge(input: ChargeInit): Promise<{ authorizationUrl: string; accessCode: string; reference: string }>;
  chargeAuthorization(input: ChargeAuthorization): Promise<{ status: ChargeStatus; message: string }>;
  /**
   * Whether the provider confirms `authorizationCode` as a reusable card authorization of the
   * customer `email`, good for `amountKobo` (Paystack: POST /transaction/check_authorization).
   * false: the provider answered no; a ProviderError 'unavailable' when it gave no usable answer.
   */
  checkAuthorization(input: { authorizationCode: string; email: string; amountKobo: number }): Promise<boolean>;
  assignDedicatedAccount(input: {
    email: string;
    firstName: string;
    lastName: string;
    phone: string;
  }): Promise<{ status: 'pending' }>;
  /**
   * Deactivates a dedicated account (Paystack: DELETE /dedicated_account/:id): a deleted user's, so
   * that banks stop accepting transfers into it. A ProviderError when the provider refused or gave no answer.
   */
  deactivateDedicatedAccount(input: { providerAccountId: string }): Promise<void>;
  resolveAccount(input: { accountNumber: string; bankCode: string }): Promise<{ accountName: string } | null>;
  createTransferRecipient(
    input: { name: string; accountNumber: string; bankCode: string },
  ): Promise<{ recipientCode: string }>;
  initiateTransfer(input: {
    reference: string;
    amountKobo: number;
    recipientCode: string;
    reason: string;
  }): Promise<{ transferCode: string; status: string }>;
  /**
   * What the provider knows of a charge by our reference; null when it has none. `amountKobo` is
   * what was charged (minor units of `currency`; null when the provider did not say).
   */
  verifyCharge(reference: string): Promise<ChargeVerification | null>;
  /** What the provider knows of a transfer by our reference; null when it has none. */
  verifyTransfer(reference: string): Promise<{ status: string; transferCode: string | null } | null>;
  /**
   * Refunds `amountKobo` of a charge, by the charge's reference, to the card or account it came
   * from (Paystack: POST /refund). The provider keeps no reference of ours for it: at most one
   * refund is ever asked per charge, and its webhooks (refund.*) name the charge.
   */
  refund(input: { chargeReference: string; amountKobo: number; note: string }): Promise<RefundAnswer>;
  /**
   * The refund of a charge the provider knows, by the charge's reference (and its id at the
   * provider, when known); null when it has none (Paystack: GET /refund?transaction=...).
   */
  findRefund(input: { chargeReference: string; chargeId: string | null }): Promise<RefundAnswer | null>;
}

/** A refund as the provider reports it: `status` pending, processing, processed or failed. */
export interface RefundAnswer {
  refundId: string;
  status: string;
  amountKobo: number | null;
  currency: string | null;
}

/**
 * A provider call that did not succeed. `refused`: the provider answered and said no (the
 * operation did not happen). `unavailable`: no usable answer (timeout, network, 5xx): the
 * outcome is unknown and must be settled by a webhook or a later check, never by a retry with
 * a new reference.
 */
export class ProviderError extends Error {
  constructor(
    readonly kind: 'refused' | 'unavailable',
    message: string,
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}
