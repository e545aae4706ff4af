// Row-level security of every table in schema public, at the database level: statements run
// straight in the test database as role `authenticated` with a user's JWT claims, as shared/core/db.ts
// asUser sets them for a request, inside transactions that are always rolled back.
//
// Two users make rows in every table through the real HTTP API (an escrow with its conversation,
// a milestone, notifications and messages, released and reviewed; a second escrow, disputed, with
// a proposal; a wallet with transactions; a card; payout and virtual accounts; next of kin). Then, for each table the catalog lists:
// - the owners' rows are there (seen by the database owner, which RLS does not filter);
// - a stranger (a third user, party to nothing) sees none of them;
// - each of the three users sees only rows that are theirs, out of every row of the table, those
//   other suites are writing at the same time included.
// Which rows are a user's is written below per table; a table without a case fails by name.
import { randomInt } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResult, type Envelope, get, patch, post } from '../support/api.ts';
import { asUserSql, failureOf, testDb } from '../support/db.ts';
import { type Deal, escrowOp, fundWallet, newDeal } from '../support/escrows.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import cardAdd from '../../supabase/functions/card-add/handler.ts';
import disputePropose from '../../supabase/functions/dispute-propose/handler.ts';
import disputeRaise from '../../supabase/functions/dispute-raise/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import escrowList from '../../supabase/functions/escrow-list/handler.ts';
import messageSend from '../../supabase/functions/message-send/handler.ts';
import milestoneCreate from '../../supabase/functions/milestone-create/handler.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';
import profileNokUpdate from '../../supabase/functions/profile-nok-update/handler.ts';
import reviewSubmit from '../../supabase/functions/review-submit/handler.ts';
import virtualAccountCreate from '../../supabase/functions/virtual-account-create/handler.ts';

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/**
 * The rows of each public table that belong to a user: a condition on the row, with `$user` for
 * the user's id (it may read other tables). A new table needs its case here, and the fixture
 * below must give it rows.
 */
const PARTY = '$user in (e.initiator_id, e.counterparty_id)';
const OWNED_BY: Record<string, string> = {
  profiles: 'id = $user',
  next_of_kin: 'user_id = $user',
  transactions: 'user_id = $user',
  virtual_accounts: 'user_id = $user',
  saved_cards: 'user_id = $user',
  payout_accounts: 'user_id = $user',
  escrows: '$user in (initiator_id, counterparty_id)',
  conversations: `escrow_id in (select e.id from public.escrows e where ${PARTY})`,
  milestones: `escrow_id in (select e.id from public.escrows e where ${PARTY})`,
  notifications: 'user_id = $user',
  messages:
    `conversation_id in (select c.id from public.conversations c join public.escrows e on e.id = c.escrow_id where ${PARTY})`,
  reviews: '$user in (reviewer_id, reviewee_id)',
  disputes: `escrow_id in (select e.id from public.escrows e where ${PARTY})`,
  dispute_proposals:
    `dispute_id in (select d.id from public.disputes d join public.escrows e on e.id = d.escrow_id where ${PARTY})`,
};

interface Table {
  name: string;
  key: string[];
}

/** Every table of schema public (partitioned ones included) with its primary key's columns. */
async function publicTables(): Promise<Table[]> {
  return testDb()<Table[]>`
    select c.relname as name,
           coalesce((select array_agg(a.attname::text order by k.i)
                       from pg_index x
                       cross join lateral unnest(x.indkey::int2[]) with ordinality as k(attnum, i)
                       join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum
                      where x.indrelid = c.oid and x.indisprimary), '{}') as key
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
       and not exists (select 1 from pg_depend d
                        where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
     order by 1`;
}

/** The condition of `table` for the user given as parameter $n. */
const owned = (table: string, n: number) => `(${(OWNED_BY[table] as string).replaceAll('$user', () => `$${n}::uuid`)})`;
const rowKey = (t: Table) => `row(${t.key.map(ident).join(', ')})::text`;

/**
 * What `userId` sees of the table under RLS: the primary keys (as text) of the visible rows, or
 * 'denied' when the role may not read the table at all (which hides every row too).
 */
