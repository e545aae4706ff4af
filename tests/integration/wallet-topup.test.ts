import { describe, expect, it } from 'vitest';
import { get, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { paystack } from '../support/paystack.ts';
import { signUp } from '../support/users.ts';

describe('wallet-topup with a new card, completed by charge.success', () => {
  it('initialises the charge with our transaction id as reference and credits the wallet once', async () => {
    const user = await signUp();
    const res = await post('wallet-topup', { amount: 2500.75 }, { token: user.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { reference, transaction_id, authorization_url, amount, status } = res.body.data;
    expect(reference).toBe(transaction_id);
    expect(amount).toBe(2500.75);
    expect(status).toBe('pending');
    expect(authorization_url).toMatch(/^https:\/\//);

    const [init] = (await paystack.requests('/transaction/initialize')).filter((r) => r.body?.reference === reference);
    expect(init?.body.amount).toBe('250075');
    expect(init?.body.email).toBe(`${user.id}@customers.escrow.ng`);

    let wallet = await get('wallet-get', { token: user.accessToken });
    expect(wallet.body.data).toMatchObject({ balance: 0, pending_deposits: 2500.75, currency: 'NGN' });

    const delivered = await paystack.chargeSuccess(reference, { times: 3 });
    expect(delivered.responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(delivered.responses[0]?.body).toEqual({ success: true, status: 200, data: { received: true } });

    wallet = await get('wallet-get', { token: user.accessToken });
    expect(wallet.body.data).toMatchObject({ balance: 2500.75, pending_deposits: 0 });
    const list = await get('transaction-list', { token: user.accessToken });
    expect(list.body.data.data).toHaveLength(1);
    expect(list.body.data.data[0]).toMatchObject({ id: reference, status: 'succeeded', category: 'deposit', direction: 'in', amount: 2500.75 });
    const [entries] = await testDb()<{ n: number }[]>`
      select count(*)::int as n from private.ledger_transfers where transaction_id = ${reference}`;
    expect(entries?.n).toBe(1);
  });
});
