// docs/security.md, "Input, headers and the local server": a log line's level, event and time are
// the logger's, whatever fields the caller passes (a Sumsub webhook's level name once overwrote the
// line's `level`, so an info line could read as an error, or an error as info).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { log, logLine } from '../../shared/core/log.ts';

afterEach(() => vi.restoreAllMocks());

/** The lines written to stdout (info, warn) and stderr (error) while `run` runs, parsed. */
function captured(run: () => void): Record<string, unknown>[] {
  const lines: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((l: string) => void lines.push(l));
  vi.spyOn(console, 'error').mockImplementation((l: string) => void lines.push(l));
  run();
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('structured log lines', () => {
  it("keeps level, event and time the logger's, and a caller's field of the same name under field_<name>", () => {
    const [info, error] = captured(() => {
      log.info('webhook.kyc', { level: 'error', event: 'forged', time: '1970-01-01T00:00:00Z', outcome: 'ok' });
      log.error('request.failed', { level: 'info' });
    });
    expect(info).toMatchObject({
      level: 'info',
      event: 'webhook.kyc',
      field_level: 'error',
      field_event: 'forged',
      field_time: '1970-01-01T00:00:00Z',
      outcome: 'ok',
    });
    expect(info?.time).not.toBe('1970-01-01T00:00:00Z');
    expect(Number.isNaN(Date.parse(String(info?.time)))).toBe(false);
    expect(error).toMatchObject({ level: 'error', event: 'request.failed', field_level: 'info' });
  });

  it('never drops a field: a renamed one does not overwrite a field the caller named field_<name> itself', () => {
    const line = JSON.parse(logLine('warn', 'e', { level: 'a', field_level: 'b', ['__proto__']: 'c' }));
    expect(line).toMatchObject({ level: 'warn', event: 'e', field_level: 'b', field_field_level: 'a' });
    expect(Object.keys(line)).toContain('__proto__');
  });

  it('writes level, event and time first', () => {
    const line = logLine('info', 'x', { a: 1, level: 'z' }, new Date('2026-01-01T00:00:00Z'));
    expect(line).toBe('{"level":"info","event":"x","time":"2026-01-01T00:00:00.000Z","a":1,"field_level":"z"}');
  });
});