async function visibleKeys(userId: string, t: Table): Promise<string[] | 'denied'> {
  let keys: string[] = [];
  const failure = await failureOf(async () => {
    const rows = await asUserSql(userId, (tx) => tx.unsafe(`select ${rowKey(t)} as key from public.${ident(t.name)}`));
    keys = (rows as unknown as { key: string }[]).map((r) => r.key);
  });
  if (failure) {
    expect(failure.code, `${t.name} as ${userId}: ${failure.message}`).toBe('42501');
    return 'denied';
  }
  return keys;
}

/** Of these keys of the table, how many rows are not the user's (counted by the owner role). */
async function notOwned(t: Table, keys: string[], userId: string): Promise<number> {
  if (keys.length === 0) return 0;
  const rows = await testDb().unsafe(
    `select count(*)::int as n from public.${ident(t.name)}
      where ${rowKey(t)} = any($1::text[]) and ${owned(t.name, 2)} is not true`,
    [keys, userId],
  );
  return (rows as unknown as { n: number }[])[0]?.n ?? 0;
}

// ---- fixture: rows in every table, made through the API -----------------------------------------

let deal: Deal;
let owner: TestUser; // initiator and payer of the escrow
let party: TestUser; // its counterparty
let stranger: TestUser; // party to nothing
let milestoneId: string;

function ok<R extends ApiResult<Envelope<unknown>>>(res: R, status = 200): R['body']['data'] {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res.body.data;
}

