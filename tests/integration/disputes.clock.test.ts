// Disputes and the job (jobs-run), through the real HTTP server, with time driven by runJobs at
// explicit times (never sleeping): the reminder 24 h before the negotiation deadline, what happens
// at the deadline (released to the payee only when the payer raised it and then took no part;
// otherwise escalated, and then the parties can no longer settle it), no automatic release of a
// disputed escrow whose inspection period ended meanwhile, a withdrawal that resumes the
// inspection with the time it had left, and the job at the deadline racing the parties.
//
// The endpoints act at the database's now(), so a story is told by raising now and then moving the
// escrow's whole story (its disputes, proposals, messages, delivery and inspection) into the past
// by editing its rows: the job then runs at times before the real now, which every other row of
// the shared database (other clock suites' too) has already passed.
import { describe, expect, it } from 'vitest';
import { type ApiResult, expectError as refused, expectOk as ok, get, post } from '../support/api.ts';
import { runJobs } from '../support/clock.ts';
import { expectLedgerInvariants, testDb } from '../support/db.ts';
import {
  disputeFeed,
  disputeOf,
  disputeRow,
  propose,
  raise,
  respond,
  settledSms,
  type Side,
  stored,
  withdraw,
} from '../support/disputes.ts';
import { balances, holdTransfers } from '../support/ledger.ts';
import { type Deal, escrowOp, escrowStatus, fundedDeal } from '../support/escrows.ts';
import messageFeed from '../../supabase/functions/message-feed/handler.ts';
import messageSend from '../../supabase/functions/message-send/handler.ts';

const H = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const ms = (t: Date | string) => new Date(t).getTime();

/**
 * Moves the escrow's whole story by `by` milliseconds (and `micros` microseconds) into the past; the
 * relative times are kept.
 */
async function backdate(deal: Deal, by: number, micros = 0): Promise<void> {
  const i = `${by} milliseconds ${micros} microseconds`;
  await testDb().begin(async (tx) => {
    await tx`
      update public.disputes
         set created_at = created_at - ${i}::interval,
             negotiation_deadline = negotiation_deadline - ${i}::interval,
             auto_release_at = auto_release_at - ${i}::interval,
             reminded_at = reminded_at - ${i}::interval,
             escalated_at = escalated_at - ${i}::interval,
             withdrawn_at = withdrawn_at - ${i}::interval,
             resolved_at = resolved_at - ${i}::interval
       where escrow_id = ${deal.escrowId}`;
    await tx`
      update public.dispute_proposals
         set created_at = created_at - ${i}::interval, responded_at = responded_at - ${i}::interval
       where dispute_id in (select id from public.disputes where escrow_id = ${deal.escrowId})`;
    await tx`
      update public.messages set created_at = created_at - ${i}::interval where conversation_id = ${deal.conversationId}`;
    await tx`
      update public.escrows
         set accepted_at = accepted_at - ${i}::interval, funded_at = funded_at - ${i}::interval,
             delivered_at = delivered_at - ${i}::interval, inspection_ends_at = inspection_ends_at - ${i}::interval
       where id = ${deal.escrowId}`;
  });
}

/** The microseconds of a stored time past its whole millisecond (JavaScript times are whole milliseconds). */
async function subMillis(sqlTime: string): Promise<number> {
  const [row] = await testDb().unsafe(`select (extract(microseconds from ${sqlTime})::bigint % 1000)::int as us`);
  return (row as unknown as { us: number }).us;
}

/**
 * Raised just now, then moved so that its negotiation deadline passed 5 minutes ago, on a whole
 * millisecond (so that runJobs can be called exactly at it).
 */
async function pastDeadline(deal: Deal, disputeId: string) {
  const us = await subMillis(`(select created_at from public.disputes where id = '${disputeId}')`);
  await backdate(deal, 72 * H + 5 * 60_000, us);
  const d = await disputeRow(disputeId);
  expect(ms(d.negotiation_deadline) - ms(d.created_at)).toBe(72 * H);
  return { created: ms(d.created_at), deadline: ms(d.negotiation_deadline) };
}

const send = (deal: Deal, by: Side, content: string) =>
  post(messageSend, { conversation_id: deal.conversationId, content }, { token: deal[by].accessToken });

