// The operators' reads (docs/operators.md#reading-a-user-and-an-escrow, #queues): search, a
// user's whole picture, an escrow's timeline from the event log and the ledger, and the queues'
// counts. Every read but the queues writes its audit row (shared/operators/audit.ts) in the
// transaction that read, so a read the audit could not record (the operator's role revoked
// meanwhile: 404 operator_not_found) answers nothing. Identity numbers are answered masked (their
// last 3 digits), bank account numbers by their last 4; an escrow's messages only with an open
// dispute or a stated reason. A deleted account is answered with its deleted_at, its phone null
// (never the keyed hash that replaced it) and its names as the deletion left them (Deleted user).
import { asService, type Fragment, type Tx } from '../core/db.ts';
import { toNaira } from '../core/money.ts';
import { NIGERIAN_PHONE, toE164 } from '../core/validation.ts';
import { SMS_MAX_ATTEMPTS } from '../messages/sms-outbox.ts';
import { ESCROW_NOT_FOUND } from '../escrow/refusals.ts';
import { USER_NOT_FOUND } from '../reviews/refusals.ts';
import type { OperatorCaller, OperatorRole } from './auth.ts';
import { recordAudit } from './audit.ts';
import {
  type AdminEscrowGetResponse,
  type AdminQueueListResponse,
  type AdminSearchResponse,
  type AdminUserGetResponse,
  OPERATOR_QUEUES,
  type OperatorQueue,
  type SmsStatus,
} from './schema.ts';

/** At most this many users and escrows answer a search; the 20 latest escrows and transactions a user's picture. */
export const READ_LIMIT = 20;

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** What a search's text was taken for (the audit keeps this, never the text itself). */
export type SearchKind = 'phone' | 'id' | 'reference';

/** How admin-search reads `q`: a Nigerian phone, a UUID, or else a provider's reference. */
export function searchKind(q: string): SearchKind {
  if (NIGERIAN_PHONE.test(q)) return 'phone';
  if (UUID.test(q)) return 'id';
  return 'reference';
}

/** An identity number's last digits as operators see them: 8 asterisks and the last 3. */
export function maskIdentity(last: string | null): string | null {
  return last ? `********${last.slice(-3)}` : null;
}

/** A bank account number as operators see it: asterisks and its last 4 digits. */
export const maskAccount = (n: string): string => `${'*'.repeat(Math.max(n.length - 4, 2))}${n.slice(-4)}`;

type UserRow = {
  id: string;
  phone: string | null;
  first_name: string | null;
  last_name: string | null;
  kyc_tier: number;
  frozen: boolean;
  created_at: string;
  deleted_at: string | null;
};

const usersWhere = (tx: Tx, where: Fragment) =>
  tx<UserRow[]>`
    select u.id, case when u.deleted_at is null then u.phone end as phone, p.first_name, p.last_name, u.kyc_tier,
           exists (select 1 from private.account_freezes f where f.user_id = u.id and f.unfrozen_at is null) as frozen,
           u.created_at, u.deleted_at
      from private.users u left join public.profiles p on p.id = u.id
     where ${where}
     order by u.created_at desc
     limit ${READ_LIMIT}`;

type EscrowRow = {
  id: string;
  status: AdminSearchResponse['escrows'][number]['status'];
  amount: string;
  payer_id: string | null;
  payee_id: string | null;
  created_at: string;
};

const escrowsWhere = (tx: Tx, where: Fragment) =>
  tx<EscrowRow[]>`
    select e.id, e.status, e.amount::text,
           case when e.payer_role = 'initiator' then e.initiator_id else e.counterparty_id end as payer_id,
           case when e.payer_role = 'initiator' then e.counterparty_id else e.initiator_id end as payee_id,
           e.created_at
      from public.escrows e
     where ${where}
     order by e.created_at desc
     limit ${READ_LIMIT}`;

/**
 * admin-search: users by phone (exact, either form) or id, escrows by id, and a payment or
 * transfer by its reference (its id, which is the reference this service gives the provider, or
 * the provider's own charge, transfer or refund reference) leading to its user and escrow. The
 * audit row keeps what the text was taken for and the ids found, never the text.
 */
