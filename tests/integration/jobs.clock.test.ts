// The job (jobs-run) through the real HTTP server, driven with explicit times: inspection periods
// that ended release the escrow exactly once, released/refunded escrows end after 14 days, payouts
// committed but never sent are sent, queued SMS go out.
//
// Other suites run the job at the same time against the same database, so time is moved by
// editing this suite's own rows (testDb) to a moment just before "now", and the job is run at
// times close to the real now: never a far-future time that would release or end other suites'
// escrows under them.
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type ApiResult, call, fieldsOf, get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { type Deal, escrowOp, escrowStatus, fundedDeal } from '../support/escrows.ts';
import { holdKobo, walletKobo } from '../support/ledger.ts';
import { runJobs } from '../support/clock.ts';
import { raiseTier } from '../support/kyc.ts';
import { paystack } from '../support/paystack.ts';
import { newPhone, signUp } from '../support/users.ts';
import { TEST_JOBS_SECRET } from '../support/stack.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const DAY = 86_400_000;

function ok(res: ApiResult, status = 200) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(true);
  expect(res.body.status).toBe(status);
  return res.body.data;
}

function refused(res: ApiResult, status: number): string[] {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.status).toBe(status);
  expect(typeof res.body.error).toBe('string');
  expect(res.body).not.toHaveProperty('data');
  return fieldsOf(res);
}

const iso = (ms: number) => new Date(ms).toISOString();
/** A moment in the recent past, distinct per call (whole milliseconds). */
const recentPast = (agoMs: number) => Date.now() - agoMs - randomInt(0, 60_000);

/** A funded goods escrow, delivered, whose inspection period ends at endsMs (moved in the DB). */
async function inInspection(endsMs: number, amount = 10_000): Promise<Deal> {
  const deal = await fundedDeal({ amount });
  const delivered = ok(await escrowOp('escrow-deliver', deal.payee, deal.escrowId));
  expect(delivered.status).toBe('inspection');
  await testDb()`
    update public.escrows set delivered_at = ${iso(endsMs - DAY)}::timestamptz, inspection_ends_at = ${
    iso(endsMs)
  }::timestamptz
     where id = ${deal.escrowId}`;
  return deal;
}

async function escrowTimes(escrowId: string) {
  const [row] = await testDb()<{ status: string; released_at: Date | null; ended_at: Date | null }[]>`
    select status, released_at, ended_at from public.escrows where id = ${escrowId}`;
  return row!;
}

async function releaseCount(escrowId: string): Promise<number> {
  const [row] = await testDb()<{ n: number }[]>`
    select count(*)::int as n from private.ledger_transfers where idempotency_key = ${`escrow-release:${escrowId}`}`;
  return row!.n;
}

// ---- authentication and input --------------------------------------------------------------

