// What follows a commit (queued SMS, a payout handed to the provider) goes through one helper,
// shared/core/background.ts: a failure never reaches the client and is never swallowed in silence.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { afterCommit, afterResponse, backgroundSettled } from '../../shared/core/background.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The JSON log lines written to stderr while `run` ran. */
async function errorLines(run: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
  try {
    await run();
    return spy.mock.calls.map((c) => JSON.parse(String(c[0])) as Record<string, unknown>);
  } finally {
    spy.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

describe('afterCommit', () => {
  it('runs the work before it resolves', async () => {
    const done: string[] = [];
    const lines = await errorLines(() => afterCommit('test.ok', async () => void done.push('sent')));
    expect(done).toEqual(['sent']);
    expect(lines).toEqual([]);
  });

  it('logs a failure with its task and error, and resolves (the commit stands)', async () => {
    const lines = await errorLines(() =>
      afterCommit('sms.dispatch', () => Promise.reject(new Error('termii unreachable')))
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'error',
      event: 'background.failed',
      task: 'sms.dispatch',
      error: 'Error: termii unreachable',
    });
  });

  it('logs a synchronous throw the same way', async () => {
    const lines = await errorLines(() =>
      afterCommit('escrow.payout', () => {
        throw new TypeError('boom');
      })
    );
    expect(lines[0]).toMatchObject({ event: 'background.failed', task: 'escrow.payout', error: 'TypeError: boom' });
  });
});

describe('afterResponse', () => {
  it('runs later, and logs a failure the same way', async () => {
    const lines = await errorLines(async () => {
      let ran = false;
      afterResponse('sms.otp', async () => {
        ran = true;
        throw new Error('no route');
      });
      expect(ran).toBe(false); // not before the answer
      await backgroundSettled();
      expect(ran).toBe(true);
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ event: 'background.failed', task: 'sms.otp', error: 'Error: no route' });
  });
});

describe('shared/: after-commit work goes through the helper', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const p = join(dir, n);
      return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
    });

  const shared = files(join(root, 'shared')).map((f) => relative(root, f));
  it.each(shared)('%s: no .catch() on SMS dispatch or payouts', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    const caught = text.match(/\b(dispatchQueuedSms|startEscrowPayout|startPayout)\([^()]*\)\s*\.catch\(/g) ?? [];
    expect(caught, `${file}: wrap the call in afterCommit(task, () => ...) (shared/core/background.ts) instead`)
      .toEqual([]);
  });
});