const count = (xs: string[], x: string) => xs.filter((y) => y === x).length;

/** The texts of the user's dispute_deadline_soon notifications in the escrow's feed. */
async function reminderTexts(deal: Deal, by: Side): Promise<string[]> {
  const feed = ok(
    await get(messageFeed, { token: deal[by].accessToken, query: { conversation_id: deal.conversationId } }),
  );
  return feed.filter((i) => i.event_type === 'dispute_deadline_soon').map((i) => i.content as string);
}

// ---- the reminder, and the release to the payee ------------------------------------------------

describe('the negotiation deadline', () => {
  it('both parties are told 24 h before it (not at 47 h, once); a payer who raised it and took no part: released to the payee', async () => {
    const deal = await fundedDeal({ amount: 15_000.05 });
    const e = await stored(deal.escrowId);
    // the payer wrote before raising it: that is not taking part after raising
    ok(await send(deal, 'payer', 'Where is my phone?'), 201);
    const d = ok(await raise(deal, 'payer'), 201);
    expect(d.auto_release_at).toBe(d.negotiation_deadline);
    // the payee writes and proposes; the payer never answers
    ok(await send(deal, 'payee', 'I shipped it on Monday'), 201);
    ok(await propose(deal, 'payee', { outcome: 'release' }), 201);
    const before = await balances(deal);
    const { created, deadline } = await pastDeadline(deal, d.id);

    const reminders = async () => ({
      payer: count(await disputeFeed(deal, deal.payer, d.id), 'dispute_deadline_soon'),
      payee: count(await disputeFeed(deal, deal.payee, d.id), 'dispute_deadline_soon'),
    });
    ok(await runJobs(iso(created + 47 * H)));
    ok(await runJobs(iso(deadline - 24 * H - 1)));
    expect(await reminders()).toEqual({ payer: 0, payee: 0 });
    expect((await disputeRow(d.id)).reminded_at).toBeNull();
    const run = ok(await runJobs(iso(deadline - 24 * H)));
    expect(run.disputes_reminded).toBeGreaterThanOrEqual(1);
    expect(await reminders()).toEqual({ payer: 1, payee: 1 });
    expect(ms((await disputeRow(d.id)).reminded_at!)).toBe(deadline - 24 * H);
    for (const side of ['payer', 'payee'] as const) {
      expect(await reminderTexts(deal, side)).toEqual([expect.stringMatching(/released to the payee/)]);
    }
    ok(await runJobs(iso(deadline - 24 * H)));
    ok(await runJobs(iso(deadline - 1)));
    expect(await reminders()).toEqual({ payer: 1, payee: 1 });
    expect(await escrowStatus(deal)).toBe('disputed');
    expect(await balances(deal)).toEqual(before);

    // at the deadline: released to the payee, as an escrow release pays
    const due = ok(await runJobs(iso(deadline)));
    expect(due.disputes_released).toBeGreaterThanOrEqual(1);
    const payeeGets = e.amount - e.sellerFee;
    expect(await balances(deal)).toEqual({ payer: before.payer, payee: before.payee + payeeGets, hold: 0 });
    expect(await stored(deal.escrowId)).toMatchObject({ status: 'released', released: e.amount });
    const [row] = await testDb()<{ released_at: Date }[]>`
      select released_at from public.escrows where id = ${deal.escrowId}`;
    expect(ms(row!.released_at)).toBe(deadline);
    expect(await disputeRow(d.id)).toMatchObject({ status: 'resolved', outcome: 'release', resolved_by: null });
    expect(ms((await disputeRow(d.id)).resolved_at!)).toBe(deadline);
    expect(ok(await disputeOf(deal, 'payee'))).toMatchObject({ status: 'resolved', proposals: [] });
    expect(count(await disputeFeed(deal, deal.payer, d.id), 'dispute_resolved')).toBe(1);
    expect(count(await disputeFeed(deal, deal.payee, d.id), 'dispute_resolved')).toBe(1);
    expect(await settledSms(deal.payee.phone)).toEqual([{ outcome: 'release', amount: payeeGets }]);
    expect(await settledSms(deal.payer.phone)).toEqual([{ outcome: 'release', amount: 0 }]);

    // later runs change nothing
    ok(await runJobs(iso(deadline)));
    ok(await runJobs(iso(deadline + H)));
    expect((await holdTransfers(deal.escrowId)).map((t) => t.key)).toEqual([`dispute-release:${d.id}`]);
    expect((await balances(deal)).payee).toBe(before.payee + payeeGets);
    await expectLedgerInvariants();
  });

  it.each(['a message', 'a proposal', 'an answer to a proposal'] as const)(
    'a payer who raised it and then took part (%s): escalated, no money moves, the parties can no longer settle it',
    async (part) => {
      const deal = await fundedDeal({ amount: 6_000 });
      const d = ok(await raise(deal, 'payer'), 201);
      const offer = ok(await propose(deal, 'payee', { outcome: 'split', payee_amount: 3_000 }), 201).proposals[0];
      if (part === 'a message') ok(await send(deal, 'payer', 'I will not accept half'), 201);
      if (part === 'a proposal') ok(await propose(deal, 'payer', { outcome: 'refund' }), 201);
      if (part === 'an answer to a proposal') ok(await respond(deal, 'payer', offer!.id, false));
      const before = await balances(deal);
      const { deadline } = await pastDeadline(deal, d.id);

      // the reminder says what will happen: the admins decide (the payer took part)
      ok(await runJobs(iso(deadline - 24 * H)));
      for (const side of ['payer', 'payee'] as const) {
        expect(await reminderTexts(deal, side)).toEqual([expect.stringMatching(/goes to our team/)]);
      }
      ok(await runJobs(iso(deadline - 1)));
      expect((await disputeRow(d.id)).status).toBe('negotiation');
      const run = ok(await runJobs(iso(deadline)));
      expect(run.disputes_escalated).toBeGreaterThanOrEqual(1);
      const row = await disputeRow(d.id);
      expect(row).toMatchObject({ status: 'escalated', outcome: null, resolved_at: null });
      expect(ms(row.escalated_at!)).toBe(deadline);
      expect(await escrowStatus(deal)).toBe('disputed');
      expect(await balances(deal)).toEqual(before);
      expect(await holdTransfers(deal.escrowId)).toEqual([]);
      const open = await testDb()<{ status: string }[]>`
        select status from public.dispute_proposals where dispute_id = ${d.id} and status = 'open'`;
      expect(open).toEqual([]);
      expect(ok(await disputeOf(deal))).toMatchObject({ status: 'escalated', proposals: [] });
      expect(count(await disputeFeed(deal, deal.payer, d.id), 'dispute_escalated')).toBe(1);
      expect(count(await disputeFeed(deal, deal.payee, d.id), 'dispute_escalated')).toBe(1);

      // only an admin can settle it now
      refused(await propose(deal, 'payer', { outcome: 'release' }), 409);
      refused(await propose(deal, 'payee', { outcome: 'split', payee_amount: 1_000 }), 409);
      refused(await withdraw(deal, 'payer'), 409);
      refused(await respond(deal, 'payer', offer!.id, true), 409);
      refused(await raise(deal, 'payee'), 409);
      refused(await escrowOp('escrow-release', deal.payer, deal.escrowId), 409);
      ok(await runJobs(iso(deadline + 2 * H)));
      expect((await disputeRow(d.id)).status).toBe('escalated');
      expect(count(await disputeFeed(deal, deal.payee, d.id), 'dispute_escalated')).toBe(1);
      expect(await balances(deal)).toEqual(before);
      await expectLedgerInvariants();
    },
  );

  it('what the payer writes after the deadline (before the job runs) does not stop the release to the payee', async () => {
    const deal = await fundedDeal({ amount: 6_000 });
    const e = await stored(deal.escrowId);
    const before = await balances(deal);
    const d = ok(await raise(deal, 'payer'), 201);
    const { deadline } = await pastDeadline(deal, d.id);
    ok(await send(deal, 'payer', 'Wait, I have more to say'), 201);
    ok(await runJobs(iso(deadline)));
    expect((await disputeRow(d.id)).status).toBe('resolved');
    expect((await balances(deal)).payee - before.payee).toBe(e.amount - e.sellerFee);
  });

  it('a dispute the payee raised is escalated at the deadline, even with the payer silent', async () => {
    const deal = await fundedDeal({ amount: 5_000 });
    const d = ok(await raise(deal, 'payee', { reason_code: 'payment_not_released' }), 201);
    expect(d.auto_release_at).toBeNull();
    const before = await balances(deal);
    const { deadline } = await pastDeadline(deal, d.id);
    ok(await runJobs(iso(deadline - 24 * H)));
    expect(count(await disputeFeed(deal, deal.payer, d.id), 'dispute_deadline_soon')).toBe(1);
    expect(await reminderTexts(deal, 'payee')).toEqual([expect.stringMatching(/goes to our team/)]);
    ok(await runJobs(iso(deadline)));
    expect(await disputeRow(d.id)).toMatchObject({ status: 'escalated', auto_release_at: null });
    expect(await balances(deal)).toEqual(before);
    expect(await escrowStatus(deal)).toBe('disputed');
    expect(await disputeFeed(deal, deal.payer, d.id)).toEqual([
      'dispute_raised',
      'dispute_deadline_soon',
      'dispute_escalated',
    ]);
    refused(await withdraw(deal, 'payee'), 409);
  });

  it('never releases a disputed escrow whose inspection period ended meanwhile', async () => {
    const deals = [await fundedDeal({ amount: 3_000 }), await fundedDeal({ amount: 3_000 })];
    const stories = [];
    for (const [k, deal] of deals.entries()) {
      expect(ok(await escrowOp('escrow-deliver', deal.payee, deal.escrowId)).status).toBe('inspection');
      // the payee's dispute (escalated at the deadline), and the payer's in which the payer took part
      const d = ok(await raise(deal, k === 0 ? 'payee' : 'payer'), 201);
      if (k === 1) ok(await propose(deal, 'payer', { outcome: 'refund' }), 201);
      const times = await pastDeadline(deal, d.id);
      // the inspection period would have ended 10 hours into the dispute
      await testDb()`
        update public.escrows set inspection_ends_at = ${iso(times.created + 10 * H)}::timestamptz
         where id = ${deal.escrowId}`;
      stories.push({ deal, d, times, before: await balances(deal) });
    }
    for (const { deal, d, times, before } of stories) {
      for (const at of [times.created + 11 * H, times.deadline - 1, times.deadline, times.deadline + H]) {
        ok(await runJobs(iso(at)));
        expect(await escrowStatus(deal), iso(at)).toBe('disputed');
        expect(await balances(deal)).toEqual(before);
      }
      expect((await disputeRow(d.id)).status).toBe('escalated');
      expect(await holdTransfers(deal.escrowId)).toEqual([]);
    }
  });
});

