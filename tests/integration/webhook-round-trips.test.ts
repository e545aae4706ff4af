// What a bank transfer into a virtual account costs in round trips to Postgres: the most frequent
// payments event is recorded, credited and given its outcome in one message (docs/performance.md,
// "The payments webhook"). The webhook runs in this process with its database connections through
// a proxy that counts them (support/pg-round-trips.ts), one request at a time; the SMS dispatch
// that follows the answer is counted apart.
import { createHmac, randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRoundTripProxy } from '../support/pg-round-trips.ts';
import { testDb } from '../support/db.ts';
import { TEST_PAYMENTS_WEBHOOK_SECRET } from '../support/stack.ts';
import { signUp } from '../support/users.ts';

// every connection of the webhook in this process goes through the proxy
const proxy = await startRoundTripProxy(inject('databaseUrl'));
process.env.DATABASE_URL = proxy.url;
const { closeDb } = await import('../../shared/core/db.ts');
const { getConfig } = await import('../../shared/core/config.ts');
const { backgroundSettled } = await import('../../shared/core/background.ts');
const webhookPayments = (await import('../../supabase/functions/webhook-payments/handler.ts')).default;

beforeAll(() => {
  expect(getConfig().databaseUrl).toBe(proxy.url);
});
afterAll(async () => {
  await backgroundSettled();
  await closeDb();
  await proxy.close();
});

/** A signed charge.success for a bank transfer into the account numbered `account`. */
function deposit(account: string, amount = 50_000) {
  const id = randomInt(1, 2 ** 40);
  const body = JSON.stringify({
    event: 'charge.success',
    data: {
      id,
      status: 'success',
      reference: `rt-${randomUUID()}`,
      amount,
      currency: 'NGN',
      channel: 'dedicated_nuban',
      customer: { email: 'payer@example.com', customer_code: `CUS_rt${id}` },
      authorization: { receiver_bank_account_number: account, sender_name: 'ADA OBI' },
    },
  });
  return new Request('http://127.0.0.1/functions/v1/webhook-payments', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-payments-signature': createHmac('sha512', TEST_PAYMENTS_WEBHOOK_SECRET).update(body).digest('hex'),
    },
    body,
  });
}

/**
 * Sends the request and reads the proxy's counts as its answer arrives: the SMS dispatch it may
 * start runs after the answer, on a later turn of the event loop, and is waited for apart.
 */
async function counted(request: Request) {
  await backgroundSettled();
  proxy.reset();
  const res = await webhookPayments(request);
  const counts = { ...proxy.counts };
  const body = await res.json();
  await backgroundSettled();
  return { status: res.status, body, ...counts };
}

/** A tier-1 user with an active virtual account (as dedicatedaccount.assign.success leaves it). */
async function withAccount() {
  const user = await signUp({ tier: 1 });
  const account = `77${String(randomInt(0, 1e8)).padStart(8, '0')}`;
  await testDb()`insert into public.virtual_accounts (user_id, status, account_number, provider)
                 values (${user.id}, 'active', ${account}, 'paystack')`;
  return { user, account };
}

const creditedTo = async (userId: string) =>
  (await testDb()<{ n: number; sum: string }[]>`
    select count(*)::int as n, coalesce(sum(amount), 0)::text as sum from public.transactions
     where user_id = ${userId} and type = 'virtual_account_deposit'`)[0];

describe('webhook-payments', () => {
  describe('round trips to Postgres', () => {
    it('a deposit into an account known by number is one round trip, credited and its outcome kept', async () => {
      const { user, account } = await withAccount();
      await counted(deposit(account)); // the pool's connections opened
      const request = deposit(account, 70_000);
      const key = `charge.success:${JSON.parse(await request.clone().text()).data.id}`;
      const out = await counted(request);
      expect(out.status).toBe(200);
      expect(out.body.data).toEqual({ received: true });
      expect(out.roundTrips).toBe(1);
      expect(await creditedTo(user.id)).toEqual({ n: 2, sum: '120000' });
      const [inbox] = await testDb()<{ outcome: string }[]>`
        select outcome from private.webhook_inbox where provider = 'payments' and event_key = ${key}`;
      expect(inbox?.outcome).toBe('virtual_account_deposit');
    });

    it('its redelivery is one round trip too, and credits nothing', async () => {
      const { user, account } = await withAccount();
      const request = deposit(account);
      const again = request.clone();
      expect((await counted(request)).status).toBe(200);
      const out = await counted(again);
      expect(out.status).toBe(200);
      expect(out.roundTrips).toBe(1);
      expect(await creditedTo(user.id)).toEqual({ n: 1, sum: '50000' });
    });
  });
});
