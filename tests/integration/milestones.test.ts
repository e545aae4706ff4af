// Milestones of hiring escrows through the real HTTP server: milestone-create, milestone-update,
// milestone-list, and the rest of their life (milestone-approve, milestone-complete,
// milestone-release), with the money checked in the ledger: every release pays the payee the
// milestone less its share of the seller fee, the hold ends at exactly zero, and no amount of
// concurrency releases more than the escrow holds.
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type BodyOf, type DataOf, expectError as refused, expectOk as ok, get, patch, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { kobo } from '../support/money.ts';
import { paystack } from '../support/paystack.ts';
import {
  type Deal,
  escrowOp,
  escrowStatus,
  fundedDeal,
  fundWallet,
  milestoneOp as opM,
  newDeal,
  payerCanFund,
} from '../support/escrows.ts';
import { raiseTier } from '../support/kyc.ts';
import { holdKobo, systemShares, walletKobo } from '../support/ledger.ts';
import { newPhone, signUp, type TestUser, verifyPhone } from '../support/users.ts';
import authSignup from '../../supabase/functions/auth-signup/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';
import milestoneApprove from '../../supabase/functions/milestone-approve/handler.ts';
import milestoneCreate from '../../supabase/functions/milestone-create/handler.ts';
import milestoneList from '../../supabase/functions/milestone-list/handler.ts';
import milestoneRelease from '../../supabase/functions/milestone-release/handler.ts';
import milestoneUpdate from '../../supabase/functions/milestone-update/handler.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MILESTONE_KEYS = [
  'accepted_at',
  'amount',
  'changes_note',
  'completed_at',
  'counterparty_approved',
  'created_at',
  'created_by',
  'description',
  'due_date',
  'escrow_id',
  'id',
  'initiator_approved',
  'milestone_index',
  'release_tx_id',
  'released_at',
  'status',
  'title',
  'updated_at',
];

const createM = (user: TestUser, body: BodyOf<typeof milestoneCreate>) =>
  post(milestoneCreate, body, { token: user.accessToken });
const updateM = (user: TestUser, body: BodyOf<typeof milestoneUpdate>) =>
  patch(milestoneUpdate, body, { token: user.accessToken });
const listM = (user: TestUser, escrowId: string) =>
  get(milestoneList, { token: user.accessToken, query: { escrow_id: escrowId } });

/** A milestone as the endpoints answer it. */
type Milestone = DataOf<typeof milestoneCreate>;

/** floor(fee * after / amount) - floor(fee * before / amount): a release's cumulative share of a fee. */
function shareOf(feeKobo: number, amountKobo: number, beforeKobo: number, afterKobo: number): number {
  const f = BigInt(feeKobo);
  const a = BigInt(amountKobo);
  return Number((f * BigInt(afterKobo)) / a - (f * BigInt(beforeKobo)) / a);
}

/** A hiring escrow (initiator = client = payer by default), unfunded. */
const hiringDeal = (amount = 10_000, payerRole: 'initiator' | 'counterparty' = 'initiator') =>
  newDeal({ category: 'hiring', amount, payerRole, title: 'Logo design' });

/** A funded, accepted hiring escrow. */
const fundedHiring = (amount = 10_000, payerRole: 'initiator' | 'counterparty' = 'initiator') =>
  fundedDeal({ category: 'hiring', amount, payerRole, title: 'Website build' });