// ---- a withdrawal resumes the inspection ------------------------------------------------------

describe('dispute-withdraw', () => {
  describe('during an inspection', () => {
    it('delivered at T, raised at T+6h, withdrawn at T+30h: the inspection ends at T+48h, and the job releases then, not before', async () => {
      const deal = await fundedDeal({ amount: 9_000.09 });
      const e = await stored(deal.escrowId);
      expect(ok(await escrowOp('escrow-deliver', deal.payee, deal.escrowId)).status).toBe('inspection');
      const [rule] = await testDb()<{ days: number }[]>`
      select inspection_period_days as days from public.escrows where id = ${deal.escrowId}`;
      expect(rule!.days).toBe(1);
      // delivered 6 hours ago: 18 hours of inspection are left
      const T = Date.now() - 6 * H;
      await testDb()`
      update public.escrows set delivered_at = ${iso(T)}::timestamptz, inspection_ends_at = ${
        iso(T + 24 * H)
      }::timestamptz
       where id = ${deal.escrowId}`;
      const d = ok(await raise(deal, 'payer'), 201);
      // what was left: the end of the inspection less the moment it was raised, to the microsecond
      const [left] = await testDb()<{ exact: boolean; left_ms: number }[]>`
      select inspection_left = ${iso(T + 24 * H)}::timestamptz - created_at as exact,
             (extract(epoch from inspection_left) * 1000)::float8 as left_ms
        from public.disputes where id = ${d.id}`;
      expect(left!.exact).toBe(true);
      expect(Math.abs(left!.left_ms - 18 * H)).toBeLessThan(60_000);
      // the dispute lasts 24 hours: withdrawn at T+30h
      await backdate(deal, 24 * H);
      const back = ok(await withdraw(deal, 'payer'));
      expect(back.status).toBe('withdrawn');
      expect(await escrowStatus(deal)).toBe('inspection');
      const [after] = await testDb()<{ exact: boolean; since_delivery_ms: number; withdrawn_ms: number }[]>`
      select e.inspection_ends_at = d.withdrawn_at + d.inspection_left as exact,
             (extract(epoch from e.inspection_ends_at - e.delivered_at) * 1000)::float8 as since_delivery_ms,
             (extract(epoch from d.withdrawn_at - e.delivered_at) * 1000)::float8 as withdrawn_ms
        from public.escrows e join public.disputes d on d.escrow_id = e.id where d.id = ${d.id}`;
      // the time it had left, from the withdrawal: T+30h + 18h (less the moments between the calls)
      expect(after!.exact).toBe(true);
      expect(Math.abs(after!.withdrawn_ms - 30 * H)).toBeLessThan(60_000);
      expect(Math.abs(after!.since_delivery_ms - 48 * H)).toBeLessThan(60_000);

      // the story 48 hours back, its end on a whole millisecond: the job runs at T+47h, just before
      // the end, and at it
      const us = await subMillis(`(select inspection_ends_at from public.escrows where id = '${deal.escrowId}')`);
      await backdate(deal, 48 * H, us);
      const [moved] = await testDb()<{ ends: Date; delivered: Date }[]>`
      select inspection_ends_at as ends, delivered_at as delivered from public.escrows where id = ${deal.escrowId}`;
      const t = ms(moved!.delivered);
      const ends = ms(moved!.ends);
      const before = await balances(deal);
      ok(await runJobs(iso(t + 47 * H)));
      ok(await runJobs(iso(ends - 1)));
      expect(await escrowStatus(deal)).toBe('inspection');
      expect(await balances(deal)).toEqual(before);
      ok(await runJobs(iso(ends)));
      expect(await escrowStatus(deal)).toBe('released');
      expect(await balances(deal)).toEqual({
        payer: before.payer,
        payee: before.payee + e.amount - e.sellerFee,
        hold: 0,
      });
      expect((await holdTransfers(deal.escrowId)).map((x) => x.key)).toEqual([`escrow-release:${deal.escrowId}`]);
      await expectLedgerInvariants();
    });
  });
});

