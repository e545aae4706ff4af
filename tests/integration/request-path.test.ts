// The request path of docs/performance.md: the live-session check rides in a request's first
// statement (shared/core/request-session.ts, shared/core/db.ts), the hot reads are pipelined with their
// values written as literals, and a transaction that Postgres rolled back is never taken for a
// commit. Through the real server where a user sees it, in-process where only the database can tell.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asService, asUser, closeDb, inline, readAsUser } from '../../shared/core/db.ts';
import { HttpError } from '../../shared/core/http.ts';
import { providerFetch } from '../../shared/core/outbound.ts';
import { type RequestSession, withRequestSession } from '../../shared/core/request-session.ts';
import { get, patch, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { signUp, type TestUser } from '../support/users.ts';
import authLogout from '../../supabase/functions/auth-logout/handler.ts';
import escrowList from '../../supabase/functions/escrow-list/handler.ts';
import messageFeed from '../../supabase/functions/message-feed/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';
import profileUpdate from '../../supabase/functions/profile-update/handler.ts';

afterAll(() => closeDb());

const sessionOf = (user: TestUser) => JSON.parse(atob(user.accessToken.split('.')[1] as string)).session_id as string;
const claimsOf = (user: TestUser) => ({
  sub: user.id,
  role: 'authenticated' as const,
  session_id: sessionOf(user),
  phone: user.phone,
});
const scopeOf = (user: TestUser): RequestSession => ({
  userId: user.id,
  sessionId: sessionOf(user),
  state: 'unchecked',
});

async function loggedOut(): Promise<TestUser> {
  const user = await signUp();
  expect((await post(authLogout, undefined, { method: 'POST', token: user.accessToken })).status).toBe(200);
  return user;
}

describe('an ended session through the server', () => {
  it('each pipelined read answers 401, not data', async () => {
    const user = await loggedOut();
    for (const name of ['wallet-get', 'profile-get', 'escrow-list', 'transaction-list']) {
      const res = await get(name, { token: user.accessToken });
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(401);
      expect(res.body.error).toBe('Session has ended, log in again');
    }
    const feed = await get(messageFeed, {
      token: user.accessToken,
      query: { conversation_id: crypto.randomUUID() },
    });
    expect(feed.status).toBe(401);
  });

  it('is a 401 before any other refusal: a bad body or query still says the session ended', async () => {
    const user = await loggedOut();
    // @ts-expect-error a number for a name, on purpose
    const badBody = await patch(profileUpdate, { first_name: 7 }, { token: user.accessToken });
    expect(badBody.status, JSON.stringify(badBody.body)).toBe(401);
    const badQuery = await get(escrowList, { token: user.accessToken, query: { limit: 'many' } });
    expect(badQuery.status, JSON.stringify(badQuery.body)).toBe(401);
    // and a live session with the same bad input gets the validation error
    const live = await signUp();
    // @ts-expect-error a number for a name, on purpose
    expect((await patch(profileUpdate, { first_name: 7 }, { token: live.accessToken })).status).toBe(400);
  });

  it('a write with an ended session changes nothing', async () => {
    const user = await signUp();
    const before = await get(profileGet, { token: user.accessToken });
    expect((await post(authLogout, undefined, { method: 'POST', token: user.accessToken })).status).toBe(200);
    const res = await patch(profileUpdate, { first_name: 'Changed' }, { token: user.accessToken });
    expect(res.status).toBe(401);
    const [after] = await testDb()<{ first_name: string }[]>`
      select first_name from public.profiles where id = ${user.id}`;
    expect(after?.first_name).toBe(before.body.data.first_name);
  });
});

describe('the session check inside the first statement', () => {
  it('a transaction of an ended session runs none of its statements, and nothing after it runs', async () => {
    const user = await loggedOut();
    const scope = scopeOf(user);
    let ran = 0;
    await withRequestSession(scope, async () => {
      await expect(asService(async (tx) => {
        await tx`select 1`;
        ran++;
      })).rejects.toMatchObject({ code: 'ES401' });
      expect(scope.state).toBe('ended');
      // a handler that caught the refusal and went on is stopped before the database
      await expect(asUser(claimsOf(user), async (tx) => {
        await tx`select 1`;
        ran++;
      })).rejects.toBeInstanceOf(HttpError);
      await expect(readAsUser(claimsOf(user), (tx) => [tx`select 1`])).rejects.toMatchObject({ status: 401 });
    });
    expect(ran).toBe(0);
  });

  it('a live session is checked once: the first transaction marks it live', async () => {
    const user = await signUp();
    const scope = scopeOf(user);
    await withRequestSession(scope, async () => {
      const [[row]] = await readAsUser(claimsOf(user), (tx) => [tx<{ uid: string }[]>`select auth.uid() as uid`]);
      expect(row?.uid).toBe(user.id);
      expect(scope.state).toBe('live');
    });
  });

  it('a token naming a session of another user is refused', async () => {
    const [a, b] = [await signUp(), await signUp()];
    const scope: RequestSession = { userId: a.id, sessionId: sessionOf(b), state: 'unchecked' };
    await withRequestSession(scope, async () => {
      await expect(asService((tx) => tx`select 1`)).rejects.toMatchObject({ code: 'ES401' });
    });
  });

  it('no provider is called for an ended session', async () => {
    let hits = 0;
    const server: Server = createServer((_req, res) => {
      hits++;
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    try {
      const user = await loggedOut();
      await withRequestSession(scopeOf(user), async () => {
        await expect(providerFetch(`http://127.0.0.1:${port}/charge`)).rejects.toMatchObject({ status: 401 });
      });
      expect(hits).toBe(0);
      // a live session reaches the provider (checked by one statement, as nothing else asked)
      const live = await signUp();
      const scope = scopeOf(live);
      await withRequestSession(scope, async () => {
        expect((await providerFetch(`http://127.0.0.1:${port}/charge`)).status).toBe(200);
      });
      expect(scope.state).toBe('live');
      expect(hits).toBe(1);
    } finally {
      server.close();
    }
  });
});

describe('literals and commits', () => {
  it('any text round-trips as a literal, including the quoting tag and NUL-free oddities', async () => {
    const values = [
      'plain',
      "it's",
      '$q$',
      'a$q',
      'x$q$y',
      "$q$'); drop table private.users; --",
      'ends with $',
      '$',
      'back\\slash and \\x27',
      'émoji 🙂 ñ',
      '',
    ];
    const rows = await asService(async (tx) =>
      await Promise.all(values.map((v) => inline(tx)<{ v: string }[]>`select ${v} as v`))
    );
    expect(rows.map(([r]) => r?.v)).toEqual(values);
    // right after a word, a literal still starts a token of its own (x$q$... would be one word)
    const [glued] = await asService(async (tx) =>
      await inline(tx)<{ x: string }[]>`select${'a; select 1; --'}::text as x`
    );
    expect(glued?.x).toBe('a; select 1; --');
    const [[n]] = await readAsUser(claimsOf(await signUp()), (tx) => [
      inline(tx)<{ n: number }[]>`select ${9_007_199_254_740_991}::bigint::text as n`,
    ]);
    expect(n?.n).toBe('9007199254740991');
    await expect(asService(async (tx) => await inline(tx)`select ${1.5}`)).rejects.toBeInstanceOf(TypeError);
  });

  it('a callback that swallowed a failed statement does not pass for a commit', async () => {
    let inserted = '';
    await expect(asService(async (tx) => {
      const [row] = await tx<{ id: string }[]>`select gen_random_uuid()::text as id`;
      inserted = row?.id ?? '';
      await tx`select 1 / 0`.catch(() => {});
      return 'done';
    })).rejects.toThrow(/ROLLBACK/);
    expect(inserted).not.toBe('');
  });
});

describe('wallet-get', () => {
  describe('pipelined reads under load', () => {
    let user: TestUser;
    beforeAll(async () => {
      user = await signUp();
    });

    it('50 concurrent wallet and profile reads of one user all answer 200 with the same data', async () => {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => get(i % 2 ? 'wallet-get' : 'profile-get', { token: user.accessToken })),
      );
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      const wallets = answers.filter((_, i) => i % 2).map((a) => JSON.stringify(a.body.data));
      expect(new Set(wallets).size).toBe(1);
    });
  });
});

describe('a statement sent with the commit', () => {
  it('commits with the transaction, and its failure fails the transaction with its own error', async () => {
    const { sendWithCommit } = await import('../../shared/core/db.ts');
    const key = `with-commit-${crypto.randomUUID()}`;
    const out = await asService(async (tx) => {
      sendWithCommit(
        tx,
        tx`insert into private.webhook_failures (provider, event_key, event_type, payload, error)
           values ('payments', ${key}, 'test', '{}'::jsonb, 'sent with the commit')`,
      );
      return 'ok';
    });
    expect(out).toBe('ok');
    const [row] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.webhook_failures where event_key = ${key}`;
    expect(row?.n).toBe(1);
    await expect(asService(async (tx) => {
      sendWithCommit(tx, tx`select 1 / 0`);
      return 'ok';
    })).rejects.toMatchObject({ code: '22012' });
  });
});

describe('a connection Postgres closes mid-transaction', () => {
  it('fails the transaction at once, with queries queued behind it settled, and the next one works', async () => {
    const { isDatabaseUnavailable } = await import('../../shared/core/db.ts');
    const started = Date.now();
    const failure = await asService(async (tx) => {
      const [row] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
      // another session ends this backend while it sleeps; a parameterised statement holds the
      // connection's pipeline (Describe first), so the one after it waits in postgres.js's queue
      setTimeout(() => testDb()`select pg_terminate_backend(${row?.pid as number})`.execute(), 200);
      await Promise.all([tx`select pg_sleep(${5})`, tx`select ${1}::int as one`]);
      return 'finished';
    }).catch((err: unknown) => err);
    expect(isDatabaseUnavailable(failure), String(failure)).toBe(true);
    expect(Date.now() - started).toBeLessThan(4_000);
    const [[again]] = await readAsUser(claimsOf(await signUp()), (tx) => [tx<{ one: number }[]>`select 1 as one`]);
    expect(again?.one).toBe(1);
  });
});

describe('a read sent as one message', () => {
  it('runs as the user with RLS, fails whole on an error, and leaves the connection clean', async () => {
    const { sqlText } = await import('../../shared/core/db.ts');
    const [a, b] = [await signUp(), await signUp()];
    // every statement text: one simple-protocol message (setup, then the queries) in one transaction
    const [[me], [others]] = await readAsUser(claimsOf(a), (tx) => [
      sqlText<{ uid: string; role: string }[]>(tx, `select auth.uid()::text as uid, current_user::text as role`),
      sqlText<{ n: number }[]>(tx, `select count(*)::int as n from public.profiles where id <> auth.uid()`),
    ]);
    expect(me).toEqual({ uid: a.id, role: 'authenticated' });
    expect(others?.n).toBe(0); // row-level security: only one's own profile
    await expect(readAsUser(claimsOf(a), (tx) => [sqlText(tx, 'select 1 / 0')])).rejects.toMatchObject({
      code: '22012',
    });
    // the pool's connections carry no role, claims or open transaction into the next read
    for (let i = 0; i < 12; i++) {
      const [[row]] = await readAsUser(
        claimsOf(b),
        (tx) => [sqlText<{ uid: string }[]>(tx, 'select auth.uid()::text as uid')],
      );
      expect(row?.uid).toBe(b.id);
    }
    const [[plain]] = await asService(async (tx) => [await tx<{ role: string }[]>`select current_user::text as role`]);
    expect(plain?.role).toBe('service_role');
  });
});
