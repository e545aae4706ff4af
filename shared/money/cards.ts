// Saved cards (card-add, card-list, card-remove, card-set-default). Writes go through one SQL
// function each (defaults and deduplication are decided under a per-user lock there); reads run as
// the caller under RLS.
import { asService, asUser } from '../core/db.ts';
import type { AuthUser } from '../auth/session.ts';
import { HttpError, notFound } from '../core/http.ts';
import { Reply } from '../core/endpoint.ts';
import type { CardRemovedResponse } from './schema.ts';

interface CardRow {
  id: string;
  last4: string;
  brand: string;
  exp_month: string;
  exp_year: string;
  bank: string | null;
  signature: string;
  is_default: boolean;
  created_at: string;
}

const cardView = (c: CardRow) => ({
  id: c.id,
  last4: c.last4,
  brand: c.brand,
  exp_month: c.exp_month,
  exp_year: c.exp_year,
  bank: c.bank,
  signature: c.signature,
  is_default: c.is_default,
  created_at: c.created_at,
});

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
  const [row] = await asService((tx) =>
    tx<{ card_id: string; created: boolean }[]>`
    select * from private.card_add(${user.id}, ${input.authorization_code}, ${input.last4}, ${input.brand},
                                   ${input.exp_month}, ${input.exp_year}, ${input.bank ?? null}, ${input.signature})`
  );
  const card = await asUser(
    user.claims,
    (tx) => tx<CardRow[]>`select * from public.saved_cards where id = ${row?.card_id ?? null}`,
  );
  if (!card[0]) throw notFound('Card not found');
  // The same card (same signature) again is not a new resource: 200 with the existing card.
  return row?.created ? cardView(card[0]) : new Reply(200, cardView(card[0]));
}

export const cardList = ({ claims }: AuthUser) =>
  asUser(
    claims,
    async (tx) =>
      (await tx<
        CardRow[]
      >`select * from public.saved_cards where user_id = (select auth.uid()) order by is_default desc, created_at desc, id`)
        .map(cardView),
  );

export async function cardRemove(user: AuthUser, cardId: string): Promise<CardRemovedResponse> {
  const [row] = await asService((tx) => tx<{ ok: boolean }[]>`select private.card_remove(${user.id}, ${cardId}) as ok`);
  if (!row?.ok) {
    throw new HttpError(404, 'Card not found', [{ field: 'card_id', message: 'is not one of your saved cards' }]);
  }
  return { removed: true, card_id: cardId };
}

export async function cardSetDefault(user: AuthUser, cardId: string) {
  const [row] = await asService((tx) =>
    tx<{ ok: boolean }[]>`select private.card_set_default(${user.id}, ${cardId}) as ok`
  );
  if (!row?.ok) {
    throw new HttpError(404, 'Card not found', [{ field: 'card_id', message: 'is not one of your saved cards' }]);
  }
  const [card] = await asUser(
    user.claims,
    (tx) => tx<CardRow[]>`select * from public.saved_cards where id = ${cardId}`,
  );
  return cardView(card as CardRow);
}