export function adminSearch(op: OperatorCaller, q: string): Promise<AdminSearchResponse> {
  const kind = searchKind(q);
  return asService(async (tx) => {
    let users: UserRow[] = [];
    let escrows: EscrowRow[] = [];
    if (kind === 'phone') {
      users = await usersWhere(tx, tx`u.phone = ${toE164(q)}`);
    } else {
      const byTx = kind === 'id'
        ? tx`t.id = ${q}::uuid`
        : tx`(t.provider_charge_id = ${q} or t.provider_transfer_id = ${q} or t.provider_refund_id = ${q})`;
      const txs = await tx<{ user_id: string; escrow_id: string | null }[]>`
        select t.user_id, t.escrow_id from public.transactions t where ${byTx} limit ${READ_LIMIT}`;
      const userIds = [...new Set(txs.map((t) => t.user_id))];
      const escrowIds = [...new Set(txs.flatMap((t) => (t.escrow_id ? [t.escrow_id] : [])))];
      if (kind === 'id') {
        userIds.push(q.toLowerCase());
        escrowIds.push(q.toLowerCase());
      }
      if (userIds.length > 0) users = await usersWhere(tx, tx`u.id = any(${userIds}::uuid[])`);
      if (escrowIds.length > 0) escrows = await escrowsWhere(tx, tx`e.id = any(${escrowIds}::uuid[])`);
    }
    await recordAudit(tx, op, {
      action: 'user.search',
      targetType: null,
      targetId: null,
      reason: null,
      facts: {
        query_kind: kind,
        users_found: users.length,
        escrows_found: escrows.length,
        user_ids: users.map((u) => u.id),
        escrow_ids: escrows.map((e) => e.id),
      },
    });
    return {
      users: users.map((u) => ({
        id: u.id,
        phone: u.phone,
        first_name: u.first_name ?? '',
        last_name: u.last_name ?? '',
        kyc_tier: Number(u.kyc_tier),
        frozen: u.frozen,
        created_at: u.created_at,
        deleted_at: u.deleted_at,
      })),
      escrows: escrows.map((e) => ({ ...e, amount: toNaira(e.amount) })),
    };
  });
}

