// Building blocks of the response schemas: the `data` of every success envelope is described by
// a z.strictObject (an unknown key is a mismatch) made of these. Response schemas use no
// transforms or defaults, so what a handler returns (z.input) is exactly what a client parses
// (z.output); docs/adding-a-function.md explains the choice.
import { z } from 'zod';

export const uuid = z.uuid();

/** ISO 8601 with its microseconds, as shared/core/db.ts renders timestamptz ('...T12:00:00.123456Z'). */
export const timestamp = z.iso.datetime({ offset: true });

/** A calendar date, YYYY-MM-DD. */
export const isoDate = z.iso.date();

/** An amount in naira (kobo / 100), never negative in an answer. */
export const naira = z.number().nonnegative();

/** Every amount the service answers with is in naira. */
export const currency = z.literal('NGN');

/** A stored phone number: E.164, +234 and 10 digits. */
export const e164Phone = z.string().regex(/^\+234[0-9]{10}$/);

/** A whole number of items or seconds. */
export const count = z.int().nonnegative();