/** The same for a total charge below the smallest top-up: the payer tops up NGN 100 and pays from it. */
async function fundedSmallHiring(amount: number): Promise<Deal> {
  const deal = await hiringDeal(amount);
  await payerCanFund(deal, 100); // the tier that lets the payer top up and fund it (tier 0 moves no money)
  await fundWallet(deal.payer, Math.max(100, deal.feeBreakdown.total_charge));
  ok(await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' }));
  ok(await escrowOp('escrow-accept', deal.counterparty, deal.escrowId));
  expect(await escrowStatus(deal)).toBe('funded');
  return deal;
}

/** Proposed by the freelancer, approved by the client: accepted. */
async function acceptedMilestone(deal: Deal, amount: number, title = 'Milestone'): Promise<Milestone> {
  const created = ok(await createM(deal.payee, { escrow_id: deal.escrowId, title, amount }), 201);
  const accepted = ok(await opM('milestone-approve', deal.payer, created.id));
  expect(accepted.status).toBe('accepted');
  return accepted;
}

/** ... and marked complete by the freelancer. */
async function completedMilestone(deal: Deal, amount: number, title = 'Milestone'): Promise<Milestone> {
  const m = await acceptedMilestone(deal, amount, title);
  const done = ok(await opM('milestone-complete', deal.payee, m.id));
  expect(done.status).toBe('completed');
  return done;
}

async function escrowRow(escrowId: string) {
  const [row] = await testDb()<
    {
      status: string;
      released_amount: string;
      amount: string;
      seller_fee: string;
      payer_fee: string;
      vat: string;
      total_charge: string;
    }[]
  >`
    select status, released_amount::text, amount::text, seller_fee::text, payer_fee::text, vat::text, total_charge::text
      from public.escrows where id = ${escrowId}`;
  return {
    status: row!.status,
    released: Number(row!.released_amount),
    amount: Number(row!.amount),
    sellerFee: Number(row!.seller_fee),
    payerFee: Number(row!.payer_fee),
    vat: Number(row!.vat),
    total: Number(row!.total_charge),
  };
}

// ---- milestone-create ----------------------------------------------------------------------

describe('milestone-create', () => {
  it('creates a proposed milestone and answers 201 with every field of the milestone object', async () => {
    const deal = await hiringDeal(50_000);
    const res = await createM(deal.counterparty, {
      escrow_id: deal.escrowId,
      title: 'Wireframes',
      description: 'Low-fidelity wireframes of every page',
      amount: 12_500.5,
      due_date: '2026-12-31',
    });
    const m = ok(res, 201);
    expect(Object.keys(m).sort()).toEqual(MILESTONE_KEYS);
    expect(m.id).toMatch(UUID);
    expect(m.escrow_id).toBe(deal.escrowId);
    expect(m.created_by).toBe(deal.counterparty.id);
    expect(m.milestone_index).toBe(1);
    expect(m.title).toBe('Wireframes');
    expect(m.description).toBe('Low-fidelity wireframes of every page');
    expect(m.amount).toBe(12_500.5);
    expect(m.due_date).toBe('2026-12-31');
    expect(m.status).toBe('proposed');
    expect(m.initiator_approved).toBe(false);
    expect(m.counterparty_approved).toBe(true);
    expect(m.changes_note).toBeNull();
    expect(m.release_tx_id).toBeNull();
    expect(m.accepted_at).toBeNull();
    expect(m.completed_at).toBeNull();
    expect(m.released_at).toBeNull();
    for (const k of ['created_at', 'updated_at'] as const) {
      expect(Number.isNaN(Date.parse(m[k])), `${k}: ${m[k]}`).toBe(false);
    }

    // stored exactly as answered
    const [row] = await testDb()<
      { amount: string; status: string }[]
    >`select amount::text, status from public.milestones where id = ${m.id}`;
    expect(row).toEqual({ amount: '1250050', status: 'proposed' });

    // optional fields left out
    const bare = ok(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'Final design', amount: 1 }), 201);
    expect(bare.description).toBeNull();
    expect(bare.due_date).toBeNull();
    expect(bare.amount).toBe(1);
  });

  it("sets the creator's approval flag and not the other party's", async () => {
    const deal = await hiringDeal();
    const byInitiator = ok(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'A', amount: 100 }), 201);
    expect(byInitiator.created_by).toBe(deal.initiator.id);
    expect([byInitiator.initiator_approved, byInitiator.counterparty_approved]).toEqual([true, false]);
    const byCounterparty = ok(
      await createM(deal.counterparty, { escrow_id: deal.escrowId, title: 'B', amount: 100 }),
      201,
    );
    expect(byCounterparty.created_by).toBe(deal.counterparty.id);
    expect([byCounterparty.initiator_approved, byCounterparty.counterparty_approved]).toEqual([false, true]);
    const created = await testDb()<
      { id: string }[]
    >`select id from public.milestones where created_by = ${deal.counterparty.id}`;
    expect(created.map((r) => r.id)).toEqual([byCounterparty.id]);
  });

  it('is for hiring escrows only: other categories are refused with 409', async () => {
    for (const category of ['goods_products', 'auto_dealership', 'p2p_crypto'] as const) {
      const deal = await newDeal({ category, amount: 10_000 });
      refused(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'Part one', amount: 100 }), 409);
      refused(await createM(deal.counterparty, { escrow_id: deal.escrowId, title: 'Part one', amount: 100 }), 409);
      const [n] = await testDb()<
        { n: number }[]
      >`select count(*)::int as n from public.milestones where escrow_id = ${deal.escrowId}`;
      expect(n!.n).toBe(0);
    }
  });

  it('works on a hiring escrow whose counterparty has not signed up yet', async () => {
    const initiator = await signUp();
    const phone = newPhone().e164;
    const created = await post(
      escrowCreate,
      { category: 'hiring', payer_role: 'initiator', title: 'Copywriting', counterparty_phone: phone, amount: 5_000 },
      { token: initiator.accessToken },
    );
    const escrowId = ok(created, 201).escrow_id as string;
    const m = ok(await createM(initiator, { escrow_id: escrowId, title: 'First draft', amount: 2_000 }), 201);
    expect([m.initiator_approved, m.counterparty_approved]).toEqual([true, false]);
    const edited = ok(await updateM(initiator, { milestone_id: m.id, amount: 2_500 }));
    expect([edited.initiator_approved, edited.counterparty_approved]).toEqual([true, false]);
    const again = ok(await opM('milestone-approve', initiator, m.id));
    expect(again.status).toBe('proposed');

    // the invited freelancer signs up with that number and agrees
    await verifyPhone(phone);
    const signed = ok(
      await post(authSignup, { phone, first_name: 'Late', last_name: 'Comer', password: 'a sound passphrase' }),
      201,
    );
    const token = signed.session.access_token as string;
    const [seen] = ok(await get(milestoneList, { token, query: { escrow_id: escrowId } }));
    expect(seen!.id).toBe(m.id);
    const accepted = ok(await post(milestoneApprove, { milestone_id: m.id }, { token }));
    expect(accepted).toMatchObject({ status: 'accepted', initiator_approved: true, counterparty_approved: true });
  });

  it('enforces the bounds of every field (400 with details)', async () => {
    const deal = await hiringDeal(100_000);
    const base = { escrow_id: deal.escrowId, title: 'Milestone', amount: 10 };
    const bad: [Record<string, unknown>, string][] = [
      [{ ...base, title: '' }, 'title'],
      [{ ...base, title: '   ' }, 'title'],
      [{ ...base, title: 'x'.repeat(201) }, 'title'],
      [{ ...base, title: 42 }, 'title'],
      [{ escrow_id: deal.escrowId, amount: 10 }, 'title'],
      [{ ...base, description: 'd'.repeat(2001) }, 'description'],
      [{ ...base, description: null }, 'description'],
      [{ ...base, amount: 0 }, 'amount'],
      [{ ...base, amount: -5 }, 'amount'],
      [{ ...base, amount: 0.001 }, 'amount'],
      [{ ...base, amount: 12.345 }, 'amount'],
      [{ ...base, amount: '10' }, 'amount'],
      [{ escrow_id: deal.escrowId, title: 'Milestone' }, 'amount'],
      [{ ...base, due_date: 'tomorrow' }, 'due_date'],
      [{ ...base, due_date: '2026-13-01' }, 'due_date'],
      [{ ...base, due_date: '2026-02-30' }, 'due_date'],
      [{ ...base, due_date: '2026-12-31T00:00:00Z' }, 'due_date'],
      [{ ...base, due_date: 20261231 }, 'due_date'],
      [{ ...base, escrow_id: 'not-a-uuid' }, 'escrow_id'],
      [{ title: 'Milestone', amount: 10 }, 'escrow_id'],
      [{ ...base, status: 'accepted' }, 'status'],
    ];
    for (const [body, field] of bad) {
      // @ts-expect-error the table holds bodies the schema refuses, on purpose
      const res = await createM(deal.initiator, body);
      expect(refused(res, 400), JSON.stringify(body).slice(0, 120)).toEqual([field]);
    }
    const [n] = await testDb()<
      { n: number }[]
    >`select count(*)::int as n from public.milestones where escrow_id = ${deal.escrowId}`;
    expect(n!.n).toBe(0);

    // the edges that are allowed
    const longest = ok(
      await createM(deal.initiator, { ...base, title: 't'.repeat(200), description: 'd'.repeat(2000) }),
      201,
    );
    expect(longest.title).toHaveLength(200);
    expect(longest.description).toHaveLength(2000);
    expect(ok(await createM(deal.initiator, { ...base, title: 'x', amount: 0.01 }), 201).amount).toBe(0.01);
    expect(ok(await createM(deal.initiator, { ...base, amount: 19.99 }), 201).amount).toBe(19.99);
    expect(ok(await createM(deal.initiator, { ...base, due_date: '2028-02-29' }), 201).due_date).toBe('2028-02-29');
  });

  it("answers 404 for an unknown escrow and for a stranger's escrow (nothing is created)", async () => {
    const deal = await hiringDeal();
    const stranger = await signUp({ first_name: 'Str' });
    const unknown = await createM(deal.initiator, {
      escrow_id: '00000000-0000-4000-8000-000000000000',
      title: 'A',
      amount: 100,
    });
    refused(unknown, 404);
    const foreign = await createM(stranger, { escrow_id: deal.escrowId, title: 'A', amount: 100 });
    refused(foreign, 404);
    expect(foreign.body.error).toBe(unknown.body.error);
    expect(ok(await listM(deal.initiator, deal.escrowId))).toEqual([]);
  });

  it('numbers milestones 1, 2, 3 in order of creation, whoever proposes them', async () => {
    const deal = await hiringDeal();
    const a = ok(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'One', amount: 100 }), 201);
    const b = ok(await createM(deal.counterparty, { escrow_id: deal.escrowId, title: 'Two', amount: 100 }), 201);
    const c = ok(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'Three', amount: 100 }), 201);
    expect([a.milestone_index, b.milestone_index, c.milestone_index]).toEqual([1, 2, 3]);
  });

  it('refuses milestones that would add up to more than the escrow amount (409)', async () => {
    const deal = await hiringDeal(10_000);
    ok(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'One', amount: 6_000 }), 201);
    refused(await createM(deal.counterparty, { escrow_id: deal.escrowId, title: 'Two', amount: 4_000.01 }), 409);
    refused(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'Two', amount: 10_000 }), 409);
    ok(await createM(deal.counterparty, { escrow_id: deal.escrowId, title: 'Two', amount: 4_000 }), 201);
    refused(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'Three', amount: 0.01 }), 409);
    const list = ok(await listM(deal.initiator, deal.escrowId));
    expect(list.map((m) => m.amount)).toEqual([6_000, 4_000]);
  });

  it('keeps the sum within the escrow amount and the numbering unique under 10 concurrent creations', async () => {
    const deal = await hiringDeal(10_000);
    const results = await Promise.all(
      Array.from(
        { length: 10 },
        (_, i) =>
          createM(i % 2 ? deal.initiator : deal.counterparty, {
            escrow_id: deal.escrowId,
            title: `Part ${i}`,
            amount: 1_500,
          }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 201, 201, 201, 409, 409, 409, 409]);
    const list = ok(await listM(deal.counterparty, deal.escrowId));
    expect(list.map((m) => m.milestone_index)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(list.reduce((s: number, m) => s + kobo(m.amount), 0)).toBe(900_000);
  });

  it('is refused once the escrow is over (cancelled: 409)', async () => {
    const deal = await hiringDeal();
    ok(await escrowOp('escrow-cancel', deal.initiator, deal.escrowId));
    refused(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'Late', amount: 100 }), 409);
  });
});

