// One source for each enum: every list in an area's shared/<area>/enums.ts equals the set of values its database
// column accepts, read from the catalog of the migrated test database (the labels of the column's
// enum type, or the values of the check constraint on that column; a domain's own check counts
// too). Columns are found by table and column, never by constraint name, so a migration may name
// or restructure its constraints freely. Both ways: a value missing on either side fails, named.
import { describe, expect, it } from 'vitest';
import * as authEnums from '../../shared/auth/enums.ts';
import * as conversationEnums from '../../shared/conversations/enums.ts';
import * as disputeEnums from '../../shared/disputes/enums.ts';
import * as escrowEnums from '../../shared/escrow/enums.ts';
import * as kycEnums from '../../shared/kyc/enums.ts';
import * as merchantEnums from '../../shared/merchants/enums.ts';
import * as moneyEnums from '../../shared/money/enums.ts';
import * as notificationEnums from '../../shared/notifications/enums.ts';
import * as operatorEnums from '../../shared/operators/enums.ts';
import * as profileEnums from '../../shared/profile/enums.ts';
import * as webhookEnums from '../../shared/webhooks/enums.ts';
import { readdirSync } from 'node:fs';
import { testDb } from '../support/db.ts';

const enums = {
  ...authEnums,
  ...conversationEnums,
  ...disputeEnums,
  ...escrowEnums,
  ...kycEnums,
  ...merchantEnums,
  ...moneyEnums,
  ...notificationEnums,
  ...operatorEnums,
  ...profileEnums,
  ...webhookEnums,
};

/** The areas that hold an enums.ts: each must be imported above. */
const sharedDir = new URL('../../shared/', import.meta.url);
const areasWithEnums = readdirSync(sharedDir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && readdirSync(new URL(`${d.name}/`, sharedDir)).includes('enums.ts'))
  .map((d) => d.name)
  .sort();

type EnumName = {
  [K in keyof typeof enums]: (typeof enums)[K] extends readonly string[] ? K : never;
}[keyof typeof enums];

/** Which column holds each list (schema-qualified table). */
const COLUMNS: { name: EnumName; table: string; column: string }[] = [
  { name: 'ESCROW_STATUSES', table: 'public.escrows', column: 'status' },
  { name: 'ESCROW_CATEGORIES', table: 'public.escrows', column: 'category' },
  { name: 'PAYER_ROLES', table: 'public.escrows', column: 'payer_role' },
  { name: 'MILESTONE_STATUSES', table: 'public.milestones', column: 'status' },
  { name: 'TRANSACTION_TYPES', table: 'public.transactions', column: 'type' },
  { name: 'TRANSACTION_CATEGORIES', table: 'public.transactions', column: 'category' },
  { name: 'TRANSACTION_STATUSES', table: 'public.transactions', column: 'status' },
  { name: 'TRANSACTION_DIRECTIONS', table: 'public.transactions', column: 'direction' },
  { name: 'NOTIFICATION_EVENT_TYPES', table: 'public.notifications', column: 'event_type' },
  { name: 'ENTITY_TYPES', table: 'public.notifications', column: 'entity_type' },
  { name: 'ACTION_LABELS', table: 'public.notifications', column: 'action_label' },
  { name: 'DISPUTE_REASON_CODES', table: 'public.disputes', column: 'reason_code' },
  { name: 'DISPUTE_STATUSES', table: 'public.disputes', column: 'status' },
  { name: 'DISPUTE_OUTCOMES', table: 'public.disputes', column: 'outcome' },
  { name: 'PROPOSAL_STATUSES', table: 'public.dispute_proposals', column: 'status' },
  { name: 'OPERATOR_ROLES', table: 'private.operators', column: 'role' },
  { name: 'MESSAGE_TYPES', table: 'public.messages', column: 'message_type' },
  { name: 'VIRTUAL_ACCOUNT_STATUSES', table: 'public.virtual_accounts', column: 'status' },
  { name: 'MARITAL_STATUSES', table: 'public.profiles', column: 'marital_status' },
  { name: 'OTP_CONTEXTS', table: 'private.otps', column: 'context' },
  { name: 'KYC_CHECK_TYPES', table: 'private.kyc_checks', column: 'check_type' },
  { name: 'KYC_CHECK_STATUSES', table: 'private.kyc_checks', column: 'status' },
  { name: 'KYC_REJECT_TYPES', table: 'private.kyc_checks', column: 'reject_type' },
  { name: 'MERCHANT_STATUSES', table: 'private.merchants', column: 'status' },
  { name: 'WEBHOOK_DELIVERY_STATUSES', table: 'private.webhook_deliveries', column: 'status' },
  { name: 'WEBHOOK_OWNER_KINDS', table: 'private.webhook_endpoints', column: 'owner_kind' },
];

