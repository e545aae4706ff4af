// Answers Postgres wrote as JSON text (the functions of the `reads` schema,
// supabase/migrations/20261127120000_reads_built_in_postgres.sql): the endpoint puts the text into
// the envelope as it is, without parsing it and writing it again (docs/performance.md, "Reads
// built by Postgres").
//
// Where an answer holds what only TypeScript writes (a sentence from shared/messages/texts.ts, a
// value read apart, a figure converted here), Postgres writes a marker: one control character per
// kind, chr(1) for the first kind, chr(2) for the second, ... JSON text never holds a raw control
// character (to_json and JSON.stringify escape every one), so a marker is never part of a value.
// The values behind each kind's markers come in the markers' order; `fillSlots` puts each one's
// text in its marker's place.

/** The `data` of an answer as JSON text, of the shape T (what JSON.parse of it gives). */
export class JsonText<T = unknown> {
  /** The type of the value the text holds: for the handler's return type, never set. */
  declare readonly value?: T;
  constructor(readonly text: string) {}
  /** As a value, for whatever serialises the answer as a whole (a stored Idempotency-Key answer). */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** What a marker of one kind becomes: JSON text (a value, or key/value pairs where the marker stands for them). */
export type SlotFiller = (value: unknown) => string;

// markers are chr(1) to chr(7); a kind is its character's code minus one
// deno-lint-ignore no-control-regex -- the control characters are the markers
const MARKER = /[\x01-\x07]/g;

/**
 * The text with every marker replaced: kind k's n-th marker by fillers[k] of values[k][n]. A count
 * of markers that differs from the values given is a bug between the SQL and its handler: thrown.
 */
export function fillSlots(
  text: string,
  values: readonly (readonly unknown[])[],
  fillers: readonly SlotFiller[],
): string {
  const next = values.map(() => 0);
  const filled = text.replace(MARKER, (marker) => {
    const kind = marker.charCodeAt(0) - 1;
    const list = values[kind];
    const fill = fillers[kind];
    if (!list || !fill || next[kind]! >= list.length) throw new Error(`a marker of kind ${kind + 1} has no value`);
    return fill(list[next[kind]!++]);
  });
  values.forEach((list, kind) => {
    if (next[kind] !== list.length) {
      throw new Error(`kind ${kind + 1}: ${list.length} values for ${next[kind]} markers`);
    }
  });
  return filled;
}

/** The text Postgres wrote with its markers filled: `slots` is the JSON array of each kind's values. */
export function filledJson<T>(body: string, slots: string | null, fillers: readonly SlotFiller[]): JsonText<T> {
  return new JsonText<T>(slots === null ? body : fillSlots(body, JSON.parse(slots) as unknown[][], fillers));
}
