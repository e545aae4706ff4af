// Structured one-line JSON logs. Callers pass identifiers, never secrets, tokens or codes.
type Fields = Record<string, unknown>;

/** The keys every line has, which no caller's field may overwrite. */
const RESERVED = new Set(['level', 'event', 'time']);

/**
 * One line: level, event and time first, then the caller's fields. A field named like one of the
 * three (a provider's `level` passed along from a webhook) is kept as `field_<name>`, never
 * written over them, so a line's level is always the one it was logged at.
 */
export function logLine(level: 'info' | 'warn' | 'error', event: string, fields: Fields, time = new Date()): string {
  const entries: [string, unknown][] = [['level', level], ['event', event], ['time', time.toISOString()]];
  const taken = new Set([...RESERVED, ...Object.keys(fields)]);
  for (const [key, value] of Object.entries(fields)) {
    let name = key;
    if (RESERVED.has(key)) {
      do name = `field_${name}`; while (taken.has(name));
      taken.add(name);
    }
    entries.push([name, value]);
  }
  // fromEntries defines each key as the object's own, `__proto__` included
  return JSON.stringify(Object.fromEntries(entries));
}

function write(level: 'info' | 'warn' | 'error', event: string, fields: Fields) {
  const line = logLine(level, event, fields);
  if (level === 'error') console.error(line);
  else console.log(line);
}

export const log = {
  info: (event: string, fields: Fields = {}) => write('info', event, fields),
  warn: (event: string, fields: Fields = {}) => write('warn', event, fields),
  error: (event: string, fields: Fields = {}) => write('error', event, fields),
};

/** The message of an unknown thrown value, without stack or connection details. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