/** The quoted literals of a constraint definition ('it''s' -> it's). */
const literals = (def: string) =>
  [...def.matchAll(/'((?:[^']|'')*)'/g)].map((m) => (m[1] as string).replace(/''/g, "'"));

/** A check that lists values (`x in (...)`, `x = '...'`), not a length, range or pattern check. */
const listsValues = (def: string) => /= ANY \(|= '/.test(def) && !/~|char_length|length\(/.test(def);

/**
 * The values a column accepts: its enum type's labels, else the literals of the value-listing
 * check constraints on that column alone (or on its domain). Null when nothing restricts it.
 */
async function acceptedValues(table: string, column: string): Promise<{ values: string[] | null; source: string }> {
  const sql = testDb();
  const [col] = await sql<{ attnum: number; typtype: string; typoid: number; typname: string; basetype: number }[]>`
    select a.attnum, t.typtype, t.oid::int as typoid, t.typname, t.typbasetype::int as basetype
      from pg_attribute a join pg_type t on t.oid = a.atttypid
     where a.attrelid = ${table}::regclass and a.attname = ${column} and not a.attisdropped`;
  if (!col) throw new Error(`${table}.${column} does not exist`);
  const enumType = col.typtype === 'e' ? col.typoid : col.typtype === 'd' ? col.basetype : null;
  if (enumType !== null) {
    const labels = await sql<{ label: string }[]>`
      select e.enumlabel as label from pg_enum e where e.enumtypid = ${enumType} order by e.enumsortorder`;
    if (labels.length > 0) return { values: labels.map((l) => l.label), source: `enum type ${col.typname}` };
  }
  const checks = await sql<{ def: string }[]>`
    select pg_get_constraintdef(c.oid) as def from pg_constraint c
     where c.contype = 'c' and c.conrelid = ${table}::regclass and c.conkey = array[${col.attnum}]::int2[]
    union all
    select pg_get_constraintdef(c.oid) from pg_constraint c where c.contype = 'c' and c.contypid = ${col.typoid}`;
  const listing = checks.map((c) => c.def).filter(listsValues);
  if (listing.length === 0) return { values: null, source: 'no check constraint listing its values' };
  return { values: [...new Set(listing.flatMap(literals))], source: listing.join(' and ') };
}

describe('shared/<area>/enums.ts and the database', () => {
  it('imports the enums.ts of every area', () => {
    expect(areasWithEnums, 'import each shared/<area>/enums.ts above and spread it into enums').toEqual([
      'auth',
      'conversations',
      'disputes',
      'escrow',
      'kyc',
      'merchants',
      'money',
      'notifications',
      'operators',
      'profile',
      'webhooks',
    ]);
  });

  it('maps every list of the enums.ts files to a column here', () => {
    const lists = Object.entries(enums)
      .filter(([, v]) => Array.isArray(v))
      .map(([k]) => k);
    const mapped = COLUMNS.map((c) => c.name);
    const unmapped = lists.filter((l) => !mapped.includes(l as EnumName));
    expect(unmapped, 'add each new list to COLUMNS in this test').toEqual([]);
  });

  const cases = COLUMNS.map((c) => ({ ...c, where: `${c.table}.${c.column}` }));
  it.each(cases)('$name is exactly what $where accepts', async ({ name, table, column, where }) => {
    const ours = enums[name] as readonly string[];
    const { values, source } = await acceptedValues(table, column);
    expect(
      values,
      `${where}: ${source}; add one listing ${name} (a check constraint or an enum type, in a new migration)`,
    ).not.toBeNull();
    const theirs = values as string[];
    const problems = [
      ...ours.filter((v) => !theirs.includes(v)).map((v) => `'${v}' is in ${name} but ${where} refuses it`),
      ...theirs.filter((v) => !ours.includes(v)).map((v) => `'${v}' is accepted by ${where}, missing from ${name}`),
    ];
    expect(problems, `${name} vs ${table}.${column} (${source})`).toEqual([]);
  });
});
