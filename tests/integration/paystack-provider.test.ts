// The Paystack adapter called directly (under Node), not through the server, against the stack's
// Paystack fake (tests/fakes/paystack.ts): an answer that does not come in time, or a 500, leaves
// the outcome unknown ('unavailable', settled later by a webhook or reconciliation), never a
// refusal; a request that hangs holds the caller no longer than the adapter's timeout.
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { paystackProvider } from '../../shared/money/payments/paystack.ts';
import { ProviderError } from '../../shared/money/payments/provider.ts';
import { paystack } from '../support/paystack.ts';
import { TEST_PAYSTACK_SECRET_KEY } from '../support/stack.ts';

const provider = (timeoutMs?: number) =>
  paystackProvider({ baseUrl: inject('fakePaystackUrl'), secretKey: TEST_PAYSTACK_SECRET_KEY, timeoutMs });

const charge = (reference: string) => ({
  reference,
  amountKobo: 250_000,
  email: `${randomUUID()}@customers.escrow.test`,
  metadata: { kind: 'wallet_topup', transaction_id: reference },
});

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ProviderError);
    return err as ProviderError;
  }
  throw new Error('expected the call to fail');
}

describe('paystack adapter against the fake', () => {
  it('initializes a charge the fake then knows, unpaid', async () => {
    const reference = randomUUID();
    const r = await provider().initializeCharge(charge(reference));
    expect(r.reference).toBe(reference);
    expect(r.authorizationUrl).toMatch(/^https:\/\//);
    expect((await paystack.charges()).find((c) => c.reference === reference)).toEqual({
      reference,
      amount: 250_000,
      status: null,
      channels: null,
    });
  });

  it('refunds a paid charge by its reference, at most what it has left, and finds the refund', async () => {
    const reference = randomUUID();
    await provider().initializeCharge(charge(reference));
    // an unpaid charge cannot be refunded
    expect((await rejection(provider().refund({ chargeReference: reference, amountKobo: 1_000, note: 'x' }))).kind)
      .toBe('refused');
    await paystack.chargeStatus(reference, 'success');
    expect(await provider().findRefund({ chargeReference: reference, chargeId: null })).toBeNull();
    const r = await provider().refund({ chargeReference: reference, amountKobo: 200_000, note: 'Escrow refund' });
    expect(r).toMatchObject({ status: 'pending', amountKobo: 200_000, currency: 'NGN' });
    expect((await paystack.requests('/refund')).at(-1)?.body).toEqual({
      transaction: reference,
      amount: 200_000,
      currency: 'NGN',
      merchant_note: 'Escrow refund',
    });
    // beyond what the charge has left: refused
    const over = await rejection(provider().refund({ chargeReference: reference, amountKobo: 50_001, note: 'x' }));
    expect(over.kind).toBe('refused');
    await paystack.refundStatus(reference, 'processed');
    expect(await provider().findRefund({ chargeReference: reference, chargeId: null })).toEqual({
      refundId: r.refundId,
      status: 'processed',
      amountKobo: 200_000,
      currency: 'NGN',
    });
  });

  it("offers the checkout's channels when named", async () => {
    const reference = randomUUID();
    await provider().initializeCharge({ ...charge(reference), channels: ['card', 'bank_transfer', 'ussd'] });
    expect((await paystack.charges()).find((c) => c.reference === reference)?.channels)
      .toEqual(['card', 'bank_transfer', 'ussd']);
  });

  it('no answer within the timeout is unavailable, and the caller is not held longer', async () => {
    const reference = randomUUID();
    await paystack.fail({ path: '/transaction/initialize', field: 'reference', value: reference }, 'timeout');
    const started = Date.now();
    const err = await rejection(provider(300).initializeCharge(charge(reference)));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toMatch(/unreachable/);
    expect(Date.now() - started).toBeLessThan(5_000);
    // the fake never carried it out
    expect((await paystack.charges()).some((c) => c.reference === reference)).toBe(false);
  });

  it('a 500 is unavailable with its status; a 400 is a refusal', async () => {
    const down = randomUUID();
    await paystack.fail({ path: '/transaction/initialize', field: 'reference', value: down }, 'unavailable');
    const err = await rejection(provider().initializeCharge(charge(down)));
    expect([err.kind, err.httpStatus]).toEqual(['unavailable', 500]);
    const declined = randomUUID();
    await paystack.fail({ path: '/transaction/initialize', field: 'reference', value: declined }, 'refuse');
    const refused = await rejection(provider().initializeCharge(charge(declined)));
    expect([refused.kind, refused.httpStatus]).toEqual(['refused', 400]);
  });
});
