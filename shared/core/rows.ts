// Rows read to answer with a response schema. The schema (shared/<area>/schema.ts) is the one
// declaration of such a row: its keys are the columns a service selects, z.input of it is the row's
// type, and the few fields the table stores otherwise (kobo amounts as bigint text, a message the
// answer writes out as text) or keeps beside the answer are named where the row is read.
// Column names come from the schemas' keys, never from a request, so they are written into SQL as
// they are.

/** A response schema, as far as rows need one: a z.strictObject's shape. */
interface Shaped<S> {
  shape: S;
}

/**
 * The columns to select for a response: the schema's keys in its order, less those the answer
 * computes from other columns, plus the stored columns the answer is computed from.
 */
export function columnsOf<
  S extends Record<string, unknown>,
  C extends keyof S & string = never,
  X extends string = never,
>(
  schema: Shaped<S>,
  opts: { computed?: readonly C[]; stored?: readonly X[] } = {},
): (Exclude<keyof S & string, C> | X)[] {
  const computed: readonly string[] = opts.computed ?? [];
  return [
    ...(Object.keys(schema.shape).filter((k) => !computed.includes(k)) as Exclude<keyof S & string, C>[]),
    ...(opts.stored ?? []),
  ];
}

/**
 * Columns as a select list (constant identifiers, each qualified by `alias` when given; a column
 * of `casts` read as that type under its own name).
 */
export const selectList = (
  columns: readonly string[],
  opts: { alias?: string; casts?: Readonly<Record<string, string>> } = {},
): string =>
  columns.map((c) => {
    const col = opts.alias ? `${opts.alias}.${c}` : c;
    const cast = opts.casts?.[c];
    return cast ? `${col}::${cast} as ${c}` : col;
  }).join(', ');

/**
 * The type of a row read for a response R: R's fields less the Computed ones, with Stored (the
 * columns stored otherwise than answered, or not answered at all) over them.
 */
export type RowOf<R, Computed extends PropertyKey = never, Stored extends object = Record<never, never>> =
  & Omit<R, Computed | keyof Stored>
  & Stored;

/**
 * The answer for a row: the schema's fields, in its order, taken from `fields` (the row with its
 * computed fields set); the stored columns beside them are left out.
 */
export function answerOf<S extends Record<string, unknown>, F extends { [K in keyof S]: unknown }>(
  schema: Shaped<S>,
  fields: F,
): Pick<F, keyof S> {
  return Object.fromEntries(Object.keys(schema.shape).map((k) => [k, fields[k as keyof S]])) as Pick<F, keyof S>;
}