beforeAll(async () => {
  [deal, stranger] = await Promise.all([
    // the owner funds a total charge above NGN 20,000 (tier 0's single limit): tier 1
    newDeal({ category: 'hiring', amount: 20_000, title: 'Shop website', payerTier: 1 }),
    signUp({ first_name: 'Stranger' }),
  ]);
  owner = deal.initiator;
  party = deal.counterparty;
  const milestone = { escrow_id: deal.escrowId, title: 'Home page', amount: 5_000 };
  milestoneId = ok(await post(milestoneCreate, milestone, { token: party.accessToken }), 201).id;
  // the wallet: a top-up (transactions), then the escrow funded from it and accepted (notifications)
  await fundWallet(owner, deal.feeBreakdown.total_charge);
  ok(await escrowOp('escrow-fund', owner, deal.escrowId, { method: 'wallet' }));
  ok(await escrowOp('escrow-accept', party, deal.escrowId));
  // a message from each party in the escrow's conversation
  for (const [sender, content] of [[owner, 'Deposit sent'], [party, 'Starting Monday']] as const) {
    ok(
      await post(messageSend, { conversation_id: deal.conversationId, content }, { token: sender.accessToken }),
      201,
    );
  }
  const nok = {
    first_name: 'Ngozi',
    last_name: 'Kin',
    phone: '08030000000',
    address: '1 Broad Street, Lagos',
    relationship: 'Parent',
  };
  ok(await patch(profileNokUpdate, nok, { token: owner.accessToken }));
  const suffix = `${Date.now()}${randomInt(0, 1_000_000)}`;
  const card = {
    authorization_code: `AUTH_st_${suffix}`,
    last4: '4081',
    brand: 'visa',
    exp_month: '12',
    exp_year: '2030',
    signature: `SIG_st_${suffix}`,
  };
  await paystack.authorizeUser(owner.id, card.authorization_code);
  ok(await post(cardAdd, card, { token: owner.accessToken }), 201);
  const account = `3${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;
  await paystack.registerAccount('058', account, 'COU OBI');
  const payout = { bank_code: '058', bank_name: 'GTBank', account_number: account, account_name: 'Cou Obi' };
  ok(await post(payoutAdd, payout, { token: party.accessToken }), 201);
  ok(await post(virtualAccountCreate, {}, { token: owner.accessToken }));
  // the deal done: released by the owner (the payer), who then reviews the party (reviews)
  ok(await escrowOp('escrow-release', owner, deal.escrowId));
  ok(await post(reviewSubmit, { escrow_id: deal.escrowId, rating: 4 }, { token: owner.accessToken }), 201);
  // a second escrow between them, funded and accepted, then disputed by the party, with the owner's proposal
  const second = ok(
    await post(escrowCreate, {
      category: 'goods_products',
      payer_role: 'initiator',
      title: 'Shop shelves',
      counterparty_phone: party.phone,
      amount: 3_000,
    }, { token: owner.accessToken }),
    201,
  );
  await fundWallet(owner, second.fee_breakdown.total_charge);
  ok(await escrowOp('escrow-fund', owner, second.escrow_id, { method: 'wallet' }));
  ok(await escrowOp('escrow-accept', party, second.escrow_id));
  const dispute = {
    escrow_id: second.escrow_id,
    reason_code: 'item_damaged',
    reason: 'Two shelves arrived broken',
  } as const;
  ok(await post(disputeRaise, dispute, { token: party.accessToken }), 201);
  const proposal = { escrow_id: second.escrow_id, outcome: 'split', payee_amount: 2_000 } as const;
  ok(await post(disputePropose, proposal, { token: owner.accessToken }), 201);
  // what the stranger may do: read their own things (none of which is the owners')
  ok(await get(escrowList, { token: stranger.accessToken }));
});

// ---- the checks ----------------------------------------------------------------------------------

describe('RLS of every public table, as a stranger and as each party', () => {
  it('every table in schema public has a case here, with a primary key to name its rows', async () => {
    const tables = await publicTables();
    const names = tables.map((t) => t.name);
    expect(names.length).toBeGreaterThan(0);
    const uncovered = names.filter((n) => !Object.hasOwn(OWNED_BY, n));
    expect(uncovered, 'tables with no case in OWNED_BY: add one, and rows in the fixture').toEqual([]);
    const gone = Object.keys(OWNED_BY).filter((n) => !names.includes(n));
    expect(gone, 'cases in OWNED_BY for tables that no longer exist').toEqual([]);
    expect(tables.filter((t) => t.key.length === 0).map((t) => t.name), 'tables without a primary key').toEqual([]);
  });

  it.each(Object.keys(OWNED_BY).sort())("public.%s: a stranger sees none of the owners' rows", async (name) => {
    const t = (await publicTables()).find((x) => x.name === name);
    expect(t, `public.${name} is not in the database`).toBeDefined();
    const table = t as Table;
    // the rows are there: the owner role, which RLS does not filter, finds them
    const [stored] = (await testDb().unsafe(
      `select count(*)::int as n from public.${ident(name)} where ${owned(name, 1)} or ${owned(name, 2)}`,
      [owner.id, party.id],
    )) as unknown as { n: number }[];
    expect(stored?.n, `the fixture made no row of public.${name} for its two users: give it one`).toBeGreaterThan(0);

    const seen = await visibleKeys(stranger.id, table);
    if (seen !== 'denied') {
      const [theirs] = (await testDb().unsafe(
        `select count(*)::int as n from public.${ident(name)}
          where ${rowKey(table)} = any($1::text[]) and (${owned(name, 2)} or ${owned(name, 3)})`,
        [seen, owner.id, party.id],
      )) as unknown as { n: number }[];
      expect(theirs?.n, `the stranger sees ${theirs?.n} of the owners' rows of public.${name}`).toBe(0);
    }
  });

  it.each(Object.keys(OWNED_BY).sort())('public.%s: each user sees only their own rows', async (name) => {
    const table = (await publicTables()).find((x) => x.name === name) as Table;
    for (const [who, user] of [['stranger', stranger], ['owner', owner], ['party', party]] as const) {
      const seen = await visibleKeys(user.id, table);
      if (seen === 'denied') continue;
      const foreign = await notOwned(table, seen, user.id);
      expect(foreign, `rows of public.${name} the ${who} sees that are not theirs`).toBe(0);
    }
  });

  it('the parties see their escrow, conversation and milestone; the stranger asks for them by id in vain', async () => {
    const ids = async (id: string) =>
      asUserSql(id, async (tx) => ({
        escrow: (await tx`select 1 from public.escrows where id = ${deal.escrowId}`).length,
        conversation: (await tx`select 1 from public.conversations where id = ${deal.conversationId}`).length,
        milestone: (await tx`select 1 from public.milestones where id = ${milestoneId}`).length,
      }));
    const all = { escrow: 1, conversation: 1, milestone: 1 };
    expect(await ids(owner.id)).toEqual(all);
    expect(await ids(party.id)).toEqual(all);
    expect(await ids(stranger.id)).toEqual({ escrow: 0, conversation: 0, milestone: 0 });
  });
});