// ---- milestone-update ----------------------------------------------------------------------

describe('milestone-update', () => {
  it('edits a proposed milestone and answers with the milestone object; description and due_date can be cleared', async () => {
    const deal = await hiringDeal(10_000);
    const m = ok(
      await createM(deal.initiator, {
        escrow_id: deal.escrowId,
        title: 'Draft',
        description: 'First pass',
        amount: 1_000,
        due_date: '2026-12-01',
      }),
      201,
    );
    const edited = ok(
      await updateM(deal.initiator, {
        milestone_id: m.id,
        title: 'Draft v2',
        description: 'Second pass',
        amount: 1_500.25,
        due_date: '2027-01-15',
      }),
    );
    expect(Object.keys(edited).sort()).toEqual(MILESTONE_KEYS);
    expect(edited).toMatchObject({
      id: m.id,
      escrow_id: deal.escrowId,
      created_by: deal.initiator.id,
      milestone_index: 1,
      title: 'Draft v2',
      description: 'Second pass',
      amount: 1_500.25,
      due_date: '2027-01-15',
      status: 'proposed',
    });
    expect(Date.parse(edited.updated_at)).toBeGreaterThanOrEqual(Date.parse(m.updated_at));
    expect(edited.created_at).toBe(m.created_at);

    // one field at a time leaves the others alone
    const titled = ok(await updateM(deal.initiator, { milestone_id: m.id, title: 'Draft v3' }));
    expect(titled).toMatchObject({
      title: 'Draft v3',
      description: 'Second pass',
      amount: 1_500.25,
      due_date: '2027-01-15',
    });

    const cleared = ok(await updateM(deal.initiator, { milestone_id: m.id, description: null, due_date: null }));
    expect(cleared.description).toBeNull();
    expect(cleared.due_date).toBeNull();
    expect(cleared.title).toBe('Draft v3');
    expect(cleared.amount).toBe(1_500.25);

    const listed = ok(await listM(deal.counterparty, deal.escrowId));
    expect(listed).toEqual([cleared]);
  });

  it('enforces every bound (400 with details) and changes nothing', async () => {
    const deal = await hiringDeal(10_000);
    const m = ok(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'Draft', amount: 1_000 }), 201);
    const bad: [Record<string, unknown>, string][] = [
      [{ milestone_id: m.id, title: '' }, 'title'],
      [{ milestone_id: m.id, title: '  ' }, 'title'],
      [{ milestone_id: m.id, title: 'x'.repeat(201) }, 'title'],
      [{ milestone_id: m.id, title: null }, 'title'],
      [{ milestone_id: m.id, description: 'd'.repeat(2001) }, 'description'],
      [{ milestone_id: m.id, amount: 0 }, 'amount'],
      [{ milestone_id: m.id, amount: -1 }, 'amount'],
      [{ milestone_id: m.id, amount: 1.001 }, 'amount'],
      [{ milestone_id: m.id, amount: null }, 'amount'],
      [{ milestone_id: m.id, amount: '5' }, 'amount'],
      [{ milestone_id: m.id, due_date: 'soon' }, 'due_date'],
      [{ milestone_id: m.id, due_date: '2026-02-30' }, 'due_date'],
      [{ milestone_id: m.id, due_date: '2026-12-31T10:00:00Z' }, 'due_date'],
      [{ milestone_id: 'nope', title: 'x' }, 'milestone_id'],
      [{ title: 'x' }, 'milestone_id'],
      [{ milestone_id: m.id, status: 'accepted' }, 'status'],
      [{ milestone_id: m.id, escrow_id: deal.escrowId }, 'escrow_id'],
    ];
    for (const [body, field] of bad) {
      // an unknown field is reported as such (and, when it is the only change, as no change at all)
      // @ts-expect-error the table holds bodies the schema refuses, on purpose
      expect(refused(await updateM(deal.initiator, body), 400), JSON.stringify(body).slice(0, 120)).toContain(field);
    }
    const [row] = await testDb()<
      { title: string; amount: string }[]
    >`select title, amount::text from public.milestones where id = ${m.id}`;
    expect(row).toEqual({ title: 'Draft', amount: '100000' });
    const edges = ok(
      await updateM(deal.initiator, {
        milestone_id: m.id,
        title: 't'.repeat(200),
        description: 'd'.repeat(2000),
        amount: 0.01,
      }),
    );
    expect(edges.title).toHaveLength(200);
    expect(edges.description).toHaveLength(2000);
    expect(edges.amount).toBe(0.01);
  });

  it('refuses an empty change with 400', async () => {
    const deal = await hiringDeal();
    const m = ok(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'Draft', amount: 1_000 }), 201);
    refused(await updateM(deal.initiator, { milestone_id: m.id }), 400);
    // @ts-expect-error an empty body, on purpose
    refused(await updateM(deal.initiator, {}), 400);
    const [row] = await testDb()<{ updated_at: Date }[]>`select updated_at from public.milestones where id = ${m.id}`;
    expect(row!.updated_at.toISOString().slice(0, 23)).toBe(m.updated_at.slice(0, 23));
  });

  it("resets the other party's approval; the editor's approval stands", async () => {
    const deal = await hiringDeal();
    const m = ok(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'Draft', amount: 1_000 }), 201);
    expect([m.initiator_approved, m.counterparty_approved]).toEqual([true, false]);
    const byCounterparty = ok(await updateM(deal.counterparty, { milestone_id: m.id, amount: 1_200 }));
    expect([byCounterparty.initiator_approved, byCounterparty.counterparty_approved]).toEqual([false, true]);
    expect(byCounterparty.status).toBe('proposed');
    const byInitiator = ok(await updateM(deal.initiator, { milestone_id: m.id, title: 'Draft, agreed scope' }));
    expect([byInitiator.initiator_approved, byInitiator.counterparty_approved]).toEqual([true, false]);
    // the other party's approval makes it accepted: both have agreed to the current terms
    const accepted = ok(await opM('milestone-approve', deal.counterparty, m.id));
    expect(accepted).toMatchObject({
      status: 'accepted',
      initiator_approved: true,
      counterparty_approved: true,
      amount: 1_200,
    });
    expect(accepted.accepted_at).not.toBeNull();
  });

  it('edits only while proposed: after acceptance the answer is 409 and nothing changes', async () => {
    const deal = await hiringDeal();
    const m = await acceptedMilestone(deal, 1_000, 'Agreed');
    refused(await updateM(deal.payee, { milestone_id: m.id, amount: 2_000 }), 409);
    refused(await updateM(deal.payer, { milestone_id: m.id, title: 'Changed' }), 409);
    refused(await updateM(deal.payer, { milestone_id: m.id, description: null }), 409);
    const [after] = ok(await listM(deal.payer, deal.escrowId));
    expect(after).toMatchObject({ title: 'Agreed', amount: 1_000, status: 'accepted' });
  });

  it("keeps the sum within the escrow amount (409) and counts the milestone's own amount once", async () => {
    const deal = await hiringDeal(10_000);
    const a = ok(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'A', amount: 6_000 }), 201);
    ok(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'B', amount: 3_000 }), 201);
    refused(await updateM(deal.initiator, { milestone_id: a.id, amount: 7_000.01 }), 409);
    expect(ok(await updateM(deal.initiator, { milestone_id: a.id, amount: 7_000 })).amount).toBe(7_000);
  });

  it('answers 404 to a stranger and for an unknown milestone', async () => {
    const deal = await hiringDeal();
    const stranger = await signUp({ first_name: 'Str' });
    const m = ok(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'Draft', amount: 1_000 }), 201);
    refused(await updateM(stranger, { milestone_id: m.id, title: 'Mine now' }), 404);
    refused(await updateM(deal.initiator, { milestone_id: '00000000-0000-4000-8000-000000000000', title: 'x' }), 404);
    const [after] = ok(await listM(deal.initiator, deal.escrowId));
    expect(after!.title).toBe('Draft');
  });
});

