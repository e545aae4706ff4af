// The spec's Transaction, as users see it (always read as the caller: RLS applies). A row
// records its description as a message (kind and params), written out when it is read.
import type { AuthUser } from '../auth/session.ts';
import { readAsUser, sqlLiteral, sqlText, type Tx } from '../core/db.ts';
import type { TransactionCategory, TransactionDirection, TransactionStatus, TransactionType } from './enums.ts';
import { renderTransaction } from '../messages/texts.ts';
import { type TransactionMessage } from '../messages/catalog.ts';
import { toNaira } from '../core/money.ts';

export interface TransactionRow {
  id: string;
  type: TransactionType;
  category: TransactionCategory;
  message: TransactionMessage | null;
  amount: string | number;
  currency: 'NGN';
  direction: TransactionDirection;
  status: TransactionStatus;
  escrow_id: string | null;
  milestone_id: string | null;
  provider: string;
  provider_charge_id: string | null;
  provider_transfer_id: string | null;
  provider_refund_id: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  completed_at: string | null;
}

/**
 * Metadata keys whose values the database keeps in kobo (the escrow's amount and fees a funding
 * carries, what a release or refund moved, a flagged charge's expected and received amounts):
 * answers give them in naira, like `amount`, so every figure of an answer is in one unit.
 */
const KOBO_KEY = /^(amount|vat|fee|total_charge|shortfall|[a-z_]+_amount|[a-z_]+_fee)$/;

/** The metadata as the API shows it: kobo figures (integers under the keys above) in naira. */
export function metadataInNaira(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => metadataInNaira(v));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, metadataInNaira(v, k)]));
  }
  return typeof value === 'number' && Number.isInteger(value) && KOBO_KEY.test(key) ? toNaira(value) : value;
}

export function transactionView(t: TransactionRow) {
  return {
    id: t.id,
    type: t.type,
    category: t.category,
    description: renderTransaction(t.message),
    amount: toNaira(t.amount),
    currency: t.currency,
    direction: t.direction,
    status: t.status,
    escrow_id: t.escrow_id,
    milestone_id: t.milestone_id,
    provider: t.provider,
    provider_charge_id: t.provider_charge_id,
    provider_transfer_id: t.provider_transfer_id,
    provider_refund_id: t.provider_refund_id,
    metadata: metadataInNaira(t.metadata) as Record<string, unknown>,
    created_at: t.created_at,
    completed_at: t.completed_at,
  };
}

export async function readTransaction(tx: Tx, id: string) {
  const [row] = await tx<TransactionRow[]>`select * from public.transactions where id = ${id}`;
  return row ? transactionView(row) : null;
}

export async function transactionList(
  { claims }: AuthUser,
  q: { category?: string; escrow_id?: string; status?: string; limit: number; before?: string },
) {
  // composed as text (every value a literal): the read goes out as one message (shared/core/db.ts)
  const filters = [
    q.category ? ` and category = ${sqlLiteral(q.category)}::public.transaction_category` : '',
    q.escrow_id ? ` and escrow_id = ${sqlLiteral(q.escrow_id)}::uuid` : '',
    q.status ? ` and status = ${sqlLiteral(q.status)}::public.transaction_status` : '',
    q.before ? ` and created_at < ${sqlLiteral(q.before)}::timestamptz` : '',
  ].join('');
  const [rows] = await readAsUser(claims, (tx) => [
    sqlText<TransactionRow[]>(
      tx,
      `select * from public.transactions where user_id = (select auth.uid())${filters}
        order by created_at desc limit ${sqlLiteral(q.limit)}`,
    ),
  ]);
  const data = rows.map(transactionView);
  return { data, next_cursor: data.length > 0 ? (data[data.length - 1] as { created_at: string }).created_at : null };
}