/** admin-user-get: a user's whole picture (404 user_not_found); audited as user.read. */
export function adminUserGet(
  op: OperatorCaller,
  input: { user_id: string; reason?: string },
): Promise<AdminUserGetResponse> {
  const id = input.user_id;
  return asService(async (tx) => {
    const [user] = await tx<
      {
        id: string;
        phone: string | null;
        first_name: string | null;
        last_name: string | null;
        kyc_tier: number;
        created_at: string;
        deleted_at: string | null;
      }[]
    >`
      select u.id, case when u.deleted_at is null then u.phone end as phone, p.first_name, p.last_name, u.kyc_tier,
             u.created_at, u.deleted_at
        from private.users u left join public.profiles p on p.id = u.id where u.id = ${id}`;
    if (!user) throw USER_NOT_FOUND.error({});
    const checks = await tx<
      {
        type: AdminUserGetResponse['kyc_checks'][number]['type'];
        status: 'pending' | 'passed' | 'failed';
        last: string | null;
        updated_at: string;
      }[]
    >`
      select c.check_type as type, c.status,
             coalesce(c.id_last4, (select b.id_last4 from private.identity_bindings b
                                    where b.user_id = c.user_id and b.kind = c.check_type limit 1)) as last,
             c.updated_at
        from private.kyc_checks c where c.user_id = ${id} order by c.created_at, c.check_type`;
    const [wallet] = await tx<{ balance: string; in_escrow: string; pending_payouts: string }[]>`
      select private.wallet_balance(${id})::text as balance,
             (select coalesce(sum(a.balance), 0) from public.escrows e
                join private.ledger_accounts a on a.kind = 'escrow_hold' and a.owner_id = e.id
               where (e.payer_role = 'initiator' and e.initiator_id = ${id})
                  or (e.payer_role = 'counterparty' and e.counterparty_id = ${id}))::text as in_escrow,
             (select coalesce(sum(t.amount), 0) from public.transactions t
               where t.user_id = ${id} and t.merchant_id is null and t.status = 'pending'
                 and t.type in ('withdrawal', 'escrow_payout'))::text as pending_payouts`;
    const [freeze] = await tx<{ since: string; reason: string; frozen_by: string }[]>`
      select frozen_at as since, reason, frozen_by from private.account_freezes
       where user_id = ${id} and unfrozen_at is null`;
    const [sessions] = await tx<{ n: number }[]>`
      select count(*)::int as n from private.sessions
       where user_id = ${id} and revoked_at is null and expires_at > now()`;
    const roles = await tx<{ role: OperatorRole }[]>`
      select role from private.operators where user_id = ${id} order by role`;
    const merchants = await tx<{ id: string; name: string; status: 'active' | 'frozen' | 'closed' }[]>`
      select id, name, status from private.merchants where owner_id = ${id} order by created_at`;
    const accounts = await tx<
      { id: string; bank_name: string; account_number: string; is_default: boolean; verified: boolean }[]
    >`
      select id, bank_name, account_number, is_default, verified from public.payout_accounts
       where user_id = ${id} order by created_at`;
    const cards = await tx<{ id: string; brand: string; last4: string; is_default: boolean }[]>`
      select id, brand, last4, is_default from public.saved_cards where user_id = ${id} order by created_at`;
    const escrows = await tx<
      {
        id: string;
        status: AdminUserGetResponse['escrows'][number]['status'];
        role: 'payer' | 'payee';
        amount: string;
        created_at: string;
      }[]
    >`
      select e.id, e.status,
             case when (e.payer_role = 'initiator') = (e.initiator_id = ${id}) then 'payer' else 'payee' end as role,
             e.amount::text, e.created_at
        from public.escrows e
       where e.id in (
         (select x.id from public.escrows x where x.initiator_id = ${id} order by x.created_at desc limit ${READ_LIMIT})
         union
         (select x.id from public.escrows x where x.counterparty_id = ${id} order by x.created_at desc limit ${READ_LIMIT}))
       order by e.created_at desc
       limit ${READ_LIMIT}`;
    const txs = await tx<
      {
        id: string;
        kind: AdminUserGetResponse['transactions'][number]['kind'];
        status: AdminUserGetResponse['transactions'][number]['status'];
        amount: string;
        reference: string | null;
        held_for_review: boolean;
        review_reason: string | null;
        review_expected: string | null;
        review_received: string | null;
        merchant_id: string | null;
        created_at: string;
      }[]
    >`
      select t.id, t.type as kind, t.status, t.amount::text,
             coalesce(t.provider_charge_id, t.provider_transfer_id, t.provider_refund_id) as reference,
             (t.status = 'pending' and t.metadata ? 'review') as held_for_review,
             t.metadata -> 'review' ->> 'reason' as review_reason,
             t.metadata -> 'review' ->> 'expected_amount' as review_expected,
             t.metadata -> 'review' ->> 'received_amount' as review_received,
             t.merchant_id, t.created_at
        from public.transactions t where t.user_id = ${id}
       order by t.created_at desc limit ${READ_LIMIT}`;
    const disputes = await tx<
      { id: string; escrow_id: string; status: 'negotiation' | 'escalated'; created_at: string }[]
    >`
      select d.id, d.escrow_id, d.status, d.created_at
        from public.disputes d join public.escrows e on e.id = d.escrow_id
       where d.status in ('negotiation', 'escalated') and (e.initiator_id = ${id} or e.counterparty_id = ${id})
       order by d.created_at`;
    // the outbox to their phone, without the text (a one-time code's body holds the code)
    const sms = await tx<
      {
        id: string;
        kind: AdminUserGetResponse['sms'][number]['kind'];
        status: SmsStatus;
        withheld: string | null;
        resend_of: string | null;
        resends: number;
        created_at: string;
        sent_at: string | null;
      }[]
    >`
      select s.id::text, s.message ->> 'kind' as kind,
             case when s.withheld is not null then 'withheld'
                  when s.sent_at is not null then 'sent'
                  when s.expires_at is not null and s.expires_at <= now() then 'expired'
                  when s.attempts >= ${SMS_MAX_ATTEMPTS} then 'failed'
                  else 'queued' end as status,
             s.withheld, s.resend_of::text,
             (select count(*)::int from private.sms_outbox r
               where r.resend_of = coalesce(s.resend_of, s.id)) as resends,
             s.created_at, s.sent_at
        from private.sms_outbox s where s.phone = ${user.phone}
       order by s.id desc limit ${READ_LIMIT}`;
    await recordAudit(tx, op, {
      action: 'user.read',
      targetType: 'user',
      targetId: id,
      reason: input.reason ?? null,
      facts: { frozen: freeze !== undefined, kyc_tier: Number(user.kyc_tier), open_disputes: disputes.length },
    });
    return {
      profile: {
        id: user.id,
        phone: user.phone,
        first_name: user.first_name ?? '',
        last_name: user.last_name ?? '',
        kyc_tier: Number(user.kyc_tier),
        created_at: user.created_at,
        deleted_at: user.deleted_at,
      },
      kyc_checks: checks.map((c) => ({
        type: c.type,
        status: c.status,
        id_number: maskIdentity(c.last),
        updated_at: c.updated_at,
      })),
      wallet: {
        balance: toNaira(wallet!.balance),
        in_escrow: toNaira(wallet!.in_escrow),
        pending_payouts: toNaira(wallet!.pending_payouts),
      },
      frozen: freeze ?? null,
      active_sessions: sessions?.n ?? 0,
      operator_roles: roles.map((r) => r.role),
      merchants: [...merchants],
      payout_accounts: accounts.map((a) => ({ ...a, account_number: maskAccount(a.account_number) })),
      cards: [...cards],
      escrows: escrows.map((e) => ({ ...e, amount: toNaira(e.amount) })),
      transactions: txs.map(({ review_reason, review_expected, review_received, ...t }) => ({
        ...t,
        amount: toNaira(t.amount),
        review: review_reason === null ? null : {
          reason: review_reason,
          expected_amount: review_expected === null ? null : toNaira(review_expected),
          received_amount: review_received === null ? null : toNaira(review_received),
        },
      })),
      open_disputes: [...disputes],
      sms: sms.map((m) => ({
        ...m,
        id: Number(m.id),
        resend_of: m.resend_of === null ? null : Number(m.resend_of),
      })),
    };
  });
}