// ---- milestone-list ------------------------------------------------------------------------

describe('milestone-list', () => {
  it("lists an escrow's milestones by milestone_index to both parties; strangers get 404", async () => {
    const deal = await hiringDeal(10_000);
    const stranger = await signUp({ first_name: 'Str' });
    expect(ok(await listM(deal.initiator, deal.escrowId))).toEqual([]);
    const made: Milestone[] = [];
    for (const [i, title] of ['One', 'Two', 'Three', 'Four'].entries()) {
      made.push(
        ok(
          await createM(i % 2 ? deal.counterparty : deal.initiator, {
            escrow_id: deal.escrowId,
            title,
            amount: 100 + i,
          }),
          201,
        ),
      );
    }
    // an edit of the first one (a later updated_at) does not move it
    ok(await updateM(deal.initiator, { milestone_id: made[0]!.id, title: 'One, edited' }));
    const byInitiator = ok(await listM(deal.initiator, deal.escrowId));
    expect(byInitiator.map((m) => m.milestone_index)).toEqual([1, 2, 3, 4]);
    expect(byInitiator.map((m) => m.title)).toEqual(['One, edited', 'Two', 'Three', 'Four']);
    expect(byInitiator.map((m) => m.id)).toEqual(made.map((m) => m.id));
    for (const m of byInitiator) expect(Object.keys(m).sort()).toEqual(MILESTONE_KEYS);
    expect(ok(await listM(deal.counterparty, deal.escrowId))).toEqual(byInitiator);

    refused(await listM(stranger, deal.escrowId), 404);
    refused(await listM(deal.initiator, '00000000-0000-4000-8000-000000000000'), 404);
    expect(refused(await listM(deal.initiator, 'nope'), 400)).toEqual(['escrow_id']);
    expect(refused(await get(milestoneList, { token: deal.initiator.accessToken }), 400)).toEqual(['escrow_id']);
    refused(await get(milestoneList, { query: { escrow_id: deal.escrowId } }), 401);
  });
});

