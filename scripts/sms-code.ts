// `npx deno run --allow-all scripts/sms-code.ts <phone>`: prints the one-time code of the newest
// code SMS (sign-up, login or password reset) sent to that phone, read from private.sms_outbox.
// On the local stack (SMS_PROVIDER=outbox) no SMS leaves the machine: this is how a person trying
// the API by hand, and the docs' walkthroughs (scripts/curl-session.sh), get the code without
// reading it off the server's output. The test tests/integration/docs-curl.clock.test.ts runs it.
//
// The database: DATABASE_URL when set; else the embedded PostgreSQL of `npm start` on 127.0.0.1,
// port PG_PORT (54322 by default), as scripts/admin.ts.
//
// Exit status: 0 the code printed, 1 no code SMS to that phone (or the database cannot be reached),
// 2 usage.
import postgres from 'postgres';
import { NIGERIAN_PHONE, toE164 } from '../shared/validation.ts';
import { DEFAULT_PG_PORT, localDatabaseUrl } from './lib/local-postgres.ts';

const USAGE = `usage: npx deno run --allow-all scripts/sms-code.ts <phone>
<phone> is 0 followed by 10 digits (08031234567) or +234 followed by 10 digits (+2348031234567).
The database is DATABASE_URL, or else the local one of \`npm start\` (127.0.0.1, PG_PORT or ${DEFAULT_PG_PORT}).`;

function fail(status: 1 | 2, problem: string): never {
  console.error(`error: ${problem}${status === 2 ? `\n${USAGE}` : ''}`);
  Deno.exit(status);
}

const [phone, ...extra] = Deno.args;
if (phone === undefined) fail(2, 'the phone is missing');
if (extra.length > 0) fail(2, `one phone at a time (got also ${extra.join(' ')})`);
if (!NIGERIAN_PHONE.test(phone)) fail(2, `"${phone}" is not a Nigerian phone number`);
const e164 = toE164(phone);

const rawPort = Deno.env.get('PG_PORT');
const port = rawPort ? Number(rawPort) : DEFAULT_PG_PORT;
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  fail(2, `PG_PORT must be a port number between 1 and 65535 (got "${rawPort}")`);
}
const url = Deno.env.get('DATABASE_URL') || localDatabaseUrl(port);

const sql = postgres(url, { max: 1, connect_timeout: 10, onnotice: () => {} });
let body: string | undefined;
try {
  // one-time codes are written into body when they are queued (shared/auth/otp.ts)
  const [row] = await sql<{ body: string | null }[]>`
    select body from private.sms_outbox
     where phone = ${e164} and message->>'kind' = 'otp_code'
     order by id desc limit 1`;
  body = row?.body ?? undefined;
} catch (err) {
  const e = err as { code?: string; message?: string };
  await sql.end({ timeout: 5 }).catch(() => {});
  fail(
    1,
    `cannot read the SMS outbox (${e.code ?? e.message ?? String(err)}): is \`npm start\` running? ` +
      'Otherwise set PG_PORT or DATABASE_URL',
  );
}
await sql.end({ timeout: 5 }).catch(() => {});
const code = body?.match(/\b\d{6}\b/)?.[0];
if (!code) fail(1, `no code was sent to ${e164}: ask for one with auth-send-otp first`);
console.log(code);
