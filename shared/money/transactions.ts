// The spec's Transaction, as users see it (always read as the caller: RLS applies). A row
// records its description as a message (kind and params), written out when it is read.
import type { AuthUser } from '../auth/session.ts';
import { readAsUser, sqlLiteral, sqlText, type Tx } from '../core/db.ts';
import { type TransactionListResponse, type TransactionResponse, transactionResponse } from './schema.ts';
import { filledJson, type JsonText, type SlotFiller } from '../core/json-text.ts';
import { answerOf, columnsOf, type RowOf, selectList } from '../core/rows.ts';
import { renderTransaction } from '../messages/texts.ts';
import { type TransactionMessage } from '../messages/catalog.ts';
import { toNaira } from '../core/money.ts';

/**
 * A transaction as stored: the answer's fields, with the message its description is written from
 * and the amount in kobo.
 */
export type TransactionRow = RowOf<
  TransactionResponse,
  'description',
  { message: TransactionMessage | null; amount: string | number }
>;

const TRANSACTION_COLUMNS = columnsOf(transactionResponse, { computed: ['description'], stored: ['message'] });
const TRANSACTION_SELECT = selectList(TRANSACTION_COLUMNS);

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

export const transactionView = (t: TransactionRow): TransactionResponse =>
  answerOf(transactionResponse, {
    ...t,
    description: renderTransaction(t.message),
    amount: toNaira(t.amount),
    metadata: metadataInNaira(t.metadata) as Record<string, unknown>,
  });

export async function readTransaction(tx: Tx, id: string) {
  const [row] = await tx<TransactionRow[]>`select ${tx(TRANSACTION_COLUMNS)} from public.transactions where id = ${id}`;
  return row ? transactionView(row) : null;
}

/** What the page's markers are filled with: the description from its message, the metadata in naira. */
const TRANSACTION_SLOTS: SlotFiller[] = [
  (message) => JSON.stringify(renderTransaction(message as TransactionMessage | null)),
  (metadata) => JSON.stringify(metadataInNaira(metadata)),
];

/** A page of the caller's transactions, newest first, and its cursor, as Postgres writes them (reads.transaction_list). */
export async function transactionList(
  { claims }: AuthUser,
  q: { category?: string; escrow_id?: string; status?: string; limit: number; before?: string },
): Promise<JsonText<TransactionListResponse>> {
  const args = [
    `${sqlLiteral(q.category ?? null)}::public.transaction_category`,
    `${sqlLiteral(q.escrow_id ?? null)}::uuid`,
    `${sqlLiteral(q.status ?? null)}::public.transaction_status`,
    `${sqlLiteral(q.before ?? null)}::timestamptz`,
    sqlLiteral(q.limit),
  ];
  const [[row]] = await readAsUser(claims, (tx) => [
    sqlText<{ body: string; slots: string }[]>(
      tx,
      `select body, slots from reads.transaction_list(${args.join(', ')})`,
    ),
  ]);
  const { body, slots } = row as { body: string; slots: string };
  return filledJson(body, slots, TRANSACTION_SLOTS);
}

/**
 * The same page built here from the rows: what the test of the reads Postgres builds
 * (tests/integration/reads-built.test.ts) compares transactionList's text with.
 */
export async function transactionListAsObjects(
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
      `select ${TRANSACTION_SELECT} from public.transactions where user_id = (select auth.uid())${filters}
        order by created_at desc limit ${sqlLiteral(q.limit)}`,
    ),
  ]);
  const data = rows.map(transactionView);
  return { data, next_cursor: data.length > 0 ? (data[data.length - 1] as { created_at: string }).created_at : null };
}
