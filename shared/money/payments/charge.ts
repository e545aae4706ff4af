// Starting a card charge, the same way for every purpose (wallet top-up, escrow funding): our
// pending transaction's id is the reference; a new card goes through the provider's checkout, a
// saved card through its stored authorization. The outcome always arrives as charge.success
// (or reconciliation); what is decided here is only what the customer is told now.
import { asService } from '../../core/db.ts';
import { providerUnavailable } from '../../core/refusals.ts';
import { CARD_DECLINED, CARD_NOT_FOUND, CHARGE_REFUSED } from '../refusals.ts';
import { errorMessage, log } from '../../core/log.ts';
import { customerEmail, payments, ProviderError } from './index.ts';
import type { CheckoutChannel } from './provider.ts';

/** The stored authorization of one of the user's saved cards (404 naming card_id otherwise). */
export async function savedCardAuthorization(userId: string, cardId: string): Promise<string> {
  const [card] = await asService((tx) =>
    tx<{ authorization_code: string }[]>`
    select ca.authorization_code from public.saved_cards c join private.card_authorizations ca on ca.card_id = c.id
     where c.id = ${cardId} and c.user_id = ${userId}`
  );
  if (!card) {
    throw CARD_NOT_FOUND.error({ field: 'card_id', card_id: cardId });
  }
  return card.authorization_code;
}

export async function startCharge(opts: {
  reference: string;
  amountKobo: number;
  userId: string;
  metadata: Record<string, unknown>;
  authorizationCode?: string;
  callbackUrl?: string;
  /** the ways the checkout page offers (a new card's checkout only) */
  channels?: readonly CheckoutChannel[];
  /** marks the pending transaction failed (nothing was or can be charged) */
  markFailed: (reason: string) => Promise<unknown>;
}): Promise<{ authorization_url: string | null; access_code?: string }> {
  const provider = payments();
  const common = {
    reference: opts.reference,
    amountKobo: opts.amountKobo,
    email: customerEmail(opts.userId),
    metadata: opts.metadata,
  };
  try {
    if (opts.authorizationCode) {
      const r = await provider.chargeAuthorization({ ...common, authorizationCode: opts.authorizationCode });
      if (r.status === 'failed') {
        await opts.markFailed(r.message);
        throw CARD_DECLINED.error({ reason: r.message });
      }
      // Even a synchronous success is completed by the charge.success webhook, the one path.
      return { authorization_url: null };
    }
    const r = await provider.initializeCharge({ ...common, callbackUrl: opts.callbackUrl, channels: opts.channels });
    return { authorization_url: r.authorizationUrl, access_code: r.accessCode };
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (err.kind === 'refused') {
      await opts.markFailed(err.message);
      throw CHARGE_REFUSED.error({ reason: err.message });
    }
    if (!opts.authorizationCode) {
      // Nothing can have been charged before the customer visits a payment page we never got.
      await opts.markFailed('payment provider unavailable');
      throw providerUnavailable('The payment provider is unavailable; nothing was charged, try again shortly');
    }
    // A saved-card charge whose answer was lost may still have gone through: it stays pending
    // and the charge.success webhook (or reconciliation) settles it.
    log.warn('charge.outcome_unknown', {
      transaction_id: opts.reference,
      kind: opts.metadata.kind,
      error: errorMessage(err),
    });
    return { authorization_url: null };
  }
}
