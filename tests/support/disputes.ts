// Disputes through the real endpoints (dispute-raise/propose/respond/withdraw/get) and what the
// tests read back: the escrow's stored fees, the ledger transfers that moved its hold, and the
// "fee on X" of docs/disputes.md#money (half-up). Shared by disputes*.test.ts and disputes.clock.test.ts.
import { expect } from 'vitest';
import { type BodyOf, get, post } from './api.ts';
import { testDb } from './db.ts';
import { type Category, type Deal, escrowOp, escrowStatus, fundWallet, newDeal, payerCanFund } from './escrows.ts';
import type { TestUser } from './users.ts';
import disputeGet from '../../supabase/functions/dispute-get/handler.ts';
import disputePropose from '../../supabase/functions/dispute-propose/handler.ts';
import disputeRaise from '../../supabase/functions/dispute-raise/handler.ts';
import disputeRespond from '../../supabase/functions/dispute-respond/handler.ts';
import disputeWithdraw from '../../supabase/functions/dispute-withdraw/handler.ts';
import messageFeed from '../../supabase/functions/message-feed/handler.ts';

export type Side = 'payer' | 'payee';

export const raise = (deal: Deal, by: Side, extra: Partial<BodyOf<typeof disputeRaise>> = {}) =>
  post(disputeRaise, {
    escrow_id: deal.escrowId,
    reason_code: 'item_not_as_described',
    reason: 'The phone has a cracked screen',
    ...extra,
  }, { token: deal[by].accessToken });
export const propose = (deal: Deal, by: Side, body: Omit<BodyOf<typeof disputePropose>, 'escrow_id'>) =>
  post(disputePropose, { escrow_id: deal.escrowId, ...body }, { token: deal[by].accessToken });
export const respond = (deal: Deal, by: Side, proposalId: string, accept: boolean) =>
  post(disputeRespond, { escrow_id: deal.escrowId, proposal_id: proposalId, accept }, {
    token: deal[by].accessToken,
  });
export const withdraw = (deal: Deal, by: Side) =>
  post(disputeWithdraw, { escrow_id: deal.escrowId }, { token: deal[by].accessToken });
export const disputeOf = (deal: Deal, by: Side = 'payer') =>
  get(disputeGet, { token: deal[by].accessToken, query: { escrow_id: deal.escrowId } });

/** half-up of total * part / whole, in kobo (the "fee on X" of docs/disputes.md#money); exact in BigInt. */
export const halfUp = (total: number, part: number, whole: number) =>
  Number((2n * BigInt(total) * BigInt(part) + BigInt(whole)) / (2n * BigInt(whole)));

/** floor(fee * after / amount) - floor(fee * before / amount): a release's cumulative share of a fee. */
export const shareOf = (fee: number, amount: number, before: number, after: number) =>
  Number((BigInt(fee) * BigInt(after)) / BigInt(amount) - (BigInt(fee) * BigInt(before)) / BigInt(amount));

/** The escrow's stored money, in kobo. */
export async function stored(escrowId: string) {
  const [row] = await testDb()<
    {
      amount: string;
      payer_fee: string;
      vat: string;
      seller_fee: string;
      released_amount: string;
      total_charge: string;
      status: string;
    }[]
  >`
    select amount, payer_fee, vat, seller_fee, released_amount, total_charge, status
      from public.escrows where id = ${escrowId}`;
  const e = row!;
  return {
    amount: Number(e.amount),
    payerFee: Number(e.payer_fee),
    vat: Number(e.vat),
    sellerFee: Number(e.seller_fee),
    total: Number(e.total_charge),
    released: Number(e.released_amount),
    status: e.status as string,
  };
}

/** A row of public.disputes as postgres.js reads it (bigint as text, timestamps as Date). */
export interface DisputeRow {
  id: string;
  escrow_id: string;
  raised_by: string;
  reason_code: string;
  reason: string;
  status: string;
  previous_status: string;
  inspection_left: string | null;
  negotiation_deadline: Date;
  auto_release_at: Date | null;
  reminded_at: Date | null;
  escalated_at: Date | null;
  withdrawn_at: Date | null;
  outcome: string | null;
  payee_amount: string | null;
  resolved_by: string | null;
  resolution: string | null;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The dispute's row (as the database owner), by id. */
export async function disputeRow(id: string): Promise<DisputeRow> {
  const [d] = await testDb()<DisputeRow[]>`select * from public.disputes where id = ${id}`;
  return d!;
}

/**
 * Credits the wallet with at least naira through top-ups (each 100 .. 100,000,000 naira; the user's
 * KYC tier must allow the total: payerCanFund).
 */
export async function fundWalletAtLeast(user: TestUser, naira: number): Promise<void> {
  let left = Math.max(100, Math.ceil(naira * 100) / 100);
  while (left > 0) {
    const part = Math.min(left, 100_000_000);
    await fundWallet(user, Math.max(100, part));
    left = Math.round((left - part) * 100) / 100;
  }
}

/**
 * A funded, accepted escrow of any amount a KYC tier allows funding (a total charge up to tier 4's
 * NGN 50,000,000): the payer is raised to the lowest tier that allows topping up and funding it
 * (payerCanFund) and tops up at least NGN 100.
 */
export async function fundedAny(
  amount: number,
  opts: { category?: Category; payerRole?: 'initiator' | 'counterparty'; title?: string } = {},
): Promise<Deal> {
  const deal = await newDeal({ ...opts, amount });
  await payerCanFund(deal, 100);
  await fundWalletAtLeast(deal.payer, deal.feeBreakdown.total_charge);
  const payerFirst = (opts.payerRole ?? 'initiator') === 'initiator';
  const steps: [string, TestUser, Record<string, unknown>][] = payerFirst
    ? [['escrow-fund', deal.payer, { method: 'wallet' }], ['escrow-accept', deal.counterparty, {}]]
    : [['escrow-accept', deal.counterparty, {}], ['escrow-fund', deal.payer, { method: 'wallet' }]];
  for (const [op, user, extra] of steps) {
    const r = await escrowOp(op, user, deal.escrowId, extra);
    expect(r.status, `${op}: ${JSON.stringify(r.body)}`).toBe(200);
  }
  expect(await escrowStatus(deal)).toBe('funded');
  return deal;
}

/** The notifications of the user about this dispute (event types, oldest first), from their message-feed. */
export async function disputeFeed(deal: Deal, user: TestUser, disputeId: string): Promise<string[]> {
  const r = await get(messageFeed, {
    token: user.accessToken,
    query: { conversation_id: deal.conversationId, limit: 200 },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const items = r.body.data;
  for (const item of items.filter((i) => i.source === 'notification' && String(i.event_type).startsWith('dispute_'))) {
    expect(item, `${item.event_type} in the feed`).toMatchObject({ entity_type: 'dispute', escrow_id: deal.escrowId });
    expect(item.content.length).toBeGreaterThan(0);
  }
  return items
    .filter((i) => i.source === 'notification' && i.entity_type === 'dispute' && i.entity_id === disputeId)
    .map((i) => i.event_type as string);
}

/** The dispute_settled SMS queued for the phone (what each party received, in kobo). */
export async function settledSms(phone: string): Promise<{ outcome: string; amount: number }[]> {
  const rows = await testDb()<{ message: { outcome: string; amount: number } }[]>`
    select message from private.sms_outbox where phone = ${phone} and message ->> 'kind' = 'dispute_settled' order by id`;
  return rows.map((r) => ({ outcome: r.message.outcome, amount: Number(r.message.amount) }));
}
