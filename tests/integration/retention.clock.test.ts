// The job's retention purges (docs/compliance.md#retention), run through the real server with an
// explicit `now`: for each kind of personal data, a row one minute inside its period survives a
// run and the same kind of row one minute past it is erased or deleted. The periods are read from
// shared/compliance/retention.ts, the file the docs' table is generated from, and each boundary is
// computed by PostgreSQL from the same interval the job passes. Nothing the ledger needs is touched:
// an ended escrow with money moved keeps its transactions and ledger rows, and the ledger's
// invariants hold after the purge. Rows are aged by writing their timestamps (testDb): the job runs
// at the real now, so other suites' rows are not moved.
import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResult } from '../support/api.ts';
import { expectLedgerInvariants, failureOf, testDb } from '../support/db.ts';
import { type Deal, escrowOp, fundedDeal, newDeal } from '../support/escrows.ts';
import { runJobs } from '../support/clock.ts';
import { newPhone, signUp, type TestUser } from '../support/users.ts';
import {
  ERASED_TEXT,
  PURGE_BATCH,
  type PurgeKind,
  purgePeriod,
  purgePeriods,
  RETENTION,
  RETENTION_PURGE_KINDS,
} from '../../shared/compliance/retention.ts';

const MINUTE = 60_000;
/** The kinds retention_purge keeps under a legal obligation: each has a floor of 5 years in the database. */
const LEGAL_FLOORED = RETENTION.filter((e) => e.basis.includes('legal obligation'))
  .flatMap((e) => e.purges.map((p) => p.kind))
  .filter((k) => k !== 'kyc_records');
const db = () => testDb();

/** The job's clock for this suite: the real now, so nothing of other suites moves. */
const NOW = new Date().toISOString();

/** The moment a kind's period ends for a row, at NOW: computed by PostgreSQL from the same interval. */
async function cutOf(kind: PurgeKind): Promise<Date> {
  const [r] = await db()<{ cut: Date }[]>`select ${NOW}::timestamptz - ${purgePeriod(kind)}::interval as cut`;
  return r!.cut;
}

/** One minute inside the period, one minute past it. */
async function edges(kind: PurgeKind): Promise<{ inside: Date; past: Date }> {
  const cut = (await cutOf(kind)).getTime();
  return { inside: new Date(cut + MINUTE), past: new Date(cut - MINUTE) };
}

function ok(res: ApiResult, status = 200) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(true);
  return res.body.data;
}

const exists = async (table: string, column: string, value: unknown) =>
  (await db().unsafe(`select 1 from ${table} where ${column} = $1`, [value as string])).length > 0;

/** Ends an escrow at `at` (status ended, or cancelled for one that never moved money). */
async function endedAt(deal: Deal, at: Date, status: 'ended' | 'cancelled') {
  await db()`
    update public.escrows
       set status = ${status},
           ended_at = case when ${status} = 'ended' then ${at}::timestamptz end,
           cancelled_at = case when ${status} = 'cancelled' then ${at}::timestamptz end
     where id = ${deal.escrowId}`;
}

async function message(deal: Deal, content: string): Promise<string> {
  const [m] = await db()<{ id: string }[]>`
    insert into public.messages (conversation_id, sender_id, content)
    values (${deal.conversationId}, ${deal.initiator.id}, ${content}) returning id`;
  return m!.id;
}

const contentOf = async (id: string) =>
  (await db()<{ content: string }[]>`select content from public.messages where id = ${id}`)[0]?.content;

interface World {
  msgInside: Deal;
  msgPast: Deal; // funded and released: money moved through the ledger
  phoneInside: Deal;
  phonePast: Deal;
  messages: { inside: string; past: string };
  disputes: { inside: string; past: string };
  sms: { inside: number; past: number; resend: number };
  ledger: { transactions: number; entries: number; transfers: number };
  user: TestUser;
}

const phones = () => newPhone().e164;

