// `npx deno run --allow-all scripts/sms-code.ts <phone>`: prints the one-time code of the newest
// code request (sign-up, login or password reset) for that phone, read from the local stack's
// private.sms_outbox, when that code can still be used. On the local stack (SMS_PROVIDER=outbox) no
// SMS leaves the machine: this is how a person trying the API by hand, and the docs' walkthroughs
// (scripts/curl-session.sh), get the code without reading it off the server's output. The tests
// tests/integration/sms-code.test.ts and tests/integration/docs-curl.clock.test.ts run it.
//
// The database: the local stack's only. DATABASE_URL when set, but only when its host is this
// machine (127.0.0.1, localhost or ::1): operators export a deployment's DATABASE_URL for `npm run
// operator:grant`, and this script must never read live codes from it. Else the embedded PostgreSQL
// of `npm start` on 127.0.0.1, port PG_PORT (54322 by default), as scripts/operator.ts.
//
// The code printed is the newest one issued to the phone (private.otps, with the outbox row its
// request queued in the same transaction: same phone, same created_at), and only while it is valid:
// not expired, not consumed (proved already, or burnt by wrong tries) and its SMS not withheld
// (a login or reset code for a phone with no account is recorded, never sent). A sign-up request
// for a phone that has an account sends a notice instead of a code: nothing to print either.
//
// Exit status: 0 the code printed; 1 no valid code for that phone (the message says why), the
// database cannot be reached, or DATABASE_URL is not local; 2 usage.
import postgres from 'postgres';
import { NIGERIAN_PHONE, toE164 } from '../shared/core/validation.ts';
import { DEFAULT_PG_PORT, localDatabaseUrl } from './lib/local-postgres.ts';
import { databaseHost, isLocalDatabaseUrl, LOCAL_HOSTS } from './lib/local-host.ts';

const USAGE = `usage: npx deno run --allow-all scripts/sms-code.ts <phone>
<phone> is 0 followed by 10 digits (08031234567) or +234 followed by 10 digits (+2348031234567).
The database is the local one of \`npm start\` (127.0.0.1, PG_PORT or ${DEFAULT_PG_PORT}), or DATABASE_URL if its host is
${LOCAL_HOSTS.join(', ')}.`;

function fail(status: 1 | 2, problem: string): never {
  console.error(`error: ${problem}${status === 2 ? `\n${USAGE}` : ''}`);
  Deno.exit(status);
}

const [phone, ...extra] = Deno.args;
if (phone === undefined) fail(2, 'the phone is missing');
if (extra.length > 0) fail(2, `one phone at a time (got also ${extra.join(' ')})`);
if (!NIGERIAN_PHONE.test(phone)) fail(2, `"${phone}" is not a Nigerian phone number`);
const e164 = toE164(phone);

const given = Deno.env.get('DATABASE_URL');
if (given && !isLocalDatabaseUrl(given)) {
  const host = databaseHost(given);
  fail(
    1,
    `scripts/sms-code.ts only reads the local stack's SMS outbox, and DATABASE_URL points at ${
      host ? `the host ${host}` : 'no single host'
    }, not this machine (${LOCAL_HOSTS.join(', ')}). Unset DATABASE_URL (\`env -u DATABASE_URL ...\`) ` +
      'to read the outbox of `npm start`; a deployment sends its codes by SMS, and nothing reads them back',
  );
}
const rawPort = Deno.env.get('PG_PORT');
const port = rawPort ? Number(rawPort) : DEFAULT_PG_PORT;
if ((!Number.isInteger(port) || port < 1 || port > 65535)) {
  fail(2, `PG_PORT must be a port number between 1 and 65535 (got "${rawPort}")`);
}
const url = given || localDatabaseUrl(port);

interface Latest {
  context: string;
  kind: string | null;
  body: string | null;
  withheld: string | null;
  expires_at: Date;
  consumed_at: Date | null;
  expired: boolean;
}

const sql = postgres(url, { max: 1, connect_timeout: 10, onnotice: () => {} });
let latest: Latest | undefined;
try {
  // the newest code issued to the phone, and the SMS its request queued in the same transaction
  // (shared/auth/otp.ts, issueOtp: both rows take the transaction's now()); one-time codes are
  // written into the outbox row's body when they are queued
  [latest] = await sql<Latest[]>`
    select o.context, s.message->>'kind' as kind, s.body, s.withheld, o.expires_at, o.consumed_at,
           o.expires_at <= now() as expired
      from private.otps o
      left join private.sms_outbox s on s.phone = o.phone and s.created_at = o.created_at
                                     and s.message->>'kind' in ('otp_code', 'account_exists')
     where o.phone = ${e164}
     order by o.created_at desc, s.id desc
     limit 1`;
} catch (err) {
  const e = err as { code?: string; message?: string };
  await sql.end({ timeout: 5 }).catch(() => {});
  fail(
    1,
    `cannot read the SMS outbox (${e.code ?? e.message ?? String(err)}): is \`npm start\` running? ` +
      (given ? 'Check DATABASE_URL' : `On other ports, export its PG_PORT (now ${port})`),
  );
}
await sql.end({ timeout: 5 }).catch(() => {});

const ask = `ask for a new one with auth-send-otp`;
if (!latest) fail(1, `no code was sent to ${e164}: ask for one with auth-send-otp first`);
const what = `the newest ${latest.context} code for ${e164}`;
if (latest.kind === 'account_exists') {
  fail(1, `${what} was not sent: the phone has an account already, so the SMS says so instead of giving a code`);
}
if (latest.withheld !== null) {
  fail(
    1,
    `${what} was never sent (withheld: ${latest.withheld}${
      latest.withheld === 'no_account' ? ', no account has this phone' : ''
    }), so there is no code to read`,
  );
}
const code = latest.body?.match(/\b\d{6}\b/)?.[0];
if (!code) fail(1, `${what} has no SMS with a code in the outbox`);
if (latest.consumed_at !== null) {
  fail(
    1,
    `${what} cannot be used any more (consumed at ${latest.consumed_at.toISOString()}: proved already, or ` +
      `burnt by too many wrong tries): ${ask}`,
  );
}
if (latest.expired) fail(1, `${what} expired at ${latest.expires_at.toISOString()}: ${ask}`);
console.log(code);
