// Saved cards (card-add, card-list, card-remove, card-set-default). Writes go through one SQL
// function each (defaults and deduplication are decided under a per-user lock there); reads run as
// the caller under RLS.
import { asService, asUser } from '../core/db.ts';
import type { AuthUser } from '../auth/session.ts';
import { Reply } from '../core/endpoint.ts';
import { type CardRemovedResponse, type CardResponse, cardResponse } from './schema.ts';
import { columnsOf } from '../core/rows.ts';
import { CARD_AUTHORIZATION_INVALID, CARD_NOT_FOUND } from './refusals.ts';
import { providerUnavailable } from '../core/refusals.ts';
import { customerEmail, payments, ProviderError } from './payments/index.ts';

/** A saved card as answered: exactly the response's columns (never the authorization code). */
const CARD_COLUMNS = columnsOf(cardResponse);

/**
 * The amount an authorization is checked for (kobo): NGN 100, the smallest top-up a saved card is
 * charged for. Paystack holds that much on the card for the check, so it is kept small.
 */
export const CARD_CHECK_AMOUNT_KOBO = 100_00;

/**
 * The provider's word that `authorizationCode` is a reusable card of this user's customer: a 409
 * naming authorization_code when it says no, a 503 when it gives no answer. Nothing is saved before.
 */
async function confirmAuthorization(userId: string, authorizationCode: string): Promise<void> {
  let confirmed: boolean;
  try {
    confirmed = await payments().checkAuthorization({
      authorizationCode,
      email: customerEmail(userId),
      amountKobo: CARD_CHECK_AMOUNT_KOBO,
    });
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    throw providerUnavailable('The payment provider is unavailable; the card was not saved, try again shortly');
  }
  if (!confirmed) throw CARD_AUTHORIZATION_INVALID.error({ field: 'authorization_code' });
}

export async function cardAdd(
  user: AuthUser,
  input: {
    authorization_code: string;
    last4: string;
    brand: string;
    exp_month: string;
    exp_year: string;
    signature: string;
    bank?: string;
  },
) {
  // below the identity floor the 403 comes first, and the provider is not asked
  await asService((tx) => tx`select private.kyc_floor_check(${user.id}, 'card', 'kyc_tier')`);
  await confirmAuthorization(user.id, input.authorization_code);
  const [row] = await asService((tx) =>
    tx<{ card_id: string; created: boolean }[]>`
    select * from private.card_add(${user.id}, ${input.authorization_code}, ${input.last4}, ${input.brand},
                                   ${input.exp_month}, ${input.exp_year}, ${input.bank ?? null}, ${input.signature})`
  );
  const card = await asUser(
    user.claims,
    (tx) => tx<CardResponse[]>`select ${tx(CARD_COLUMNS)} from public.saved_cards where id = ${row?.card_id ?? null}`,
  );
  // the card was saved in the same request: not finding it is a bug
  if (!card[0]) throw new Error(`card ${row?.card_id} saved but not found`);
  // The same card (same signature) again is not a new resource: 200 with the existing card.
  return row?.created ? card[0] : new Reply(200, card[0]);
}

export const cardList = ({ claims }: AuthUser) =>
  asUser(
    claims,
    async (tx) =>
      tx<CardResponse[]>`
        select ${tx(CARD_COLUMNS)} from public.saved_cards where user_id = (select auth.uid())
         order by is_default desc, created_at desc, id`,
  );

export async function cardRemove(user: AuthUser, cardId: string): Promise<CardRemovedResponse> {
  const [row] = await asService((tx) => tx<{ ok: boolean }[]>`select private.card_remove(${user.id}, ${cardId}) as ok`);
  if (!row?.ok) {
    throw CARD_NOT_FOUND.error({ field: 'card_id', card_id: cardId });
  }
  return { removed: true, card_id: cardId };
}

export async function cardSetDefault(user: AuthUser, cardId: string) {
  const [row] = await asService((tx) =>
    tx<{ ok: boolean }[]>`select private.card_set_default(${user.id}, ${cardId}) as ok`
  );
  if (!row?.ok) {
    throw CARD_NOT_FOUND.error({ field: 'card_id', card_id: cardId });
  }
  const [card] = await asUser(
    user.claims,
    (tx) => tx<CardResponse[]>`select ${tx(CARD_COLUMNS)} from public.saved_cards where id = ${cardId}`,
  );
  return card as CardResponse;
}
