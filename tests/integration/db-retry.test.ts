// shared/core/db.ts runs a transaction again when Postgres aborts it to break a deadlock (SQLSTATE
// 40P01): two real transactions take two locks in opposite orders, Postgres picks a victim after
// deadlock_timeout, and both still complete, the victim on its second attempt. Any other error is
// not retried.
import { afterAll, describe, expect, it } from 'vitest';
import { asService, closeDb } from '../../shared/core/db.ts';

afterAll(() => closeDb());

describe('asService and deadlocks', () => {
  it('a transaction aborted to break a deadlock runs again and commits', async () => {
    const [a, b] = [7_000_000_001, 7_000_000_002].map((k) => k + Math.floor(Math.random() * 1_000_000) * 2);
    let attempts = 0;
    // both hold their first lock before either asks for its second: a deadlock every time
    let ready = 0;
    const bothHoldOne = () =>
      new Promise<void>((resolve) => {
        ready++;
        const wait = () => (ready >= 2 ? resolve() : setTimeout(wait, 5));
        wait();
      });
    const take = (first: number, second: number) =>
      asService(async (tx) => {
        attempts++;
        await tx`select pg_advisory_xact_lock(${first})`;
        if (attempts <= 2) await bothHoldOne();
        await tx`select pg_advisory_xact_lock(${second})`;
        return 'done';
      });
    const results = await Promise.allSettled([take(a!, b!), take(b!, a!)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    // two first attempts, one of them aborted as the deadlock's victim and run once more
    expect(attempts).toBe(3);
  });

  it('does not retry other errors', async () => {
    let attempts = 0;
    await expect(asService(async (tx) => {
      attempts++;
      await tx`select 1 / 0`;
    })).rejects.toMatchObject({ code: '22012' });
    expect(attempts).toBe(1);
  });
});