/**
 * admin-escrow-get: the escrow, its parties, milestones and timeline (the event log, the ledger
 * transfers that touched its hold, its payouts, its latest dispute with every proposal). Message
 * content (and the dispute's reason) only with an open dispute or `reason`; else their count.
 * 404 escrow_not_found; audited as escrow.read with whether content was shown.
 */
export function adminEscrowGet(
  op: OperatorCaller,
  input: { escrow_id: string; reason?: string },
): Promise<AdminEscrowGetResponse> {
  const id = input.escrow_id;
  return asService(async (tx) => {
    const [e] = await tx<
      {
        id: string;
        status: AdminEscrowGetResponse['escrow']['status'];
        category: AdminEscrowGetResponse['escrow']['category'];
        title: string;
        amount: string;
        payer_fee: string;
        vat: string;
        total_charge: string;
        seller_fee: string;
        seller_payout: string;
        released_amount: string;
        held: string;
        merchant_id: string | null;
        created_at: string;
        payer_id: string | null;
        payee_id: string | null;
      }[]
    >`
      select e.id, e.status, e.category::text as category, e.title, e.amount::text, e.payer_fee::text, e.vat::text,
             e.total_charge::text, e.seller_fee::text, e.seller_payout::text, e.released_amount::text,
             private.hold_balance(e.id)::text as held, e.merchant_id, e.created_at,
             case when e.payer_role = 'initiator' then e.initiator_id else e.counterparty_id end as payer_id,
             case when e.payer_role = 'initiator' then e.counterparty_id else e.initiator_id end as payee_id
        from public.escrows e where e.id = ${id}`;
    if (!e) throw ESCROW_NOT_FOUND.error({});
    const parties = await tx<{ id: string; first_name: string; last_name: string; deleted_at: string | null }[]>`
      select p.id, p.first_name, p.last_name, u.deleted_at
        from public.profiles p join private.users u on u.id = p.id
       where p.id = any(${[e.payer_id, e.payee_id].filter((x): x is string => x !== null)}::uuid[])`;
    const partyOf = (pid: string | null) => parties.find((p) => p.id === pid) ?? null;
    const milestones = await tx<
      {
        id: string;
        index: number;
        title: string;
        amount: string;
        status: AdminEscrowGetResponse['milestones'][number]['status'];
      }[]
    >`
      select id, milestone_index as index, title, amount::text, status from public.milestones
       where escrow_id = ${id} order by milestone_index`;
    const events = await tx<
      {
        id: string;
        kind: AdminEscrowGetResponse['events'][number]['kind'];
        subject_id: string;
        status: string | null;
        occurred_at: string;
      }[]
    >`
      select id::text, kind, subject_id, data ->> 'status' as status, occurred_at
        from private.events where escrow_id = ${id} order by id`;
    const transfers = await tx<
      {
        id: string;
        kind: string;
        transaction_id: string | null;
        hold_change: string;
        entries: { account: string; owner_id: string | null; amount: number }[];
        created_at: string;
      }[]
    >`
      select t.id, t.kind, t.transaction_id, h.amount::text as hold_change,
             (select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                       'account', a.kind, 'owner_id', a.owner_id, 'amount', x.amount) order by x.id)
                from private.ledger_entries x join private.ledger_accounts a on a.id = x.account_id
               where x.transfer_id = t.id) as entries,
             t.created_at
        from private.ledger_accounts ha
        join private.ledger_entries h on h.account_id = ha.id
        join private.ledger_transfers t on t.id = h.transfer_id
       where ha.kind = 'escrow_hold' and ha.owner_id = ${id}
       order by h.id`;
    const payouts = await tx<
      {
        id: string;
        user_id: string;
        status: AdminEscrowGetResponse['payouts'][number]['status'];
        amount: string;
        created_at: string;
        completed_at: string | null;
      }[]
    >`
      select id, user_id, status, amount::text, created_at, completed_at from public.transactions
       where escrow_id = ${id} and type = 'escrow_payout' order by created_at`;
    const [dispute] = await tx<
      {
        id: string;
        status: NonNullable<AdminEscrowGetResponse['dispute']>['status'];
        reason_code: string;
        reason: string;
        raised_by: string;
        outcome: 'release' | 'refund' | 'split' | null;
        payee_amount: string | null;
        created_at: string;
        escalated_at: string | null;
        resolved_at: string | null;
      }[]
    >`
      select id, status, reason_code, reason, raised_by, outcome, payee_amount::text, created_at, escalated_at,
             resolved_at
        from public.disputes where escrow_id = ${id} order by created_at desc limit 1`;
    const proposals = dispute
      ? await tx<
        {
          id: string;
          proposed_by: string;
          outcome: 'release' | 'refund' | 'split';
          payee_amount: string | null;
          status: NonNullable<AdminEscrowGetResponse['dispute']>['proposals'][number]['status'];
          created_at: string;
        }[]
      >`
        select id, proposed_by, outcome, payee_amount::text, status, created_at from public.dispute_proposals
         where dispute_id = ${dispute.id} order by created_at`
      : [];
    const openDispute = dispute !== undefined && (dispute.status === 'negotiation' || dispute.status === 'escalated');
    const shown = openDispute || input.reason !== undefined;
    const [counted] = await tx<{ n: number }[]>`
      select count(*)::int as n from public.messages m join public.conversations c on c.id = m.conversation_id
       where c.escrow_id = ${id}`;
    const items = shown
      ? await tx<{ id: string; sender_id: string; content: string; created_at: string }[]>`
        select m.id, m.sender_id, m.content, m.created_at
          from public.messages m join public.conversations c on c.id = m.conversation_id
         where c.escrow_id = ${id} order by m.created_at`
      : null;
    await recordAudit(tx, op, {
      action: 'escrow.read',
      targetType: 'escrow',
      targetId: id,
      reason: input.reason ?? null,
      facts: { status: e.status, dispute_status: dispute?.status ?? null, content_shown: shown },
    });
    const naira = (v: string | null) => (v === null ? null : toNaira(v));
    return {
      escrow: {
        id: e.id,
        status: e.status,
        category: e.category,
        title: e.title,
        amount: toNaira(e.amount),
        payer_fee: toNaira(e.payer_fee),
        vat: toNaira(e.vat),
        total_charge: toNaira(e.total_charge),
        seller_fee: toNaira(e.seller_fee),
        seller_payout: toNaira(e.seller_payout),
        released_amount: toNaira(e.released_amount),
        held: toNaira(e.held),
        merchant_id: e.merchant_id,
        created_at: e.created_at,
      },
      payer: partyOf(e.payer_id),
      payee: partyOf(e.payee_id),
      milestones: milestones.map((m) => ({ ...m, amount: toNaira(m.amount) })),
      events: [...events],
      transfers: transfers.map((t) => ({
        ...t,
        hold_change: toNaira(t.hold_change),
        entries: t.entries.map((x) => ({ ...x, amount: toNaira(x.amount) })),
      })),
      payouts: payouts.map((p) => ({ ...p, amount: toNaira(p.amount) })),
      dispute: dispute
        ? {
          ...dispute,
          reason: shown ? dispute.reason : null,
          payee_amount: naira(dispute.payee_amount),
          proposals: proposals.map((p) => ({ ...p, payee_amount: naira(p.payee_amount) })),
        }
        : null,
      messages: { count: counted?.n ?? 0, content_shown: shown, items: items ? [...items] : null },
    };
  });
}

