// Escrow scenarios built through the real endpoints (and the Paystack fake where money arrives).
import { expect } from 'vitest';
import type { EscrowCategory } from '../../shared/escrow/enums.ts';
import { KYC_TIERS } from './seeds.ts';
import { get, post } from './api.ts';
import { raiseTier } from './kyc.ts';
import { paystack } from './paystack.ts';
import { signUp, type TestUser } from './users.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import milestoneApprove from '../../supabase/functions/milestone-approve/handler.ts';
import milestoneComplete from '../../supabase/functions/milestone-complete/handler.ts';
import milestoneRelease from '../../supabase/functions/milestone-release/handler.ts';

/** An escrow category: the closed list of shared/escrow/enums.ts. */
export type Category = EscrowCategory;

export interface Deal {
  initiator: TestUser;
  counterparty: TestUser;
  payer: TestUser;
  payee: TestUser;
  escrowId: string;
  conversationId: string;
  inviteToken: string;
  feeBreakdown: {
    escrow_amount: number;
    payer_fee: number;
    vat: number;
    total_charge: number;
    seller_fee: number;
    merchant_fee: number;
    seller_payout: number;
  };
}

/** Credits a user's wallet through the real path: a top-up completed by charge.success. */
export async function fundWallet(user: TestUser, naira: number): Promise<void> {
  const r = await post(walletTopup, { amount: naira }, { token: user.accessToken });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const d = await paystack.chargeSuccess(r.body.data.reference);
  expect(d.responses[0]?.status).toBe(200);
}

/**
 * The lowest KYC tier (docs/kyc.md#tiers-and-their-limits) that lets a user who moved nothing yet today top up `naira` in
 * one go and then fund an escrow of that total charge from the wallet: its single, daily and
 * balance limits all allow it. Throws when none does (above tier 4's NGN 50,000,000).
 */
export function tierToFund(naira: number): number {
  const kobo = Math.round(naira * 100);
  const t = KYC_TIERS.find((t) => t.single >= kobo && t.daily >= kobo && (t.balance === null || t.balance >= kobo));
  if (!t) throw new Error(`no KYC tier allows a top-up or funding of NGN ${naira}; lower the amount`);
  return t.tier;
}

/**
 * Raises the payer of a deal to the tier that lets them top up and fund its total charge (at least
 * `naira`), through the checks it needs (tests/support/kyc.ts): the funded builders move money for
 * the payer, and tier 0 (the default) moves none (the identity floor, docs/compliance.md).
 */
export async function payerCanFund(deal: Deal, naira = deal.feeBreakdown.total_charge): Promise<void> {
  const tier = tierToFund(Math.max(naira, deal.feeBreakdown.total_charge));
  if (tier > 0) expect(await raiseTier(deal.payer.id, tier)).toBe(tier);
}

export interface DealOptions {
  category?: Category;
  payerRole?: 'initiator' | 'counterparty';
  amount?: number;
  title?: string;
  /**
   * The payer's KYC tier (tests/support/kyc.ts), for tests that move money (tier 0 moves none)
   * themselves; 0 (nothing recorded) unless given. The funded builders below raise it on their own.
   */
  payerTier?: number;
}

/** Two signed-up users and an escrow between them, in its first state (draft or invite_pending). */
export async function newDeal(opts: DealOptions = {}): Promise<Deal> {
  const payerRole = opts.payerRole ?? 'initiator';
  const payerTier = (role: 'initiator' | 'counterparty') => (role === payerRole ? opts.payerTier : undefined);
  const [initiator, counterparty] = await Promise.all([
    signUp({ first_name: 'Ini', tier: payerTier('initiator') }),
    signUp({ first_name: 'Cou', tier: payerTier('counterparty') }),
  ]);
  const res = await post(
    escrowCreate,
    {
      category: opts.category ?? 'goods_products',
      payer_role: payerRole,
      title: opts.title ?? 'Used laptop',
      counterparty_phone: counterparty.phone,
      amount: opts.amount ?? 10_000,
    },
    { token: initiator.accessToken },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return {
    initiator,
    counterparty,
    payer: payerRole === 'initiator' ? initiator : counterparty,
    payee: payerRole === 'initiator' ? counterparty : initiator,
    escrowId: res.body.data.escrow_id,
    conversationId: res.body.data.conversation_id,
    inviteToken: res.body.data.invite_token,
    feeBreakdown: res.body.data.fee_breakdown,
  };
}

/**
 * Another escrow between the same two people (initiator pays, a draft): its conversation id. For
 * suites that need two conversations of one pair (a message holds its conversation's lock until
 * it commits).
 */
export async function anotherConversation(deal: Deal, title = 'Another deal'): Promise<string> {
  const res = await post(
    escrowCreate,
    {
      category: 'goods_products',
      payer_role: 'initiator',
      title,
      counterparty_phone: deal.counterparty.phone,
      amount: 5000,
    },
    { token: deal.initiator.accessToken },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.conversation_id;
}

const MILESTONE_OPS = {
  'milestone-approve': milestoneApprove,
  'milestone-complete': milestoneComplete,
  'milestone-release': milestoneRelease,
};

/** One of the transitions that take only a milestone_id, by the user. */
export const milestoneOp = (op: keyof typeof MILESTONE_OPS, user: TestUser, id: string) =>
  post(MILESTONE_OPS[op], { milestone_id: id }, { token: user.accessToken });

export const escrowOp = (op: string, user: TestUser, escrowId: string, extra: Record<string, unknown> = {}) =>
  post(op, { escrow_id: escrowId, ...extra }, { token: user.accessToken });

export async function escrowStatus(deal: Deal): Promise<string> {
  const r = await get(escrowGet, { token: deal.initiator.accessToken, query: { escrow_id: deal.escrowId } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.status;
}

/**
 * A deal that is funded and accepted (status funded), paid from the payer's wallet; the payer has the
 * lowest tier that allows it (payerCanFund) unless `payerTier` says which.
 */
export async function fundedDeal(opts: DealOptions = {}): Promise<Deal> {
  const deal = await newDeal(opts);
  if (opts.payerTier === undefined) await payerCanFund(deal);
  await fundWallet(deal.payer, deal.feeBreakdown.total_charge);
  if ((opts.payerRole ?? 'initiator') === 'initiator') {
    expect((await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' })).status).toBe(200);
    expect((await escrowOp('escrow-accept', deal.counterparty, deal.escrowId)).status).toBe(200);
  } else {
    expect((await escrowOp('escrow-accept', deal.counterparty, deal.escrowId)).status).toBe(200);
    expect((await escrowOp('escrow-fund', deal.payer, deal.escrowId, { method: 'wallet' })).status).toBe(200);
  }
  expect(await escrowStatus(deal)).toBe('funded');
  return deal;
}