// ---- the job at the deadline racing the parties ---------------------------------------------------

const TRIES = 20;
const ROUNDS = 9;
const observed: Record<string, number> = {};

describe(`the job at the deadline among ${TRIES} parallel tries`, () => {
  it.each(Array.from({ length: ROUNDS }, (_, i) => i))(
    'round %s: one outcome (a settlement, a withdrawal, an escalation or the auto-release), never two',
    async (i) => {
      // even rounds: the payer raised it and stays silent (the job would release to the payee);
      // odd rounds: the payer proposed too (the job would escalate)
      const silent = i % 2 === 0;
      const deal = await fundedDeal({ amount: 12_000 + i + 0.01 });
      const e = await stored(deal.escrowId);
      const before = await balances(deal);
      const d = ok(await raise(deal, 'payer'), 201);
      const byPayee = ok(
        await propose(deal, 'payee', silent ? { outcome: 'release' } : { outcome: 'split', payee_amount: 6_000 }),
        201,
      ).proposals.find((p) => p.proposed_by === deal.payee.id);
      const byPayer = silent
        ? null
        : ok(await propose(deal, 'payer', { outcome: 'refund' }), 201).proposals.find((p) =>
          p.proposed_by === deal.payer.id
        );
      const { deadline } = await pastDeadline(deal, d.id);

      type Try = { kind: string; run: () => Promise<ApiResult> };
      const tries: Try[] = [
        ...Array.from({ length: 5 }, () => ({ kind: 'job', run: () => runJobs(iso(deadline)) })),
        ...Array.from({ length: silent ? 12 : 7 }, () => ({
          kind: 'accept-payee',
          run: () => respond(deal, 'payer', byPayee!.id, true),
        })),
        ...(silent ? [] : Array.from({ length: 5 }, () => ({
          kind: 'accept-payer',
          run: () => respond(deal, 'payee', byPayer!.id, true),
        }))),
        ...Array.from({ length: 3 }, () => ({ kind: 'withdraw', run: () => withdraw(deal, 'payer') })),
      ];
      expect(tries).toHaveLength(TRIES);
      // the job's runs sent first, one every fourth try, or last: after one more round trip to the
      // server (no sleeping), which gives the parties a head start of a few milliseconds
      const jobs = tries.filter((t) => t.kind === 'job');
      const others = tries.filter((t) => t.kind !== 'job');
      let order: Try[];
      let results: ApiResult[];
      if (i % 3 === 1) {
        order = [...others, ...jobs];
        const sent = others.map((t) => t.run());
        ok(await disputeOf(deal, 'payee'));
        results = await Promise.all([...sent, ...jobs.map((t) => t.run())]);
      } else {
        order = i % 3 === 0 ? [...jobs, ...others] : [...others];
        if (i % 3 === 2) { for (const [k, job] of jobs.entries()) order.splice(k * 4 + 1, 0, job); }
        results = await Promise.all(order.map((t) => t.run()));
      }

      const party = results.map((r, k) => ({ r, kind: order[k]!.kind })).filter((x) => x.kind !== 'job');
      for (const { r, kind } of results.map((r, k) => ({ r, kind: order[k]!.kind }))) {
        if (kind === 'job') ok(r);
      }
      const winners = party.filter(({ r }) => r.status === 200);
      expect(winners.length, JSON.stringify(party.map(({ r }) => [r.status, r.body?.error]))).toBeLessThanOrEqual(1);
      for (const { r } of party) if (r.status !== 200) refused(r, 409);

      const row = await disputeRow(d.id);
      const accepted = await testDb()<{ id: string }[]>`
        select id from public.dispute_proposals where dispute_id = ${d.id} and status = 'accepted'`;
      const outcome = row.status === 'withdrawn'
        ? 'withdrawn'
        : row.status === 'escalated'
        ? 'escalated by the job'
        : accepted.length === 1
        ? `settled by an acceptance (${row.outcome})`
        : `released by the job`;
      observed[outcome] = (observed[outcome] ?? 0) + 1;
      // a party won exactly when the outcome is theirs
      expect(winners.map((w) => w.kind)).toEqual(
        outcome === 'withdrawn'
          ? ['withdraw']
          : outcome.startsWith('settled')
          ? [accepted[0]!.id === byPayee!.id ? 'accept-payee' : 'accept-payer']
          : [],
      );
      if (!silent) expect(outcome).not.toBe('released by the job');
      if (silent) expect(outcome).not.toBe('escalated by the job');

      const transfers = (await holdTransfers(deal.escrowId)).map((t) => t.key).sort();
      const after = await balances(deal);
      if (outcome === 'withdrawn' || outcome === 'escalated by the job') {
        expect(transfers).toEqual([]);
        expect(after).toEqual(before);
        expect(after.hold).toBe(e.total);
        expect(await escrowStatus(deal)).toBe(outcome === 'withdrawn' ? 'funded' : 'disputed');
      } else {
        expect(row.status).toBe('resolved');
        expect(after.hold).toBe(0);
        const keys = row.outcome === 'split'
          ? [`dispute-refund:${d.id}`, `dispute-release:${d.id}`]
          : row.outcome === 'refund'
          ? [`escrow-refund:${deal.escrowId}`]
          : [`dispute-release:${d.id}`];
        expect(transfers).toEqual(keys.sort());
        if (row.outcome === 'release') expect(after.payee - before.payee).toBe(e.amount - e.sellerFee);
        if (row.outcome === 'refund') expect(after.payer - before.payer).toBe(e.total);
        expect(await settledSms(deal.payee.phone)).toHaveLength(1);
        expect(await settledSms(deal.payer.phone)).toHaveLength(1);
      }
      // and a later run of the job changes nothing
      ok(await runJobs(iso(deadline + H)));
      expect((await holdTransfers(deal.escrowId)).map((t) => t.key).sort()).toEqual(transfers);
      expect(await balances(deal)).toEqual(after);
      await expectLedgerInvariants(`round ${i}`);
      if (i === ROUNDS - 1) console.info(`disputes.clock race: ${ROUNDS} rounds x ${TRIES} tries, outcomes`, observed);
    },
  );
});
