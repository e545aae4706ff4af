// `npm run bench:abuse`: what an unauthenticated attacker can cost us, and what a phone's
// registration shows in the time of an answer. Not a test: it prints figures (docs/security.md).
//
//   1. auth-signup for phones that were never verified: one at a time (the baseline), then a
//      flood of BENCH_FLOOD requests, BENCH_FLOOD_PARALLEL at once, with the median and p99
//      answer times and the server's CPU seconds for the flood (read from /proc).
//   2. auth-send-otp (login) and auth-forgot-password for phones with and without an account:
//      the median answer over BENCH_PHONES phones each, side by side.
//
// Options (environment): BENCH_FLOOD (96), BENCH_FLOOD_PARALLEL (48), BENCH_PHONES (40),
// BENCH_HTTP_PORT (54491), BENCH_PG_PORT (54492).
import postgres from 'postgres';
import { startStack } from '../tests/support/stack.ts';

const flood = Number(Deno.env.get('BENCH_FLOOD') ?? 96);
const parallel = Number(Deno.env.get('BENCH_FLOOD_PARALLEL') ?? 48);
const phones = Number(Deno.env.get('BENCH_PHONES') ?? 40);
const httpPort = Number(Deno.env.get('BENCH_HTTP_PORT') ?? 54491);
const pgPort = Number(Deno.env.get('BENCH_PG_PORT') ?? 54492);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p99 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))] as number;
const ms = (x: number) => `${x.toFixed(1)} ms`;

let seq = 0;
function phone(): string {
  seq++;
  return `+2347${String(Date.now() % 1e5).padStart(5, '0')}${String(seq).padStart(4, '0')}`;
}

/** CPU seconds (user + system) of a process and its threads, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

Deno.env.set('TEST_HTTP_PORT', String(httpPort));
console.log(`bench:abuse: starting a fresh stack (embedded PostgreSQL + Deno functions) on ${httpPort}`);
const stack = await startStack(httpPort, pgPort);
const sql = postgres(stack.databaseUrl, { max: 2, onnotice: () => {} });

async function timed(name: string, body: unknown): Promise<{ ms: number; status: number }> {
  const t = performance.now();
  const res = await fetch(`${stack.baseUrl}/${name}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.body?.cancel();
  return { ms: performance.now() - t, status: res.status };
}
const signupBody = (p: string) => ({ phone: p, first_name: 'Ada', last_name: 'Obi', password: 'a sound passphrase' });

try {
  const pid = stack.serverPid;
  console.log('\n1. auth-signup for phones never verified');
  const alone: number[] = [];
  for (let i = 0; i < 10; i++) alone.push((await timed('auth-signup', signupBody(phone()))).ms);
  console.log(`  one at a time (10):                     median ${ms(median(alone))}`);
  // a real user's sign-up (verified phone, one password hash): alone, then during the flood
  const verified = async (): Promise<string> => {
    const p = phone();
    await timed('auth-send-otp', { phone: p, context: 'signup' });
    const [row] = await sql<
      { body: string }[]
    >`select body from private.sms_outbox where phone = ${p} order by id desc limit 1`;
    const code = /\b\d{6}\b/.exec(row?.body ?? '')?.[0];
    const v = await timed('auth-verify', { phone: p, context: 'signup', otp_code: code });
    if (v.status !== 200) throw new Error(`could not verify a phone for the bench: HTTP ${v.status}`);
    return p;
  };
  const real: number[] = [];
  for (let i = 0; i < 5; i++) real.push((await timed('auth-signup', signupBody(await verified()))).ms);
  console.log(`  a verified sign-up alone (5):           median ${ms(median(real))}`);
  const duringPhones = await Promise.all(Array.from({ length: 5 }, () => verified()));
  const during: number[] = [];
  const cpuBefore = cpuSeconds(pid);
  const times: number[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const legit = (async () => {
    // the real users sign up while the flood runs
    await new Promise((r) => setTimeout(r, 20));
    for (const p of duringPhones) during.push((await timed('auth-signup', signupBody(p))).ms);
  })();
  await Promise.all([
    legit,
    ...Array.from({ length: parallel }, async () => {
      while (next < flood) {
        next++;
        const r = await timed('auth-signup', signupBody(phone()));
        times.push(r.ms);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
    }),
  ]);
  const cpu = cpuSeconds(pid) - cpuBefore;
  console.log(
    `  flood (${flood}, ${parallel} at once):            median ${ms(median(times))}  p99 ${
      ms(p99(times))
    }  server CPU ${cpu.toFixed(2)} s  statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
  console.log(
    `  a verified sign-up during the flood (5): median ${ms(median(during))}  (${
      (median(during) / median(real)).toFixed(1)
    }x alone)`,
  );

  console.log(`\n2. answers for phones with and without an account (median over ${phones} phones each)`);
  // accounts made directly in the database: this part measures the answers, not sign-up. Each
  // endpoint gets its own phones (a phone may ask for one code a minute, whatever the context).
  const registered = async (n: number): Promise<string[]> => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const p = phone();
      await sql`insert into private.users (phone, password_hash) values (${p}, 'x')`;
      out.push(p);
    }
    return out;
  };
  for (
    const [name, body] of [
      ['auth-send-otp', (p: string) => ({ phone: p, context: 'login' })],
      ['auth-forgot-password', (p: string) => ({ phone: p })],
    ] as const
  ) {
    const withAccount = await registered(phones);
    const without = Array.from({ length: phones }, () => phone());
    const a: number[] = [];
    const b: number[] = [];
    // interleaved, with a pause after each, so the SMS sent after an answer does not fall on the
    // next request's time
    const pause = () => new Promise((r) => setTimeout(r, 50));
    for (let i = 0; i < phones; i++) {
      a.push((await timed(name, body(withAccount[i] as string))).ms);
      await pause();
      b.push((await timed(name, body(without[i] as string))).ms);
      await pause();
    }
    console.log(
      `  ${name.padEnd(22)} with ${ms(median(a))}  without ${ms(median(b))}  ratio ${
        (median(a) / median(b)).toFixed(2)
      }`,
    );
  }
} finally {
  await sql.end();
  await stack.stop();
}
