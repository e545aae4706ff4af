// `npm run operator:grant -- <phone> <role>` / `npm run operator:revoke -- <phone> <role>`: gives
// or takes an operator role (support, finance, disputes, admin) of the account with that phone,
// straight in the database (private.operator_grant / private.operator_revoke, as service_role),
// never through the API: how the first admin is made (docs/operators.md). A grant is refused for
// an account below KYC tier 3 or without its NIN and BVN bound to it. Both are idempotent and
// record what they changed in private.admin_audit, with the OS user who ran them.
//
// The database: DATABASE_URL when set; else the embedded PostgreSQL of `npm start` on 127.0.0.1,
// port PG_PORT (54322 by default), which must be running.
//
// Exit status: 0 done (or nothing to do), 1 refused or failed (no account has the phone, the
// account is not eligible, the database cannot be reached...), 2 usage (a missing or malformed
// phone or role).
import { userInfo } from 'node:os';
import postgres from 'postgres';
import { NIGERIAN_PHONE, toE164 } from '../shared/core/validation.ts';
import { DEFAULT_PG_PORT, localDatabaseUrl } from './lib/local-postgres.ts';

const ROLES = ['support', 'finance', 'disputes', 'admin'] as const;

const VERBS = {
  grant: { fn: 'operator_grant', doing: 'granting', done: 'now holds', same: 'already held' },
  revoke: { fn: 'operator_revoke', doing: 'revoking', done: 'no longer holds', same: 'did not hold' },
} as const;

const USAGE = `usage: npm run operator:grant -- <phone> <role>
       npm run operator:revoke -- <phone> <role>
<phone> is 0 followed by 10 digits (08031234567) or +234 followed by 10 digits (+2348031234567).
<role> is one of ${ROLES.join(', ')}.
The account must be at KYC tier 3 or more with its NIN and BVN bound to it (a grant below that is refused).
The database is DATABASE_URL, or else the local one of \`npm start\` (127.0.0.1, PG_PORT or ${DEFAULT_PG_PORT}).`;

class Refused extends Error {}

function usage(problem: string): never {
  console.error(`error: ${problem}\n${USAGE}`);
  Deno.exit(2);
}

/** Who runs the script, for the audit: the OS user, else 'script'. */
function operator(): string {
  try {
    const name = userInfo().username;
    if (name) return name.slice(0, 200);
  } catch { /* no passwd entry */ }
  return (Deno.env.get('USER') || Deno.env.get('LOGNAME') || 'script').slice(0, 200);
}

/** The database and how to name it without its password. */
function database(): { url: string; label: string; local: boolean } {
  const given = Deno.env.get('DATABASE_URL');
  if (given) {
    let where = 'the database of DATABASE_URL';
    try {
      const u = new URL(given);
      where = `${u.hostname}:${u.port || 5432}${u.pathname}`;
    } catch { /* postgres.js reports a malformed URL itself */ }
    return { url: given, label: `${where} (DATABASE_URL)`, local: false };
  }
  const raw = Deno.env.get('PG_PORT');
  const port = raw ? Number(raw) : DEFAULT_PG_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    usage(`PG_PORT must be a port number between 1 and 65535 (got "${raw}")`);
  }
  return {
    url: localDatabaseUrl(port),
    label: `127.0.0.1:${port}/postgres (the local database of npm start)`,
    local: true,
  };
}

/** The facts of a refusal raised by private.refuse (its DETAIL, JSON). */
function facts(detail: string | undefined): Record<string, unknown> {
  try {
    return JSON.parse(detail ?? '{}') as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Why an account may not be an operator, from the facts of private.operator_grant's refusal. */
function ineligible(detail: string | undefined): string {
  const f = facts(detail);
  if (f.code === 'operator_tier_required') {
    return `the account is at KYC tier ${f.tier} and an operator must be at tier 3 or more`;
  }
  const missing = Array.isArray(f.missing) ? f.missing.join(' and ') : 'NIN and BVN';
  return `the account has no ${missing} bound to it (an operator's NIN and BVN must be bound to their account)`;
}

/** A sentence for what went wrong talking to the database. */
function explain(err: unknown, db: { label: string; local: boolean }, fn: string, phone: string): string {
  const e = err as { code?: string; message?: string; detail?: string };
  if (e?.code === 'ES404') return `no account has the phone ${phone}; its owner must sign up first`;
  if (e?.code === 'ES409') return `${phone} cannot be an operator: ${ineligible(e.detail)}`;
  if (e?.code === 'ES422') return `${fn} refused its ${facts(e.detail).field ?? 'arguments'}`;
  if (e?.code === '42883' || e?.code === '3F000') {
    return `the database ${db.label} has no private.${fn}: apply the migrations first (npm start applies them)`;
  }
  if (e?.code === 'ECONNREFUSED' || e?.code === 'CONNECT_TIMEOUT' || e?.code === 'ENOTFOUND') {
    return `cannot reach the database ${db.label} (${e.code}): ` +
      (db.local ? 'start it with `npm start` (in another terminal), or set DATABASE_URL' : 'check DATABASE_URL');
  }
  if (e?.code === '28P01') return `the database ${db.label} refused the password (check DATABASE_URL)`;
  return `${fn} failed: ${e?.code ? `${e.code} ` : ''}${e?.message ?? String(err)}`;
}

async function main() {
  const [verb, phone, role, ...extra] = Deno.args;
  if (verb !== 'grant' && verb !== 'revoke') {
    usage(`the first argument must be grant or revoke (got ${verb ?? 'nothing'})`);
  }
  if (phone === undefined) usage('the phone of the account is missing');
  if (!NIGERIAN_PHONE.test(phone)) usage(`"${phone}" is not a Nigerian phone number`);
  if (role === undefined) usage('the role is missing');
  if (!(ROLES as readonly string[]).includes(role)) usage(`"${role}" is not a role (one of ${ROLES.join(', ')})`);
  if (extra.length > 0) usage(`one phone and one role at a time (got also ${extra.join(' ')})`);
  const e164 = toE164(phone);
  const what = VERBS[verb];
  const db = database();
  const by = operator();

  console.log(`database: ${db.label}`);
  console.log(`${what.doing} the ${role} role of ${e164} (as ${by})`);
  const sql = postgres(db.url, { max: 1, connect_timeout: 10, onnotice: () => {} });
  try {
    const changed = await sql.begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true)`;
      const [row] = verb === 'grant'
        ? await tx<{ changed: boolean }[]>`select private.operator_grant(${e164}, ${role}, ${by}) as changed`
        : await tx<{ changed: boolean }[]>`select private.operator_revoke(${e164}, ${role}, ${by}) as changed`;
      return row?.changed === true;
    });
    console.log(
      changed
        ? `done: ${e164} ${what.done} the ${role} role (recorded in private.admin_audit)`
        : `${e164} ${what.same} the ${role} role; nothing changed`,
    );
  } catch (err) {
    throw new Refused(explain(err, db, what.fn, e164));
  } finally {
    await sql.end({ timeout: 5 }).catch(() => {});
  }
}

try {
  await main();
} catch (err) {
  if (!(err instanceof Refused)) throw err;
  console.error(`error: ${err.message}`);
  Deno.exit(1);
}