// ---- approve, complete, release ------------------------------------------------------------

describe('milestone-approve / milestone-complete / milestone-release', () => {
  describe('milestone-approve', () => {
    it("approve: the other party's approval makes it accepted; the creator's own approval changes nothing", async () => {
      const deal = await hiringDeal();
      const stranger = await signUp({ first_name: 'Str' });
      const m = ok(await createM(deal.payee, { escrow_id: deal.escrowId, title: 'Design', amount: 1_000 }), 201);
      const self = ok(await opM('milestone-approve', deal.payee, m.id));
      expect(self).toMatchObject({
        status: 'proposed',
        initiator_approved: false,
        counterparty_approved: true,
        accepted_at: null,
      });
      refused(await opM('milestone-approve', stranger, m.id), 404);
      refused(await opM('milestone-approve', deal.payer, '00000000-0000-4000-8000-000000000000'), 404);
      const accepted = ok(await opM('milestone-approve', deal.payer, m.id));
      expect(accepted).toMatchObject({ status: 'accepted', initiator_approved: true, counterparty_approved: true });
      expect(Number.isNaN(Date.parse(accepted.accepted_at!))).toBe(false);
      refused(await opM('milestone-approve', deal.payer, m.id), 409);
      refused(await opM('milestone-approve', deal.payee, m.id), 409);
    });
  });

  describe('milestone-complete', () => {
    it('complete: only the freelancer (payee), only an accepted milestone', async () => {
      const deal = await hiringDeal();
      const stranger = await signUp({ first_name: 'Str' });
      const proposed = ok(await createM(deal.payer, { escrow_id: deal.escrowId, title: 'Proposed', amount: 500 }), 201);
      const early = await opM('milestone-complete', deal.payee, proposed.id);
      refused(early, 409);
      expect(early.body).toMatchObject({
        code: 'milestone_wrong_state',
        error: 'only an accepted milestone can be completed (this one is proposed)',
      });
      const m = await acceptedMilestone(deal, 1_000, 'Accepted');
      const byClient = await opM('milestone-complete', deal.payer, m.id);
      refused(byClient, 403);
      expect(byClient.body).toMatchObject({
        code: 'escrow_wrong_party',
        error: 'only the freelancer can mark a milestone complete',
      });
      expect((await opM('milestone-complete', stranger, m.id)).body).toMatchObject({ code: 'escrow_not_found' });
      const unknown = await opM('milestone-complete', deal.payee, '00000000-0000-4000-8000-000000000000');
      refused(unknown, 404);
      expect(unknown.body).toMatchObject({ code: 'milestone_not_found', error: 'milestone not found' });
      const done = ok(await opM('milestone-complete', deal.payee, m.id));
      expect(done.status).toBe('completed');
      expect(Number.isNaN(Date.parse(done.completed_at!))).toBe(false);
      expect(done.released_at).toBeNull();
      refused(await opM('milestone-complete', deal.payee, m.id), 409);
    });
  });

  it('roles follow payer_role: with the counterparty paying, the initiator is the freelancer', async () => {
    const deal = await fundedHiring(10_000, 'counterparty');
    expect(deal.payee.id).toBe(deal.initiator.id);
    const m = ok(await createM(deal.initiator, { escrow_id: deal.escrowId, title: 'Work', amount: 4_000 }), 201);
    ok(await opM('milestone-approve', deal.counterparty, m.id));
    refused(await opM('milestone-complete', deal.counterparty, m.id), 403);
    ok(await opM('milestone-complete', deal.initiator, m.id));
    refused(await opM('milestone-release', deal.initiator, m.id), 403);
    const released = ok(await opM('milestone-release', deal.counterparty, m.id));
    expect(released.status).toBe('released');
    expect(await walletKobo(deal.initiator.id)).toBe(
      400_000 - shareOf(kobo(deal.feeBreakdown.seller_fee), 1_000_000, 0, 400_000),
    );
  });

  describe('milestone-release', () => {
    it('release: only the client (payer), only a completed milestone of a funded escrow', async () => {
      const unfunded = await hiringDeal(10_000);
      const early = await completedMilestone(unfunded, 2_000);
      const notFunded = await opM('milestone-release', unfunded.payer, early.id);
      refused(notFunded, 409);
      expect(notFunded.body).toMatchObject({ code: 'escrow_wrong_state' });
      expect(notFunded.body.error).toMatch(/^cannot release a milestone of an escrow that is /);
      const [row] = await testDb()<{ status: string }[]>`select status from public.milestones where id = ${early.id}`;
      expect(row!.status).toBe('completed');

      const deal = await fundedHiring(10_000);
      const stranger = await signUp({ first_name: 'Str' });
      const accepted = await acceptedMilestone(deal, 1_000, 'Not done yet');
      refused(await opM('milestone-release', deal.payer, accepted.id), 409);
      const proposed = ok(
        await createM(deal.payee, { escrow_id: deal.escrowId, title: 'Proposed', amount: 1_000 }),
        201,
      );
      refused(await opM('milestone-release', deal.payer, proposed.id), 409);
      const done = await completedMilestone(deal, 2_000, 'Done');
      const byFreelancer = await opM('milestone-release', deal.payee, done.id);
      refused(byFreelancer, 403);
      expect(byFreelancer.body).toMatchObject({
        code: 'escrow_wrong_party',
        error: 'only the client can release a milestone',
      });
      refused(await opM('milestone-release', stranger, done.id), 404);
      const unknown = await opM('milestone-release', deal.payer, '00000000-0000-4000-8000-000000000000');
      refused(unknown, 404);
      expect(unknown.body).toMatchObject({ code: 'milestone_not_found' });
      expect(await walletKobo(deal.payee.id)).toBe(0);
      expect(await holdKobo(deal.escrowId)).toBe(kobo(deal.feeBreakdown.total_charge));
    });

    it('release pays the freelancer the amount less its share of the seller fee, from the hold, with release_tx_id a ledger transfer', async () => {
      const deal = await fundedHiring(10_000);
      const e = await escrowRow(deal.escrowId);
      const holdBefore = await holdKobo(deal.escrowId);
      expect(holdBefore).toBe(e.total);
      const done = await completedMilestone(deal, 3_000.5, 'Phase one');
      const released = ok(await opM('milestone-release', deal.payer, done.id));
      expect(released.status).toBe('released');
      expect(released.release_tx_id).toMatch(UUID);
      expect(Number.isNaN(Date.parse(released.released_at!))).toBe(false);
      expect(released.completed_at).toBe(done.completed_at);

      const [transfer] = await testDb()<{ idempotency_key: string; kind: string }[]>`
      select idempotency_key, kind from private.ledger_transfers where id = ${released.release_tx_id}`;
      expect(transfer).toEqual({ idempotency_key: `milestone-release:${done.id}`, kind: 'escrow_release' });
      // and that transfer leads back to this milestone only
      const byTransfer = await testDb()<
        { id: string }[]
      >`select id from public.milestones where release_tx_id = ${released.release_tx_id}`;
      expect(byTransfer.map((r) => r.id)).toEqual([done.id]);

      const amount = 300_050;
      const sellerShare = shareOf(e.sellerFee, e.amount, 0, amount);
      const payerShare = shareOf(e.payerFee, e.amount, 0, amount);
      const vatShare = shareOf(e.vat, e.amount, 0, amount);
      expect(await walletKobo(deal.payee.id)).toBe(amount - sellerShare);
      expect(await holdKobo(deal.escrowId)).toBe(holdBefore - amount - payerShare - vatShare);
      expect(await escrowStatus(deal)).toBe('funded');
      expect((await escrowRow(deal.escrowId)).released).toBe(amount);

      // the payee's ledger line for it
      const [tx] = await testDb()<{ amount: string; milestone_id: string; type: string; user_id: string }[]>`
      select t.amount::text, t.milestone_id, t.type, t.user_id from private.ledger_transfers lt
        join public.transactions t on t.id = lt.transaction_id where lt.id = ${released.release_tx_id}`;
      expect(tx).toEqual({
        amount: String(amount - sellerShare),
        milestone_id: done.id,
        type: 'escrow_release',
        user_id: deal.payee.id,
      });

      // a second release of the same milestone changes nothing
      refused(await opM('milestone-release', deal.payer, done.id), 409);
      expect(await walletKobo(deal.payee.id)).toBe(amount - sellerShare);
    });

    it('releasing milestones that add up to the escrow amount releases the escrow and empties the hold exactly (odd amounts)', async () => {
      const deal = await fundedHiring(10_000.03);
      const e = await escrowRow(deal.escrowId);
      expect(e.amount).toBe(1_000_003);
      const parts = [333_301, 333_301, 333_401];
      const ms: Milestone[] = [];
      for (const [i, p] of parts.entries()) ms.push(await completedMilestone(deal, p / 100, `Part ${i + 1}`));

      let released = 0;
      let wallet = 0;
      for (const [i, m] of ms.entries()) {
        const r = ok(await opM('milestone-release', deal.payer, m.id));
        expect(r.status).toBe('released');
        const p = parts[i]!;
        wallet += p - shareOf(e.sellerFee, e.amount, released, released + p);
        released += p;
        expect(await walletKobo(deal.payee.id)).toBe(wallet);
        const hold = await holdKobo(deal.escrowId);
        expect(hold).toBe(
          e.total - released - shareOf(e.payerFee, e.amount, 0, released) - shareOf(e.vat, e.amount, 0, released),
        );
        expect(await escrowStatus(deal)).toBe(i < 2 ? 'funded' : 'released');
      }
      expect(wallet).toBe(e.amount - e.sellerFee);
      expect(wallet).toBe(kobo(deal.feeBreakdown.seller_payout));
      expect(await holdKobo(deal.escrowId)).toBe(0);
      const escrow = ok(
        await get(escrowGet, { token: deal.payee.accessToken, query: { escrow_id: deal.escrowId } }),
      );
      expect(escrow.status).toBe('released');
      expect(escrow.released_at).not.toBeNull();
      expect(escrow.released_amount).toBe(10_000.03);

      // the platform got exactly the fees and VAT
      const sys = await systemShares(ms.map((m) => `milestone-release:${m.id}`));
      expect(sys.fees).toBe(e.sellerFee + e.payerFee);
      expect(sys.vat).toBe(e.vat);

      // nothing more can leave: the escrow is released
      refused(await escrowOp('escrow-release', deal.payer, deal.escrowId), 409);
      refused(await escrowOp('escrow-refund', deal.payee, deal.escrowId), 409);
    });

    it('ends with an empty hold and the exact seller payout for other odd amounts and splits', async () => {
      const cases: [number, number[]][] = [
        [100.01, [33.33, 33.33, 33.35]], // the minimum fee dominates
        [99_999.99, [0.01, 33_333.33, 66_666.65]],
        [7, [1, 1, 1, 1, 1, 1, 1]], // the fee is the whole amount: the payee gets half
      ];
      for (const [amount, parts] of cases) {
        const deal = await fundedSmallHiring(amount);
        const e = await escrowRow(deal.escrowId);
        const ms: Milestone[] = [];
        for (const [i, p] of parts.entries()) ms.push(await completedMilestone(deal, p, `Part ${i + 1}`));
        let released = 0;
        let wallet = 0;
        for (const [i, m] of ms.entries()) {
          ok(await opM('milestone-release', deal.payer, m.id));
          const p = kobo(parts[i]!);
          wallet += p - shareOf(e.sellerFee, e.amount, released, released + p);
          released += p;
          expect(await walletKobo(deal.payee.id), `${amount}: release ${i + 1}`).toBe(wallet);
        }
        expect(wallet, `${amount}`).toBe(e.amount - e.sellerFee);
        expect(await holdKobo(deal.escrowId), `${amount}`).toBe(0);
        expect(await escrowStatus(deal)).toBe('released');
      }
    });

    it('never releases more than the escrow amount under 10 concurrent milestone-release calls', async () => {
      const deal = await fundedHiring(10_000.03);
      const e = await escrowRow(deal.escrowId);
      const parts = [333_301, 333_301, 333_401];
      const ms: Milestone[] = [];
      for (const [i, p] of parts.entries()) ms.push(await completedMilestone(deal, p / 100, `Part ${i + 1}`));
      const calls = Array.from({ length: 10 }, (_, i) => ms[i % 3]!.id as string);
      const results = await Promise.all(calls.map((id) => opM('milestone-release', deal.payer, id)));
      for (const [i, m] of ms.entries()) {
        const mine = results.filter((_, j) => calls[j] === m.id);
        expect(mine.filter((r) => r.status === 200), `milestone ${i + 1}`).toHaveLength(1);
        for (const r of mine.filter((r) => r.status !== 200)) refused(r, 409);
      }
      const after = await escrowRow(deal.escrowId);
      expect(after.released).toBe(e.amount);
      expect(after.status).toBe('released');
      expect(await holdKobo(deal.escrowId)).toBe(0);
      expect(await walletKobo(deal.payee.id)).toBe(e.amount - e.sellerFee);
      const list = ok(await listM(deal.payer, deal.escrowId));
      expect(list.map((m) => m.status)).toEqual(['released', 'released', 'released']);
      expect(new Set(list.map((m) => m.release_tx_id)).size).toBe(3);
      const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_release'`;
      expect(n!.n).toBe(3);
    });

    it('a milestone release starts a payout when the freelancer has a default payout account', async () => {
      const deal = await fundedHiring(10_000);
      const e = await escrowRow(deal.escrowId);
      // the freelancer at tier 1: at tier 0 a release stays in the wallet (no payout starts) and no
      // top-up is allowed
      expect(await raiseTier(deal.payee.id, 1)).toBe(1);
      await fundWallet(deal.payee, 100); // the wallet may hold other money: only the release goes out
      const acct = `3${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;
      await paystack.registerAccount('058', acct, 'COU OBI');
      ok(
        await post(
          payoutAdd,
          { bank_code: '058', bank_name: 'GTBank', account_number: acct, account_name: 'Cou Obi' },
          { token: deal.payee.accessToken },
        ),
        201,
      );
      const done = await completedMilestone(deal, 5_000, 'Half');
      ok(await opM('milestone-release', deal.payer, done.id));
      const net = 500_000 - shareOf(e.sellerFee, e.amount, 0, 500_000);
      const [payout] = await testDb()<{ id: string; amount: string; status: string; attempted: boolean }[]>`
      select id, amount::text, status::text, metadata ? 'transfer_attempted_at' as attempted
        from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_payout'`;
      expect(payout).toMatchObject({ amount: String(net), status: 'pending', attempted: true });
      expect(await walletKobo(deal.payee.id)).toBe(10_000);
      const sent = (await paystack.requests('/transfer')).filter((r) => r.body?.reference === payout!.id);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.body.amount).toBe(net);
    });
  });

  it('milestone-create and milestone-release honour Idempotency-Key: a replay changes nothing', async () => {
    const deal = await fundedHiring(10_000);
    const body = { escrow_id: deal.escrowId, title: 'Once', amount: 2_000 };
    const headers = { 'Idempotency-Key': `create-${randomInt(0, 1e9)}` };
    const first = await post(milestoneCreate, body, { token: deal.payee.accessToken, headers });
    const replay = await post(milestoneCreate, body, { token: deal.payee.accessToken, headers });
    expect(ok(first, 201).id).toBe(ok(replay, 201).id);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(ok(await listM(deal.payer, deal.escrowId))).toHaveLength(1);

    const m = first.body.data;
    ok(await opM('milestone-approve', deal.payer, m.id));
    ok(await opM('milestone-complete', deal.payee, m.id));
    const key = { 'Idempotency-Key': `release-${randomInt(0, 1e9)}` };
    const r1 = await post(milestoneRelease, { milestone_id: m.id }, { token: deal.payer.accessToken, headers: key });
    const r2 = await post(milestoneRelease, { milestone_id: m.id }, { token: deal.payer.accessToken, headers: key });
    expect(ok(r1).status).toBe('released');
    expect(ok(r2)).toEqual(r1.body.data);
    expect(r2.headers.get('idempotent-replayed')).toBe('true');
    const e = await escrowRow(deal.escrowId);
    expect(await walletKobo(deal.payee.id)).toBe(200_000 - shareOf(e.sellerFee, e.amount, 0, 200_000));
  });

  it('concurrent releases of different milestones and an escrow-release never pay out past the escrow amount', async () => {
    const deal = await fundedHiring(9_000);
    const e = await escrowRow(deal.escrowId);
    const ms: Milestone[] = [];
    for (let i = 0; i < 3; i++) ms.push(await completedMilestone(deal, 3_000, `Part ${i + 1}`));
    const results = await Promise.all([
      ...ms.flatMap((m) => [opM('milestone-release', deal.payer, m.id), opM('milestone-release', deal.payer, m.id)]),
      escrowOp('escrow-release', deal.payer, deal.escrowId),
      escrowOp('escrow-release', deal.payer, deal.escrowId),
      escrowOp('escrow-refund', deal.payee, deal.escrowId),
    ]);
    for (const r of results) expect([200, 409]).toContain(r.status);
    const after = await escrowRow(deal.escrowId);
    expect(after.released).toBeLessThanOrEqual(e.amount);
    expect(await holdKobo(deal.escrowId)).toBe(0);
    const payer = await walletKobo(deal.payer.id);
    const payee = await walletKobo(deal.payee.id);
    // whatever won, the hold was split between the two wallets and the system accounts, no more
    if (after.status === 'released') {
      expect(after.released).toBe(e.amount);
      expect(payee).toBe(e.amount - e.sellerFee);
      expect(payer).toBe(0);
    } else {
      expect(after.status).toBe('refunded');
      const share = shareOf(e.payerFee, e.amount, 0, after.released) + shareOf(e.vat, e.amount, 0, after.released);
      expect(payer).toBe(e.total - after.released - share);
      expect(payee).toBe(after.released - shareOf(e.sellerFee, e.amount, 0, after.released));
    }
  });

  it('escrow-release after some milestones were released pays out only the remainder', async () => {
    const deal = await fundedHiring(10_000);
    const e = await escrowRow(deal.escrowId);
    const first = await completedMilestone(deal, 3_000, 'First');
    const second = await completedMilestone(deal, 2_000, 'Second');
    ok(await opM('milestone-release', deal.payer, first.id));
    const afterFirst = await walletKobo(deal.payee.id);
    expect(afterFirst).toBe(300_000 - shareOf(e.sellerFee, e.amount, 0, 300_000));

    const res = ok(await escrowOp('escrow-release', deal.payer, deal.escrowId));
    expect(res.status).toBe('released');
    // the whole escrow paid out exactly once: the payee has the seller payout, the hold is empty
    expect(await walletKobo(deal.payee.id)).toBe(e.amount - e.sellerFee);
    expect(await walletKobo(deal.payee.id) - afterFirst).toBe(
      700_000 - (e.sellerFee - shareOf(e.sellerFee, e.amount, 0, 300_000)),
    );
    expect(await holdKobo(deal.escrowId)).toBe(0);
    expect((await escrowRow(deal.escrowId)).released).toBe(e.amount);
    const [rel] = await testDb()<{ amount: string }[]>`
      select t.amount::text from public.transactions t where t.escrow_id = ${deal.escrowId} and t.type = 'escrow_release' and t.milestone_id is null`;
    expect(Number(rel!.amount)).toBe(e.amount - e.sellerFee - afterFirst);

    // the milestone still waiting cannot be paid a second time out of an empty hold
    refused(await opM('milestone-release', deal.payer, second.id), 409);
    expect(await walletKobo(deal.payee.id)).toBe(e.amount - e.sellerFee);
  });

  it('escrow-refund after a partial release returns only what is left to the payer', async () => {
    const deal = await fundedHiring(10_000);
    const e = await escrowRow(deal.escrowId);
    const done = await completedMilestone(deal, 4_000, 'Half-way');
    await completedMilestone(deal, 1_000, 'Next');
    ok(await opM('milestone-release', deal.payer, done.id));
    const payeeAfterRelease = await walletKobo(deal.payee.id);
    const left = await holdKobo(deal.escrowId);
    const released = 400_000;
    expect(left).toBe(
      e.total - released - shareOf(e.payerFee, e.amount, 0, released) - shareOf(e.vat, e.amount, 0, released),
    );
    expect(await walletKobo(deal.payer.id)).toBe(0);

    const res = ok(await escrowOp('escrow-refund', deal.payee, deal.escrowId));
    expect(res.status).toBe('refunded');
    expect(await walletKobo(deal.payer.id)).toBe(left);
    expect(await walletKobo(deal.payee.id)).toBe(payeeAfterRelease);
    expect(await holdKobo(deal.escrowId)).toBe(0);
    const [refund] = await testDb()<{ amount: string; user_id: string }[]>`
      select amount::text, user_id from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_refund'`;
    expect(refund).toEqual({ amount: String(left), user_id: deal.payer.id });
    // the milestone that was never released closes with the escrow, and nothing else moves
    const after = ok(await listM(deal.payer, deal.escrowId));
    expect(after.map((m) => m.status)).toEqual(['released', 'cancelled']);
    const rest = after.find((m) => m.status === 'cancelled');
    refused(await opM('milestone-release', deal.payer, rest!.id), 409);
    refused(await escrowOp('escrow-release', deal.payer, deal.escrowId), 409);
  });
});

