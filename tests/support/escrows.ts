// Escrow scenarios built through the real endpoints (and the Paystack fake where money arrives).
import { expect } from 'vitest';
import { get, post } from './api.ts';
import { testDb } from './db.ts';
import { paystack } from './paystack.ts';
import { signUp, type TestUser } from './users.ts';

export type Category = 'goods_products' | 'hiring' | 'auto_dealership' | 'p2p_crypto';

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
    seller_payout: number;
  };
}

/** Credits a user's wallet through the real path: a top-up completed by charge.success. */
export async function fundWallet(user: TestUser, naira: number): Promise<void> {
  const r = await post('wallet-topup', { amount: naira }, { token: user.accessToken });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const d = await paystack.chargeSuccess(r.body.data.reference);
  expect(d.responses[0]?.status).toBe(200);
}

export async function walletKobo(userId: string): Promise<number> {
  const [row] = await testDb()<{ balance: string }[]>`
    select coalesce((select balance from private.ledger_accounts where kind = 'user_wallet' and owner_id = ${userId}), 0)::text as balance`;
  return Number(row?.balance);
}

export async function holdKobo(escrowId: string): Promise<number> {
  const [row] = await testDb()<{ balance: string }[]>`
    select coalesce((select balance from private.ledger_accounts where kind = 'escrow_hold' and owner_id = ${escrowId}), 0)::text as balance`;
  return Number(row?.balance);
}

/** Two signed-up users and an escrow between them, in its first state (draft or invite_pending). */
export async function newDeal(
  opts: { category?: Category; payerRole?: 'initiator' | 'counterparty'; amount?: number; title?: string } = {},
): Promise<Deal> {
  const [initiator, counterparty] = await Promise.all([signUp({ first_name: 'Ini' }), signUp({ first_name: 'Cou' })]);
  const payerRole = opts.payerRole ?? 'initiator';
  const res = await post(
    'escrow-create',
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

export const escrowOp = (op: string, user: TestUser, escrowId: string, extra: Record<string, unknown> = {}) =>
  post(op, { escrow_id: escrowId, ...extra }, { token: user.accessToken });

export async function escrowStatus(deal: Deal): Promise<string> {
  const r = await get('escrow-get', { token: deal.initiator.accessToken, query: { escrow_id: deal.escrowId } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.status;
}

/** A deal that is funded and accepted (status funded), paid from the payer's wallet. */
export async function fundedDeal(opts: Parameters<typeof newDeal>[0] = {}): Promise<Deal> {
  const deal = await newDeal(opts);
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

/** Wallets of both parties and the escrow hold, in kobo. */
export async function balances(deal: Deal) {
  const [payer, payee, hold] = await Promise.all([
    walletKobo(deal.payer.id),
    walletKobo(deal.payee.id),
    holdKobo(deal.escrowId),
  ]);
  return { payer, payee, hold };
}
