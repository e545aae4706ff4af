// Timestamps as the API answers them: ISO 8601 with up to six decimals ('...T12:00:00.123456Z').
// A JavaScript Date keeps only milliseconds, so cursors are compared here in microseconds.

/** Microseconds since the epoch of an ISO timestamp (Z or an offset, at most 6 decimals). */
export function micros(ts: string): bigint {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:\d{2})$/.exec(ts);
  if (!m) throw new Error(`not an ISO timestamp with at most microseconds: ${ts}`);
  const whole = BigInt(Date.parse(`${m[1]}${m[3]}`)) * 1000n;
  return whole + BigInt((m[2] ?? '').padEnd(6, '0') || '0');
}