describe('milestones close with their escrow', () => {
  it('an escrow-release pays agreed milestones with its transfer and cancels proposed ones; nothing can change them after', async () => {
    const deal = await fundedHiring(10_000);
    const agreed = await completedMilestone(deal, 3_000, 'Design');
    const proposed = ok(
      await post(milestoneCreate, { escrow_id: deal.escrowId, title: 'Extra', amount: 1_000 }, {
        token: deal.payee.accessToken,
      }),
      201,
    );
    ok(await escrowOp('escrow-release', deal.payer, deal.escrowId));
    const after = ok(await listM(deal.payer, deal.escrowId));
    const byId = Object.fromEntries(after.map((m) => [m.id, m]));
    expect(byId[agreed.id]).toMatchObject({ status: 'released' });
    expect(byId[proposed.id]).toMatchObject({ status: 'cancelled', release_tx_id: null });
    const [release] = await testDb()<{ id: string }[]>`
      select lt.id from private.ledger_transfers lt where lt.idempotency_key = ${`escrow-release:${deal.escrowId}`}`;
    expect(byId[agreed.id]!.release_tx_id).toBe(release?.id);
    refused(await opM('milestone-approve', deal.payer, proposed.id), 409);
    refused(
      await patch(milestoneUpdate, { milestone_id: proposed.id, title: 'Changed' }, {
        token: deal.payee.accessToken,
      }),
      409,
    );
  });
});