describe('jobs-run', () => {
  describe('the secret and the body', () => {
    it('refuses a missing or wrong x-jobs-secret with 401 (envelope)', async () => {
      const now = new Date().toISOString();
      refused(await call('jobs-run', { method: 'POST', body: { now } }), 401);
      refused(await call('jobs-run', { method: 'POST', body: { now }, headers: { 'x-jobs-secret': 'wrong' } }), 401);
      refused(await call('jobs-run', { method: 'POST', body: { now }, headers: { 'x-jobs-secret': '' } }), 401);
      refused(
        await call('jobs-run', { method: 'POST', body: { now }, headers: { 'x-jobs-secret': `${TEST_JOBS_SECRET}x` } }),
        401,
      );
      refused(
        await call('jobs-run', {
          method: 'POST',
          body: { now },
          headers: { 'x-jobs-secret': TEST_JOBS_SECRET.slice(0, -1) },
        }),
        401,
      );
      // a user's bearer token is not the secret
      refused(
        await call('jobs-run', {
          method: 'POST',
          body: { now },
          headers: { Authorization: `Bearer ${TEST_JOBS_SECRET}` },
        }),
        401,
      );
      // not even a bad body is looked at without the secret
      refused(await call('jobs-run', { method: 'POST', body: { now: 'garbage' } }), 401);
    });

    it('takes an optional ISO 8601 timestamp as now and answers with a summary', async () => {
      const now = iso(recentPast(60_000));
      const data = ok(await runJobs(now));
      expect(data).toMatchObject({
        now,
        released: expect.any(Number),
        ended: expect.any(Number),
        payouts_started: expect.any(Number),
        sms_sent: expect.any(Number),
      });
      const withOffset = ok(await runJobs('2026-01-01T10:00:00+01:00'));
      expect(Date.parse(withOffset.now)).toBe(Date.parse('2026-01-01T09:00:00Z'));
      // without now: the current time
      const defaulted = ok(
        await call('jobs-run', { method: 'POST', body: {}, headers: { 'x-jobs-secret': TEST_JOBS_SECRET } }),
      );
      expect(Math.abs(Date.parse(defaulted.now) - Date.now())).toBeLessThan(60_000);
      ok(await call('jobs-run', { method: 'POST', headers: { 'x-jobs-secret': TEST_JOBS_SECRET } }));

      for (
        const bad of ['yesterday', '2026-11-22', '2026-13-01T00:00:00Z', '12:00', '', 1_700_000_000_000, null, true]
      ) {
        const res = await call('jobs-run', {
          method: 'POST',
          body: { now: bad },
          headers: { 'x-jobs-secret': TEST_JOBS_SECRET },
        });
        expect(refused(res, 400), `now=${JSON.stringify(bad)}`).toEqual(['now']);
      }
      const extra = await call('jobs-run', {
        method: 'POST',
        body: { now, force: true },
        headers: { 'x-jobs-secret': TEST_JOBS_SECRET },
      });
      expect(refused(extra, 400)).toEqual(['force']);
      refused(await call('jobs-run', { method: 'GET', headers: { 'x-jobs-secret': TEST_JOBS_SECRET } }), 405);
    });
  });

  // ---- inspection auto-release ---------------------------------------------------------------

  describe('inspection periods that ended', () => {
    it('releases just after inspection_ends_at, not just before, and exactly once', async () => {
      const ends = recentPast(3_600_000);
      const deal = await inInspection(ends);
      const payout = Math.round(deal.feeBreakdown.seller_payout * 100);

      ok(await runJobs(iso(ends - 1)));
      expect(await escrowStatus(deal)).toBe('inspection');
      expect(await walletKobo(deal.payee.id)).toBe(0);

      const due = ok(await runJobs(iso(ends + 1)));
      expect(due.released).toBeGreaterThanOrEqual(1);
      const escrow = ok(
        await get(escrowGet, { token: deal.payer.accessToken, query: { escrow_id: deal.escrowId } }),
      );
      expect(escrow.status).toBe('released');
      expect(Date.parse(escrow.released_at)).toBe(ends + 1);
      expect(await walletKobo(deal.payee.id)).toBe(payout);
      expect(await holdKobo(deal.escrowId)).toBe(0);
      expect(await releaseCount(deal.escrowId)).toBe(1);
      const notes = ok(
        await get(notificationList, { token: deal.payer.accessToken, query: { escrow_id: deal.escrowId } }),
      );
      expect(notes[0]).toMatchObject({ event_type: 'released', entity_type: 'escrow', entity_id: deal.escrowId });
      expect(notes[0].content).toMatch(/automatically/);

      // again, and later: nothing changes
      ok(await runJobs(iso(ends + 1)));
      ok(await runJobs(iso(ends + 120_000)));
      expect(await escrowStatus(deal)).toBe('released');
      expect(await walletKobo(deal.payee.id)).toBe(payout);
      expect(await releaseCount(deal.escrowId)).toBe(1);
      expect(
        Date.parse(
          ok(await get(escrowGet, { token: deal.payer.accessToken, query: { escrow_id: deal.escrowId } }))
            .released_at,
        ),
      ).toBe(ends + 1);
      const [n] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from public.transactions where escrow_id = ${deal.escrowId} and type = 'escrow_release'`;
      expect(n!.n).toBe(1);
    });

    it('releases exactly once when several runs of the job overlap', async () => {
      const ends = recentPast(3_700_000);
      const deal = await inInspection(ends);
      const runs = await Promise.all(Array.from({ length: 5 }, () => runJobs(iso(ends + 1_000))));
      for (const r of runs) ok(r);
      expect(await escrowStatus(deal)).toBe('released');
      expect(await walletKobo(deal.payee.id)).toBe(Math.round(deal.feeBreakdown.seller_payout * 100));
      expect(await holdKobo(deal.escrowId)).toBe(0);
      expect(await releaseCount(deal.escrowId)).toBe(1);
    });

    it('releases every due escrow in one run and leaves the ones not yet due', async () => {
      const base = recentPast(7_200_000);
      const due = [
        await inInspection(base),
        await inInspection(base + 1_000),
        await inInspection(base + 2_000, 3_333.33),
      ];
      const later = await inInspection(base + 60_000);
      const run = ok(await runJobs(iso(base + 2_000)));
      expect(run.released).toBeGreaterThanOrEqual(3);
      for (const d of due) {
        expect(await escrowStatus(d)).toBe('released');
        expect(await walletKobo(d.payee.id)).toBe(Math.round(d.feeBreakdown.seller_payout * 100));
        expect(await holdKobo(d.escrowId)).toBe(0);
      }
      expect(await escrowStatus(later)).toBe('inspection');
      expect(await walletKobo(later.payee.id)).toBe(0);
      ok(await runJobs(iso(base + 60_000)));
      expect(await escrowStatus(later)).toBe('released');
    });

    it('leaves escrows that are no longer in inspection alone (refunded during inspection)', async () => {
      const ends = recentPast(3_800_000);
      const deal = await inInspection(ends);
      ok(await escrowOp('escrow-refund', deal.payee, deal.escrowId));
      const payerWallet = await walletKobo(deal.payer.id);
      ok(await runJobs(iso(ends + 1)));
      expect(await escrowStatus(deal)).toBe('refunded');
      expect(await walletKobo(deal.payer.id)).toBe(payerWallet);
      expect(await walletKobo(deal.payee.id)).toBe(0);
      expect(await releaseCount(deal.escrowId)).toBe(0);
    });
  });

  // ---- released / refunded -> ended ----------------------------------------------------------

  describe('released and refunded escrows end after 14 days', () => {
    it('13 days after: still released / refunded; 14 days after: ended', async () => {
      const released = await fundedDeal({ category: 'p2p_crypto', amount: 1_000 });
      ok(await escrowOp('escrow-release', released.payer, released.escrowId));
      const refunded = await fundedDeal({ amount: 1_000 });
      ok(await escrowOp('escrow-refund', refunded.payee, refunded.escrowId));

      // released 13 days before a "now" one hour ahead
      const r13 = Date.now() - 13 * DAY + 3_600_000 - randomInt(0, 60_000);
      await testDb()`update public.escrows set released_at = ${iso(r13)}::timestamptz where id = ${released.escrowId}`;
      await testDb()`update public.escrows set refunded_at = ${iso(r13)}::timestamptz where id = ${refunded.escrowId}`;
      ok(await runJobs(iso(r13 + 13 * DAY)));
      expect(await escrowStatus(released)).toBe('released');
      expect(await escrowStatus(refunded)).toBe('refunded');

      // released 14 days before a "now" just past
      const r14 = Date.now() - 14 * DAY - 3_600_000 - randomInt(0, 60_000);
      await testDb()`update public.escrows set released_at = ${iso(r14)}::timestamptz where id = ${released.escrowId}`;
      await testDb()`update public.escrows set refunded_at = ${iso(r14)}::timestamptz where id = ${refunded.escrowId}`;
      const run = ok(await runJobs(iso(r14 + 14 * DAY)));
      expect(run.ended).toBeGreaterThanOrEqual(2);
      for (const d of [released, refunded]) {
        const t = await escrowTimes(d.escrowId);
        expect(t.status).toBe('ended');
        expect(t.ended_at!.getTime()).toBe(r14 + 14 * DAY);
      }
      // ended stays ended, with its time
      ok(await runJobs(iso(r14 + 14 * DAY + 60_000)));
      for (const d of [released, refunded]) {
        const t = await escrowTimes(d.escrowId);
        expect(t.status).toBe('ended');
        expect(t.ended_at!.getTime()).toBe(r14 + 14 * DAY);
      }
      expect(await escrowStatus(released)).toBe('ended');
    });

    it('an escrow released by the inspection job ends 14 days after that release', async () => {
      const ends = recentPast(14 * DAY + 7_200_000);
      const deal = await inInspection(ends);
      ok(await runJobs(iso(ends + 1)));
      expect((await escrowTimes(deal.escrowId)).status).toBe('released');
      ok(await runJobs(iso(ends + 1 + 14 * DAY)));
      const t = await escrowTimes(deal.escrowId);
      expect(t.status).toBe('ended');
      expect(t.released_at!.getTime()).toBe(ends + 1);
    });
  });

  // ---- stranded payouts and queued SMS -------------------------------------------------------

  describe('work left over after a commit', () => {
    it('sends an escrow payout that was committed but never sent to the provider, once', async () => {
      const deal = await fundedDeal({ category: 'p2p_crypto', amount: 20_000 });
      // a payee past the identity floor, whose release is paid out
      expect(await raiseTier(deal.payee.id, 1)).toBe(1);
      const account = `2${String(randomInt(0, 1_000_000_000)).padStart(9, '0')}`;
      await paystack.registerAccount('058', account, 'COU OBI');
      ok(
        await post(payoutAdd, {
          bank_code: '058',
          bank_name: 'GTBank',
          account_number: account,
          account_name: 'Cou Obi',
        }, { token: deal.payee.accessToken }),
        201,
      );

      // the release commits; the process dies before the provider is called (the transition is
      // run directly, as escrow-release runs it, and nothing after the commit happens)
      const [r] = await testDb()<
        { payout_tx: string }[]
      >`select payout_tx from private.escrow_release(${deal.escrowId}, ${deal.payer.id}, now())`;
      const ref = r!.payout_tx;
      expect(ref).toBeTruthy();
      await testDb()`update public.transactions set metadata = metadata - 'transfer_attempted_at' where id = ${ref}`;
      const net = Math.round(deal.feeBreakdown.seller_payout * 100);
      const sentTo = async () => (await paystack.requests('/transfer')).filter((q) => q.body?.reference === ref);

      // less than a minute old: it may still be on its way, so the job leaves it
      ok(await runJobs(new Date().toISOString()));
      expect(await sentTo()).toEqual([]);

      await testDb()`update public.transactions set created_at = created_at - interval '2 minutes' where id = ${ref}`;
      const run = ok(await runJobs(new Date().toISOString()));
      expect(run.payouts_started).toBeGreaterThanOrEqual(1);
      const sent = await sentTo();
      expect(sent).toHaveLength(1);
      expect(sent[0]!.body.amount).toBe(net);
      const [tx] = await testDb()<{ status: string; attempted: boolean; transfer: string | null }[]>`
      select status::text, metadata ? 'transfer_attempted_at' as attempted, provider_transfer_id as transfer
        from public.transactions where id = ${ref}`;
      expect(tx).toMatchObject({ status: 'pending', attempted: true });
      expect(tx!.transfer).toMatch(/^TRF_/);

      // never twice
      ok(await runJobs(new Date().toISOString()));
      expect(await sentTo()).toHaveLength(1);

      // and the provider's answer settles it
      const delivered = await paystack.transferOutcome(ref, 'transfer.success');
      expect(delivered.responses[0]?.status).toBe(200);
      const [settled] = await testDb()<
        { status: string }[]
      >`select status::text from public.transactions where id = ${ref}`;
      expect(settled!.status).toBe('succeeded');
      expect(await walletKobo(deal.payee.id)).toBe(0);
      const [note] = ok(
        await get(notificationList, {
          token: deal.payee.accessToken,
          query: { escrow_id: deal.escrowId, limit: 1 },
        }),
      );
      expect(note).toMatchObject({
        event_type: 'payout_succeeded',
        entity_type: 'transaction',
        entity_id: ref,
        user_id: deal.payee.id,
        is_read: false,
      });
    });

    it('dispatches queued SMS (sent_at set, and the body written from the message)', async () => {
      const phone = newPhone().e164;
      const shortfall = {
        kind: 'funding_shortfall',
        received: 100_000,
        category: 'hiring',
        total_charge: 350_000,
        shortfall: 250_000,
      };
      await testDb()`select private.queue_sms(${phone}, ${testDb().json(shortfall)})`;
      await testDb()`select private.queue_sms(${phone}, ${testDb().json({ ...shortfall, category: 'p2p_crypto' })})`;
      const queued = await testDb()<{ id: number; sent_at: Date | null; body: string | null }[]>`
      select id, sent_at, body from private.sms_outbox where phone = ${phone}`;
      expect(queued.map((q) => [q.sent_at, q.body])).toEqual([[null, null], [null, null]]);
      ok(await runJobs(new Date().toISOString()));
      const after = await testDb()<{ sent_at: Date | null; attempts: number; body: string | null }[]>`
      select sent_at, attempts, body from private.sms_outbox where phone = ${phone} order by id`;
      expect(after).toHaveLength(2);
      for (const row of after) {
        expect(row.sent_at).not.toBeNull();
        expect(row.attempts).toBe(1);
      }
      expect(after.map((r) => r.body)).toEqual(
        ['hiring', 'crypto'].map((word) =>
          `We received NGN 1,000.00 and put it in your Escrow wallet. Your ${word} escrow needs NGN 3,500.00: ` +
          'send NGN 2,500.00 more to fund it.'
        ),
      );
      ok(await runJobs(new Date().toISOString()));
      const again = await testDb()<
        { attempts: number }[]
      >`select attempts from private.sms_outbox where phone = ${phone}`;
      expect(again.map((a) => a.attempts)).toEqual([1, 1]);
    });
  });

  describe('housekeeping', () => {
    it('forgets Idempotency-Keys older than 24 hours, and only those', async () => {
      const user = await signUp();
      const old = `old-${crypto.randomUUID()}`;
      const fresh = `fresh-${crypto.randomUUID()}`;
      await testDb()`insert into private.idempotency_keys (user_id, operation, key, request_hash, created_at)
                   values (${user.id}, 'card-add', ${old}, 'x', now() - interval '25 hours'),
                          (${user.id}, 'card-add', ${fresh}, 'x', now() - interval '23 hours')`;
      const res = await runJobs(new Date().toISOString());
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.idempotency_keys_expired).toBeGreaterThanOrEqual(1);
      const left = await testDb()<
        { key: string }[]
      >`select key from private.idempotency_keys where key in (${old}, ${fresh})`;
      expect(left.map((r) => r.key)).toEqual([fresh]);
    });
  });
});