async function dispute(deal: Deal, withdrawnAt: Date): Promise<string> {
  const [d] = await db()<{ id: string }[]>`
    insert into public.disputes (escrow_id, raised_by, reason_code, reason, status, previous_status,
                                 negotiation_deadline, withdrawn_at)
    values (${deal.escrowId}, ${deal.payer.id}, 'item_damaged', 'The screen arrived cracked in two places',
            'withdrawn', 'funded', ${withdrawnAt}, ${withdrawnAt})
    returning id`;
  return d!.id;
}

describe('jobs-run', () => {
  describe('retention purges', () => {
    let w: World;
    let purged: Record<string, number>;
    // identifiers of the plain rows, inside and past each period
    const rows: Record<string, { inside: string; past: string }> = {};

    beforeAll(async () => {
      // ---- escrows, their messages, counterparty phones, disputes -----------------------------
      const [msgInside, msgPast, phoneInside, phonePast, user] = await Promise.all([
        newDeal(),
        fundedDeal(),
        newDeal(),
        newDeal(),
        signUp({ first_name: 'Ret' }),
      ]);
      ok(await escrowOp('escrow-release', msgPast.payer, msgPast.escrowId));
      const m = await edges('messages');
      const p = await edges('counterparty_phones');
      const d = await edges('disputes');
      await endedAt(msgInside, m.inside, 'cancelled');
      await endedAt(msgPast, m.past, 'ended');
      await endedAt(phoneInside, p.inside, 'cancelled');
      await endedAt(phonePast, p.past, 'cancelled');
      const messages = {
        inside: await message(msgInside, 'My address is 12 Allen Avenue, Ikeja'),
        past: await message(msgPast, 'Call me on 0803 555 0199 when you arrive'),
      };
      const disputes = { inside: await dispute(phoneInside, d.inside), past: await dispute(phonePast, d.past) };

      // ---- the SMS outbox, with a resend of the old message made inside the period -------------
      const s = await edges('sms_outbox');
      const sms = async (at: Date, resendOf: number | null = null) =>
        (await db()<{ id: string }[]>`
          insert into private.sms_outbox (phone, message, body, created_at, sent_at, resend_of)
          values (${phones()}, '{"kind":"retention_test"}', 'Your code is 123456', ${at}, ${at}, ${resendOf})
          returning id`)[0]!.id;
      const smsPast = Number(await sms(s.past));
      const smsRows = {
        inside: Number(await sms(s.inside)),
        past: smsPast,
        resend: Number(await sms(s.inside, smsPast)),
      };

      // ---- the plain deletions -----------------------------------------------------------------
      const both = async (kind: PurgeKind, insert: (at: Date) => Promise<string>) => {
        const e = await edges(kind);
        rows[kind] = { inside: await insert(e.inside), past: await insert(e.past) };
      };
      await both('otps', async (at) =>
        (await db()<{ id: string }[]>`
          insert into private.otps (phone, context, code_hash, created_at, expires_at)
          values (${phones()}, 'login', 'x', ${at}, ${at}) returning id`)[0]!.id);
      await both('phone_verifications', async (at) =>
        (await db()<{ phone: string }[]>`
          insert into private.phone_verifications (phone, verified_at, expires_at)
          values (${phones()}, ${at}, ${at}) returning phone`)[0]!.phone);
      await both('webhook_inbox', async (at) =>
        (await db()<{ event_key: string }[]>`
          insert into private.webhook_inbox (provider, event_key, event_type, payload, outcome, received_at)
          values ('paystack', ${randomUUID()}, 'charge.success', '{"customer":{"email":"ada@example.com"}}',
                  'applied', ${at}) returning event_key`)[0]!.event_key);
      await both('kyc_webhook_inbox', async (at) =>
        (await db()<{ key: string }[]>`
          insert into private.kyc_webhook_inbox (key, source, event_type, outcome, payload, received_at)
          values (${randomUUID()}, 'sumsub', 'applicantReviewed', 'applied', '{"firstName":"Ada"}', ${at})
          returning key`)[0]!.key);
      // a failure a later delivery applied (its event in the inbox): purged; one never applied: kept
      const failure = async (at: Date, applied: boolean) => {
        const key = randomUUID();
        if (applied) {
          await db()`
            insert into private.webhook_inbox (provider, event_key, event_type, payload, outcome, received_at)
            values ('paystack', ${key}, 'charge.success', '{}', 'applied', ${at})`;
        }
        return (await db()<{ id: string }[]>`
          insert into private.webhook_failures (provider, event_key, event_type, payload, error, created_at)
          values ('paystack', ${key}, 'charge.success', '{"phone":"+2348035550199"}', 'boom', ${at})
          returning id::text`)[0]!.id;
      };
      await both('webhook_failures', (at) => failure(at, true));
      const unresolvedFailure = await failure((await edges('webhook_failures')).past, false);
      await both('admin_audit', async (at) =>
        (await db()<{ id: string }[]>`
          insert into private.admin_audit (admin_id, action, target_type, target_id, created_at)
          values (${randomUUID()}, 'retention.test', 'user', ${user.id}, ${at}) returning id::text`)[0]!.id);
      await both('approvals', async (at) =>
        (await db()<{ id: string }[]>`
          insert into private.approvals (action, target_type, target_id, roles, reason, requested_by, requested_at,
                                         expires_at, status, decided_by, decided_at)
          values ('retention.test', 'user', ${user.id}, '{admin}', 'A reason long enough', ${randomUUID()},
                  ${at}, ${at}, 'approved', ${randomUUID()}, ${at}) returning id`)[0]!.id);
      await both('account_freezes', async (at) =>
        (await db()<{ id: string }[]>`
          insert into private.account_freezes (user_id, frozen_at, frozen_by, reason, unfrozen_at, unfrozen_by,
                                               unfreeze_reason)
          values (${user.id}, ${at}, ${randomUUID()}, 'Suspicious transfers', ${at}, ${randomUUID()}, 'Cleared')
          returning id`)[0]!.id);
      await both('operator_flags', async (at) =>
        (await db()<{ id: string }[]>`
          insert into private.operator_flags (kind, user_id, details, created_at, resolved_at)
          values ('retention_test', ${user.id}, '{}', ${at}, ${at}) returning id`)[0]!.id);
      await both('payment_flags', async (at) =>
        (await db()<{ id: string }[]>`
          insert into private.payment_flags (reason, payload, created_at)
          values ('retention_test', '{"account_name":"ADA OBI"}', ${at}) returning id::text`)[0]!.id);
      await both('sessions', async (at) => {
        const [sess] = await db()<{ id: string }[]>`
          insert into private.sessions (user_id, created_at, expires_at) values (${user.id}, ${at}, ${at}) returning id`;
        await db()`insert into private.refresh_tokens (token_hash, session_id) values (${randomUUID()}, ${sess!.id})`;
        return sess!.id;
      });
      const [live] = await db()<{ id: string }[]>`
        insert into private.sessions (user_id, expires_at) values (${user.id}, now() + interval '1 day') returning id`;
      await both('stream_tickets', async (at) =>
        (await db()<{ hash: string }[]>`
          insert into private.stream_tickets (hash, session_id, created_at, expires_at)
          values (${randomBytes(32)}, ${live!.id}, ${at}, ${at}) returning encode(hash, 'hex') as hash`)[0]!.hash);
      await both('operator_passes', async (at) =>
        (await db()<{ lineage: string }[]>`
          insert into private.operator_passes (session_id, lineage, user_id, passed_at, expires_at)
          values (${live!.id}, ${randomUUID()}, ${user.id}, ${at}, ${at}) returning lineage`)[0]!.lineage);
      await both('rate_limit_events', async (at) =>
        (await db()<{ id: string }[]>`
          insert into private.rate_limit_events (key, created_at)
          values (${`otp:hour:${phones()}`}, ${at}) returning id::text`)[0]!.id);
      await both('idempotency_keys', async (at) =>
        (await db()<{ key: string }[]>`
          insert into private.idempotency_keys (user_id, operation, key, request_hash, response_status,
                                                response_body, created_at)
          values (${user.id}, 'profile-update', ${randomUUID()}, 'h', 200, '{"first_name":"Ada"}', ${at})
          returning key`)[0]!.key);
      await both('events', async (at) => {
        const [ev] = await db()<{ id: string }[]>`
          insert into private.events (occurred_at, kind, subject_id, data)
          values (${at}, 'wallet', ${user.id}, '{"balance":0}') returning id::text`;
        await db()`insert into private.event_recipients (user_id, event_id) values (${user.id}, ${ev!.id})`;
        return ev!.id;
      });
      // notifications: the user's own, aged; read ones go after their period, unread ones stay
      const n = await edges('notifications');
      const notes = await db()<{ id: string }[]>`
        select id from public.notifications
         where user_id in (${msgPast.payer.id}, ${msgPast.payee.id}, ${msgInside.initiator.id}, ${msgInside.counterparty.id})
         order by created_at`;
      expect(notes.length, 'the deals wrote notifications').toBeGreaterThanOrEqual(3);
      const [nIn, nPast, nUnread] = notes.map((r) => r.id);
      await db()`update public.notifications set is_read = true, created_at = ${n.inside} where id = ${nIn!}`;
      await db()`update public.notifications set is_read = true, created_at = ${n.past} where id = ${nPast!}`;
      // (a user's notifications have distinct times)
      await db()`
        update public.notifications set is_read = false, created_at = ${new Date(n.past.getTime() - MINUTE)}
         where id = ${nUnread!}`;
      rows.notifications = { inside: nIn!, past: nPast! };
      rows.notifications_unread = { inside: nUnread!, past: '' };
      rows.webhook_failures_unresolved = { inside: unresolvedFailure, past: '' };

      const [ledger] = await db()<World['ledger'][]>`
        select (select count(*)::int from public.transactions where escrow_id = ${msgPast.escrowId}) as transactions,
               (select count(*)::int from private.ledger_entries) as entries,
               (select count(*)::int from private.ledger_transfers) as transfers`;

      w = {
        msgInside,
        msgPast,
        phoneInside,
        phonePast,
        messages,
        disputes,
        sms: smsRows,
        ledger: ledger!,
        user,
      };

      // the audit row past its period cannot be deleted by hand, by its owner either
      const f = await failureOf(() => db()`delete from private.admin_audit where id = ${rows.admin_audit!.past}`);
      expect(f?.code, 'the audit stays append-only outside the purge').toBe('42501');

      // the run: repeated while the webhook feed has not yet read this suite's events (a purge
      // never removes an event the feed has not read), so each boundary is tested
      purged = Object.fromEntries(RETENTION_PURGE_KINDS.map((k) => [k, 0]));
      for (let i = 0; i < 5; i++) {
        const data = ok(await runJobs(NOW));
        for (const [k, v] of Object.entries(data.purged as Record<string, number>)) purged[k] = purged[k]! + v;
        const [feed] = await db()<{ read: boolean }[]>`
          select (f.xact, f.event_id) >= (e.xact, e.id) as read
            from private.webhook_feed f, private.events e where f.only_row and e.id = ${rows.events!.inside}`;
        if (feed?.read) break;
      }
    }, 120_000);

    it("erases messages' content 2 years after the escrow ended, keeping the message and the escrow", async () => {
      expect(await contentOf(w.messages.inside)).toBe('My address is 12 Allen Avenue, Ikeja');
      expect(await contentOf(w.messages.past)).toBe(ERASED_TEXT);
      const [e] = await db()<{ status: string; title: string }[]>`
        select status, title from public.escrows where id = ${w.msgPast.escrowId}`;
      expect(e).toEqual({ status: 'ended', title: 'Used laptop' });
      expect(purged.messages).toBeGreaterThanOrEqual(1);
    });

    it('masks the counterparty phone 5 years after the escrow ended, keeping the escrow', async () => {
      const phoneOf = async (d: Deal) =>
        (await db()<{ counterparty_phone: string; counterparty_id: string | null }[]>`
          select counterparty_phone, counterparty_id from public.escrows where id = ${d.escrowId}`)[0]!;
      expect((await phoneOf(w.phoneInside)).counterparty_phone).toBe(w.phoneInside.counterparty.phone);
      const past = await phoneOf(w.phonePast);
      const whole = w.phonePast.counterparty.phone;
      expect(past.counterparty_phone).toBe(`${whole.slice(0, 5)}*******${whole.slice(-2)}`);
      // an escrow 2 years old keeps its phone: only its messages go
      expect((await phoneOf(w.msgPast)).counterparty_phone).toBe(w.msgPast.counterparty.phone);
      expect(purged.counterparty_phones).toBeGreaterThanOrEqual(1);
    });

    it("erases a dispute's reason 5 years after it was withdrawn or resolved, keeping its outcome", async () => {
      const reasonOf = async (id: string) =>
        (await db()<{ reason: string; status: string }[]>`select reason, status from public.disputes where id = ${id}`)[
          0
        ];
      expect(await reasonOf(w.disputes.inside)).toEqual({
        reason: 'The screen arrived cracked in two places',
        status: 'withdrawn',
      });
      expect(await reasonOf(w.disputes.past)).toEqual({ reason: ERASED_TEXT, status: 'withdrawn' });
    });

    it('deletes SMS 90 days after they were queued; a later resend survives, unlinked', async () => {
      expect(await exists('private.sms_outbox', 'id', w.sms.inside)).toBe(true);
      expect(await exists('private.sms_outbox', 'id', w.sms.past)).toBe(false);
      const [resend] = await db()<{ resend_of: string | null }[]>`
        select resend_of from private.sms_outbox where id = ${w.sms.resend}`;
      expect(resend).toEqual({ resend_of: null });
    });

    const plain: [PurgeKind, string, string, string][] = [
      ['otps', 'one-time codes, 1 day after expiry', 'private.otps', 'id'],
      ['phone_verifications', 'phone checks, 1 day after expiry', 'private.phone_verifications', 'phone'],
      ['webhook_inbox', 'payment webhooks received, after 180 days', 'private.webhook_inbox', 'event_key'],
      ['kyc_webhook_inbox', 'KYC webhooks received, after 180 days', 'private.kyc_webhook_inbox', 'key'],
      ['webhook_failures', 'webhooks that failed, after 180 days', 'private.webhook_failures', 'id'],
      ['admin_audit', 'operator audit rows, at 5 years', 'private.admin_audit', 'id'],
      ['approvals', 'four-eyes approvals, 5 years after the decision', 'private.approvals', 'id'],
      ['account_freezes', 'freezes, 5 years after the unfreeze', 'private.account_freezes', 'id'],
      ['operator_flags', 'operator flags, 5 years after resolution', 'private.operator_flags', 'id'],
      ['payment_flags', 'payment flags, at 5 years', 'private.payment_flags', 'id'],
      ['sessions', 'sessions, 30 days after expiry', 'private.sessions', 'id'],
      ['stream_tickets', 'stream tickets, 30 days after expiry', 'private.stream_tickets', "encode(hash, 'hex')"],
      ['operator_passes', 'operator passes, 30 days after expiry', 'private.operator_passes', 'lineage'],
      ['rate_limit_events', 'rate-limit events, after 1 day', 'private.rate_limit_events', 'id'],
      ['idempotency_keys', 'stored answers, after 24 hours', 'private.idempotency_keys', 'key'],
      ['events', 'events, after 90 days', 'private.events', 'id'],
      ['notifications', 'read notifications, after 1 year', 'public.notifications', 'id'],
    ];
    for (const [kind, what, table, column] of plain) {
      it(`deletes ${what}`, async () => {
        expect(await exists(table, column, rows[kind]!.inside), `${kind}: inside its period`).toBe(true);
        expect(await exists(table, column, rows[kind]!.past), `${kind}: past its period`).toBe(false);
        if (kind in purged) expect(purged[kind], kind).toBeGreaterThanOrEqual(1);
      });
    }

    it('takes the refresh tokens with a session, and event recipients with their event', async () => {
      expect(await exists('private.refresh_tokens', 'session_id', rows.sessions!.past)).toBe(false);
      expect(await exists('private.refresh_tokens', 'session_id', rows.sessions!.inside)).toBe(true);
      expect(await exists('private.event_recipients', 'event_id', rows.events!.past)).toBe(false);
      expect(await exists('private.event_recipients', 'event_id', rows.events!.inside)).toBe(true);
    });

    it('keeps a webhook failure never resolved (no delivery of its event applied), however old', async () => {
      expect(await exists('private.webhook_failures', 'id', rows.webhook_failures_unresolved!.inside)).toBe(true);
    });

    it('keeps unread notifications, however old', async () => {
      expect(await exists('public.notifications', 'id', rows.notifications_unread!.inside)).toBe(true);
    });

    it('purges nothing the ledger needs: transactions and ledger rows intact, the ledger balances', async () => {
      const [after] = await db()<World['ledger'][]>`
        select (select count(*)::int from public.transactions where escrow_id = ${w.msgPast.escrowId}) as transactions,
               (select count(*)::int from private.ledger_entries) as entries,
               (select count(*)::int from private.ledger_transfers) as transfers`;
      expect(w.ledger.transactions).toBeGreaterThanOrEqual(2);
      expect(after!.transactions).toBe(w.ledger.transactions);
      // the run may post (payouts of other escrows), never remove
      expect(after!.entries).toBeGreaterThanOrEqual(w.ledger.entries);
      expect(after!.transfers).toBeGreaterThanOrEqual(w.ledger.transfers);
      await expectLedgerInvariants('after the retention purge');
    });

    it('answers with a count for every kind', () => {
      expect(Object.keys(purged).sort()).toEqual([...RETENTION_PURGE_KINDS].sort());
    });
  });

  describe('retention purge batches', () => {
    it('touches at most its limit of rows of a kind in one run; the next run goes on', async () => {
      const cut = (await cutOf('rate_limit_events')).getTime();
      const key = `retention-batch:${randomUUID()}`;
      for (let i = 0; i < 5; i++) {
        await db()`insert into private.rate_limit_events (key, created_at) values (${key}, ${new Date(
          cut - (i + 1) * MINUTE,
        )})`;
      }
      const left = async () =>
        (await db()<{ n: number }[]>`select count(*)::int as n from private.rate_limit_events where key = ${key}`)[0]!
          .n;
      const run = () =>
        db().begin(async (tx) => {
          await tx`select set_config('role', 'service_role', true)`;
          return tx<{ kind: string; purged: number }[]>`
            select kind, purged from private.retention_purge(${NOW}::timestamptz, ${tx.json(purgePeriods())}, 2,
                                                             ${ERASED_TEXT})`;
        });
      // other rows of the kind (other suites') may be purged first: run until this suite's are gone,
      // checking that no run took more than the limit
      for (let i = 0; i < 50 && (await left()) > 0; i++) {
        const counts = await run();
        for (const c of counts) expect(c.purged, c.kind).toBeLessThanOrEqual(2);
      }
      expect(await left()).toBe(0);
      expect(PURGE_BATCH).toBeGreaterThan(0);
    });

    it('keeps an event past its period until the webhook feed has read it', async () => {
      const past = new Date((await cutOf('events')).getTime() - MINUTE);
      const [ev] = await db()<{ id: string }[]>`
        insert into private.events (occurred_at, kind, subject_id, data)
        values (${past}, 'wallet', ${randomUUID()}, '{"balance":0}') returning id::text`;
      // the purge alone (no job, so the feed has not read this event): it stays
      await db()`
        select * from private.retention_purge(${NOW}::timestamptz, ${db().json(purgePeriods())}, ${PURGE_BATCH},
                                              ${ERASED_TEXT})`;
      expect(await exists('private.events', 'id', ev!.id)).toBe(true);
      // the job reads the log into the webhook queue first, then purges
      for (let i = 0; i < 5 && (await exists('private.events', 'id', ev!.id)); i++) ok(await runJobs(NOW));
      expect(await exists('private.events', 'id', ev!.id)).toBe(false);
    });

    it('is for the functions role only, and refuses a missing period', async () => {
      const [g] = await db()<{ service: boolean; anon: boolean; authenticated: boolean }[]>`
        select has_function_privilege('service_role', 'private.retention_purge(timestamptz, jsonb, integer, text)',
                                      'execute') as service,
               has_function_privilege('anon', 'private.retention_purge(timestamptz, jsonb, integer, text)',
                                      'execute') as anon,
               has_function_privilege('authenticated', 'private.retention_purge(timestamptz, jsonb, integer, text)',
                                      'execute') as authenticated`;
      expect(g).toEqual({ service: true, anon: false, authenticated: false });
      const { messages: _dropped, ...rest } = purgePeriods() as Record<string, string>;
      const f = await failureOf(() =>
        db()`select * from private.retention_purge(${NOW}::timestamptz, ${db().json(rest)}, 10, ${ERASED_TEXT})`
      );
      expect(f?.message).toMatch(/no period for messages/);
    });
  });

  describe('retention floors', () => {
    const purgeWith = (tx: ReturnType<typeof db>, now: string, periods: Record<string, string>) =>
      tx`select * from private.retention_purge(${now}::timestamptz, ${tx.json(periods)}, ${PURGE_BATCH},
                                               ${ERASED_TEXT})`;

    it('refuses a period under 5 years for each kind kept under a legal obligation', async () => {
      for (const kind of LEGAL_FLOORED) {
        const f = await failureOf(() => purgeWith(db(), NOW, { ...purgePeriods(), [kind]: '1 second' }));
        expect(f?.message, kind).toMatch(new RegExp(`${kind} is kept 5 years at least`));
      }
      // a kind without a legal obligation takes the period it is given
      expect(await failureOf(() => purgeWith(db(), NOW, { ...purgePeriods(), otps: '1 second' }))).toBeNull();
    });

    it('keeps a recent audit row when the caller passes a time 10 years ahead, in the purge or by hand', async () => {
      const ahead = new Date(Date.now() + 10 * 366 * 86_400_000).toISOString();
      const rolledBack = new Error('rolled back');
      const kept = await db().begin(async (tx) => {
        const [a] = await tx<{ id: string }[]>`
          insert into private.admin_audit (admin_id, action, target_type, target_id)
          values (${randomUUID()}, 'retention.test', 'user', ${randomUUID()}) returning id::text`;
        await purgeWith(tx as unknown as ReturnType<typeof db>, ahead, purgePeriods());
        const [r] = await tx<{ n: number }[]>`select count(*)::int as n from private.admin_audit where id = ${a!.id}`;
        // the purge at that time would delete the rest of this database's rows: undone
        throw Object.assign(rolledBack, { kept: r!.n });
      }).catch((e) => (e === rolledBack ? (e as Error & { kept: number }).kept : Promise.reject(e)));
      expect(kept).toBe(1);
      // and by hand, with the purge's own setting, the audit's floor still holds
      const f = await failureOf(() =>
        db().begin(async (tx) => {
          const [a] = await tx<{ id: string }[]>`
            insert into private.admin_audit (admin_id, action, target_type, target_id)
            values (${randomUUID()}, 'retention.test', 'user', ${randomUUID()}) returning id::text`;
          await tx`select set_config('private.retention_audit_before', ${ahead}, true)`;
          await tx`delete from private.admin_audit where id = ${a!.id}`;
        })
      );
      expect(f?.code).toBe('42501');
    });
  });

  describe('KYC records of deleted accounts', () => {
    /** A verified user with an identity request, deleted at `at` (null: never deleted). */
    async function verifiedDeletedAt(at: Date | null): Promise<string> {
      const u = await signUp({ tier: 2 });
      await db()`
        insert into private.identity_requests (reference, user_id, check_type, id_hash, id_last4, provider, status)
        values (${`idv_${randomBytes(16).toString('hex')}`}, ${u.id}, 'nin', ${randomBytes(32).toString('hex')},
                '1234', 'test', 'passed')`;
      if (at) await db()`update private.users set deleted_at = ${at} where id = ${u.id}`;
      return u.id;
    }
    const recordsOf = async (id: string) =>
      (await db()<{ checks: number; requests: number }[]>`
        select (select count(*)::int from private.kyc_checks where user_id = ${id}) as checks,
               (select count(*)::int from private.identity_requests where user_id = ${id}) as requests`)[0]!;

    it('deletes the check records and identity requests 5 years after the account was deleted, no sooner', async () => {
      const { inside, past } = await edges('kyc_records');
      expect(purgePeriod('kyc_records')).toBe('5 years');
      const [kept, gone, live] = await Promise.all([
        verifiedDeletedAt(inside),
        verifiedDeletedAt(past),
        verifiedDeletedAt(null),
      ]);
      for (const id of [kept, gone, live]) {
        const r = await recordsOf(id);
        expect(r.checks).toBeGreaterThan(0);
        expect(r.requests).toBe(1);
      }
      let total = 0;
      for (let i = 0; i < 5 && (await recordsOf(gone)).checks > 0; i++) {
        const data = ok(await runJobs(NOW));
        total += (data.purged as Record<string, number>).kyc_records!;
      }
      expect(await recordsOf(gone)).toEqual({ checks: 0, requests: 0 });
      expect(total).toBeGreaterThanOrEqual(3);
      expect((await recordsOf(kept)).checks).toBeGreaterThan(0);
      expect((await recordsOf(kept)).requests).toBe(1);
      expect((await recordsOf(live)).checks).toBeGreaterThan(0);
      expect((await recordsOf(live)).requests).toBe(1);
      // the account row stays: the ledger names it
      expect(await exists('private.users', 'id', gone)).toBe(true);
    });

    it('counts from the database clock: a time 10 years ahead deletes nothing of an account deleted now', async () => {
      const id = await verifiedDeletedAt(new Date());
      const ahead = new Date(Date.now() + 10 * 366 * 86_400_000).toISOString();
      await db()`select private.kyc_records_purge(${ahead}::timestamptz, ${purgePeriod('kyc_records')}, 1000)`;
      expect((await recordsOf(id)).checks).toBeGreaterThan(0);
      expect((await recordsOf(id)).requests).toBe(1);
    });

    it('is for the functions role only, and refuses a period under 5 years', async () => {
      const [g] = await db()<{ service: boolean; anon: boolean; authenticated: boolean }[]>`
        select has_function_privilege('service_role', 'private.kyc_records_purge(timestamptz, interval, integer)',
                                      'execute') as service,
               has_function_privilege('anon', 'private.kyc_records_purge(timestamptz, interval, integer)',
                                      'execute') as anon,
               has_function_privilege('authenticated', 'private.kyc_records_purge(timestamptz, interval, integer)',
                                      'execute') as authenticated`;
      expect(g).toEqual({ service: true, anon: false, authenticated: false });
      const f = await failureOf(() => db()`select private.kyc_records_purge(${NOW}::timestamptz, '1 year', 10)`);
      expect(f?.message).toMatch(/5 years at least/);
    });
  });
});
