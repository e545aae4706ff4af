// The sandbox provider (PAYMENTS_PROVIDER=sandbox, local work without keys) delivers signed,
// Paystack-shaped webhooks that our own webhook-payments accepts and applies. Its users are at
// tier 1: at tier 0 (phone only) the identity floor refuses top-ups and withdrawals.
import { describe, expect, it } from 'vitest';
import { sandboxProvider } from '../../shared/money/payments/sandbox.ts';
import { baseUrl, get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { TEST_PAYMENTS_WEBHOOK_SECRET } from '../support/stack.ts';
import { signUp } from '../support/users.ts';
import walletGet from '../../supabase/functions/wallet-get/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';

const sandbox = () =>
  sandboxProvider({ webhookUrl: `${baseUrl()}/webhook-payments`, secret: TEST_PAYMENTS_WEBHOOK_SECRET, delayMs: 0 });

async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const v = await probe();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  return probe();
}

describe('sandbox payments provider', () => {
  it('a top-up initialised with the sandbox completes through its charge.success webhook', async () => {
    const user = await signUp({ tier: 1 });
    const pending = await post(walletTopup, { amount: 750 }, { token: user.accessToken });
    expect(pending.status).toBe(200);
    const reference = pending.body.data.reference as string;
    const init = await sandbox().initializeCharge({
      reference,
      amountKobo: 75_000,
      email: `${user.id}@customers.escrow.ng`,
      metadata: {},
    });
    expect(init.reference).toBe(reference);
    const wallet = await until(
      () => get(walletGet, { token: user.accessToken }),
      (r) => r.body.data.balance === 750,
    );
    expect(wallet.body.data.balance).toBe(750);
  });

  it('a withdrawal settled by the sandbox transfer.success webhook', async () => {
    const user = await signUp({ tier: 1 });
    const pending = await post(walletTopup, { amount: 1000 }, { token: user.accessToken });
    await sandbox().initializeCharge({
      reference: pending.body.data.reference,
      amountKobo: 100_000,
      email: 'x@y.z',
      metadata: {},
    });
    await until(() => get(walletGet, { token: user.accessToken }), (r) => r.body.data.balance === 1000);
    await testDb()`select private.payout_add(${user.id}, '058', 'GTBank', '0123456789', 'Ada Obi', false, null)`;
    const w = await post(walletWithdraw, { amount: 400 }, { token: user.accessToken });
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    await sandbox().initiateTransfer({
      reference: w.body.data.id,
      amountKobo: 40_000,
      recipientCode: 'RCP_x',
      reason: 'test',
    });
    const [t] = await until(
      () => testDb()<{ status: string }[]>`select status::text from public.transactions where id = ${w.body.data.id}`,
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect(t?.status).toBe('succeeded');
  });

  it('refunds with a signed refund.processed that settles the refund of the charge it names', async () => {
    // a pending refund of a charge (as a merchant escrow's refund is recorded), without a ledger move
    const user = await signUp({ tier: 1 });
    const charge = crypto.randomUUID();
    const [tx] = await testDb()<{ id: string }[]>`
      insert into public.transactions (user_id, type, category, message, amount, direction, status, provider, metadata)
      values (${user.id}, 'escrow_refund', 'escrow', '{"kind":"refund","title":"Phone"}', 12345, 'in', 'pending',
              'sandbox', ${testDb().json({ refund_to: 'provider', charge_reference: charge, late_payment: true })})
      returning id`;
    const r = await sandbox().refund({ chargeReference: charge, amountKobo: 12_345, note: 'test' });
    expect(r.status).toBe('pending');
    const [t] = await until(
      () => testDb()<{ status: string }[]>`select status::text from public.transactions where id = ${tx!.id}`,
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect(t?.status).toBe('succeeded');
  });
});
