// The live streams' choices that need no server (shared/events/, docs/events.md): where a server
// hears of new events, which connection string may carry LISTEN, and the wire form of an event.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../shared/core/config.ts';
import { wakeSource } from '../../shared/events/hub.ts';
import { sseEvent } from '../../shared/events/stream.ts';
import { deployment } from '../support/deployment.ts';

const SESSION = 'postgres://postgres.abcdefgh:pw-value-123@aws-0-eu-west-2.pooler.supabase.com:5432/postgres';

describe('where a server hears of new events', () => {
  it('LISTENs on DATABASE_SESSION_URL, never on DATABASE_URL; without it, polls every second', () => {
    const pooled = parseConfig(deployment());
    expect(wakeSource(pooled)).toEqual({ kind: 'poll', everyMs: 1_000 });
    const withSession = parseConfig({ ...deployment(), DATABASE_SESSION_URL: SESSION });
    const source = wakeSource(withSession);
    expect(source).toEqual({ kind: 'listen', url: SESSION, safetyPollMs: 5_000 });
    expect(source.kind === 'listen' && source.url).not.toBe(withSession.databaseUrl);
    // an empty value is unset: the poll
    expect(wakeSource(parseConfig({ ...deployment(), DATABASE_SESSION_URL: '' }))).toEqual({
      kind: 'poll',
      everyMs: 1_000,
    });
  });

  it('refuses the transaction pooler (port 6543) as DATABASE_SESSION_URL, naming the variable', () => {
    const pooler = SESSION.replace(':5432/', ':6543/');
    expect(() => parseConfig({ ...deployment(), DATABASE_SESSION_URL: pooler })).toThrow(
      /DATABASE_SESSION_URL must not be the transaction pooler/,
    );
  });
});

describe('the wire form of an event', () => {
  it('is id, event and one data line, ended by a blank line; a reset may come without an id', () => {
    const data = JSON.stringify({ content: 'line one\nline two' });
    expect(sseEvent('42', 'message', data)).toBe(`id: 42\nevent: message\ndata: ${data}\n\n`);
    expect(sseEvent('42', 'message', data).split('\n').filter((l) => l.startsWith('data: '))).toHaveLength(1);
    expect(sseEvent(null, 'reset', '{"reason":"unknown_position"}')).toBe(
      'event: reset\ndata: {"reason":"unknown_position"}\n\n',
    );
  });
});