/**
 * Each queue's rows: what waits for an operator (docs/operators.md#queues), with when it started
 * waiting. One statement; no audit row (counts name no one).
 */
export function adminQueueList(_op: OperatorCaller): Promise<AdminQueueListResponse> {
  return asService(async (tx) => {
    const rows = await tx<{ queue: OperatorQueue; n: number; oldest_at: string | null; age: number | null }[]>`
      with q(queue, n, oldest_at) as (
        select 'disputes_negotiation', count(*), min(created_at) from public.disputes where status = 'negotiation'
        union all
        select 'disputes_escalated', count(*), min(escalated_at) from public.disputes where status = 'escalated'
        union all
        select 'charges_held', count(*), min(coalesce((metadata -> 'review' ->> 'flagged_at')::timestamptz, created_at))
          from public.transactions
         where status = 'pending' and metadata ? 'review' and type in ('wallet_topup', 'escrow_funding')
        union all
        select 'payouts_failed', count(*), min(coalesce(completed_at, created_at))
          from public.transactions
         where status = 'failed' and type in ('withdrawal', 'escrow_payout') and not metadata ? 'retried_by'
        union all
        select 'webhooks_failed', count(*), min(first_at)
          from (select f.provider, f.event_key, min(f.created_at) as first_at
                  from private.webhook_failures f
                 where not exists (select 1 from private.webhook_inbox i
                                    where i.provider = f.provider and i.event_key = f.event_key)
                 group by f.provider, f.event_key) w
        union all
        select 'identity_flags', count(*), min(created_at)
          from private.operator_flags where resolved_at is null and kind like 'identity%'
        union all
        select 'deactivations_failed', count(*), min(created_at)
          from private.operator_flags where resolved_at is null and kind = 'dedicated_account_deactivation_failed'
           -- a request the call after the deletion is still answering is not a failure yet
           and (coalesce((details ->> 'attempts')::int, 1) > 0 or created_at < now() - interval '1 hour')
      )
      select queue, n::int as n, oldest_at,
             floor(extract(epoch from now() - oldest_at))::int as age
        from q`;
    return rows
      .sort((a, b) => OPERATOR_QUEUES.indexOf(a.queue) - OPERATOR_QUEUES.indexOf(b.queue))
      .map((r) => ({
        queue: r.queue,
        count: r.n,
        oldest_at: r.oldest_at,
        oldest_age_seconds: r.age === null ? null : Math.max(0, r.age),
      }));
  });
}
