// A merchant escrow as a merchant's server lives it, through the project's typed client with an API
// key (clients/typescript/example-merchant.ts) and a real webhook receiver
// (clients/typescript/example-merchant-receiver.ts, verifying every delivery's signature). The
// story: the merchant creates the escrow for an order, the buyer pays through the checkout (the
// Paystack fake's signed charge.success), the merchant marks it delivered with tracking, the
// inspection period ends and the job releases it; the seller's payout starts, the merchant's wallet holds its fee; every webhook arrived
// signed and once, a redelivery (same webhook-id) included. The refund story: the seller refunds a
// paid order, and the provider returns the buyer's money to the card (refund.processed), no wallet
// credited. Every answer the client receives is checked against docs/api/openapi.json
// (tests/support/client.ts). A clock suite: the job delivers the webhooks and ends the inspection.
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { unwrap } from '../../clients/typescript/index.ts';
import { merchantEscrows } from '../../clients/typescript/example-merchant.ts';
import { type MerchantEvent, startReceiver } from '../../clients/typescript/example-merchant-receiver.ts';
import { closeDb } from '../../shared/core/db.ts';
import { baseUrl } from '../support/api.ts';
import { checkedFetch, testClient } from '../support/client.ts';
import { runJobs } from '../support/clock.ts';
import { checkoutOf, payCheckout } from '../support/merchants.ts';
import { paystack } from '../support/paystack.ts';
import { addPayout } from '../support/payouts.ts';
import { newPhone, signUp } from '../support/users.ts';

afterAll(() => closeDb());

/** A port nothing listens on now (the receiver's, which the endpoint's URL names before it starts). */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/**
 * The network between us and the receiver: it passes every delivery on, and loses the answer to the
 * first escrow.funded one (the receiver handled it; we hear a 502), so the delivery is sent again.
 */
function lossyLink(port: number, receiverPort: number) {
  let lost = false;
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const out = httpRequest({
        port: receiverPort,
        host: '127.0.0.1',
        method: req.method,
        path: req.url,
        headers: req.headers,
      }, (answer) => {
        answer.resume();
        const loseIt = !lost && body.includes('"type":"escrow.funded"');
        if (loseIt) lost = true;
        res.writeHead(loseIt ? 502 : answer.statusCode ?? 502).end();
      });
      out.end(body);
    });
  });
  return new Promise<{ close: () => Promise<void> }>((resolve) =>
    server.listen(port, '127.0.0.1', () =>
      resolve({
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      }))
  );
}

/** Runs the job at `at` until `done` holds (each run sends the deliveries that are due). */
async function jobsUntil(done: () => boolean, at: Date = new Date()) {
  for (let i = 0; i < 20 && !done(); i++) {
    expect((await runJobs(at.toISOString())).status).toBe(200);
    if (!done()) await new Promise((r) => setTimeout(r, 100));
  }
  expect(done()).toBe(true);
}

describe('a merchant escrow from an API key to a release (the typed client and a real receiver)', () => {
  it('create with a key, checkout, funded, delivered with tracking, inspection, release, payout, webhooks', {
    timeout: 90_000,
  }, async () => {
    // --- the merchant: a tier-4 owner, a key for its server, an endpoint for its receiver ---
    const owner = await signUp({ tier: 4 });
    const ownerApi = testClient(owner.accessToken);
    const merchant = await unwrap(ownerApi.POST('/merchant-create', { body: { name: 'Ada Phones' } }));
    const key = await unwrap(ownerApi.POST('/merchant-key-create', { body: { name: 'web server' } }));
    expect(key.key).toMatch(/^esk_test_/);
    const [port, receiverPort] = [await freePort(), await freePort()];
    const endpoint = await unwrap(
      ownerApi.POST('/merchant-webhook-create', { body: { url: `http://127.0.0.1:${port}/webhooks` } }),
    );
    const events: MerchantEvent[] = [];
    const receiver = await startReceiver({
      port: receiverPort,
      secret: endpoint.secret,
      onEvent: (e) => void events.push(e),
    });
    const link = await lossyLink(port, receiverPort);
    const typesReceived = () => events.map((e) => e.type);

    try {
      // --- the seller has an account, verified to tier 3 (NGN 5m a payout), with a payout account; the buyer
      // has none yet ---
      const seller = await signUp({ tier: 3, first_name: 'Chidi', last_name: 'Okafor' });
      await addPayout(seller);
      const buyerPhone = newPhone().e164;

      // --- the merchant's server opens the order's escrow with its key ---
      const shop = merchantEscrows({ baseUrl: baseUrl(), apiKey: key.key, fetch: checkedFetch });
      const order = {
        id: `order-${randomUUID()}`,
        title: 'iPhone 15, 128 GB',
        amount: 850_000,
        commission: 25_000,
        buyerPhone,
        sellerPhone: seller.phone,
      };
      const escrow = await shop.open(order);
      expect(escrow).toMatchObject({
        status: 'draft',
        amount: 850_000,
        merchant: { id: merchant.id, name: 'Ada Phones', fee: 25_000 },
        metadata: { order_id: order.id },
      });
      expect(escrow.checkout_url).toMatch(/^https:\/\//);
      // a retry after a lost answer is the same escrow, not a second one
      expect((await shop.open(order)).id).toBe(escrow.id);

      // --- the buyer pays through the checkout; the provider's charge.success funds it ---
      await payCheckout(escrow.id);
      expect(await shop.ofOrder(order.id)).toMatchObject({ id: escrow.id, status: 'funded' });
      expect(await shop.ofOrder('no-such-order')).toBeNull();

      // --- shipped: delivered with tracking, the buyer's inspection starts ---
      const tracking = { carrier: 'GIG Logistics', number: 'GIG-2026-0042', url: 'https://giglogistics.com/track' };
      const delivered = await shop.shipped(escrow.id, tracking);
      expect(delivered).toMatchObject({ status: 'inspection', tracking });
      expect(delivered.inspection_ends_at).not.toBeNull();

      // --- the inspection period ends without a dispute: the job releases it ---
      const afterInspection = new Date(Date.parse(delivered.inspection_ends_at as string) + 60_000);
      expect((await runJobs(afterInspection.toISOString())).status).toBe(200);
      expect(await shop.ofOrder(order.id)).toMatchObject({ status: 'released' });

      // the seller's share went to the bank: a pending payout to the saved account
      const sellerApi = testClient(seller.accessToken);
      const moves = await unwrap(sellerApi.GET('/transaction-list', { params: { query: { escrow_id: escrow.id } } }));
      const payouts = moves.data.filter((t) => t.type === 'escrow_payout');
      expect(payouts).toHaveLength(1);
      // what reaches the bank is the amount less the service's seller fee and the merchant's fee
      const sellerShare = escrow.amount - escrow.fee_breakdown.seller_fee - escrow.merchant!.fee;
      expect(escrow.fee_breakdown).toMatchObject({ merchant_fee: 25_000, seller_payout: sellerShare });
      expect(payouts[0]).toMatchObject({ escrow_id: escrow.id, status: 'pending', amount: sellerShare });

      // the merchant's wallet holds its fee, which the owner reads with their session
      expect(await unwrap(ownerApi.GET('/merchant-wallet-get'))).toEqual({ balance: 25_000, currency: 'NGN' });

      // --- every event reached the receiver, signed (it verifies each) and once ---
      const expected = ['escrow.created', 'escrow.funded', 'escrow.delivered', 'escrow.released'];
      await jobsUntil(() => expected.every((t) => typesReceived().includes(t)), afterInspection);
      expect(typesReceived().sort()).toEqual([...expected].sort());
      for (const e of events) expect(e.data).toMatchObject({ id: escrow.id, reference: order.id });
      expect(events.find((e) => e.type === 'escrow.released')?.data).toMatchObject({ status: 'released' });

      // the answer to the first escrow.funded delivery was lost: it was sent again, with the same
      // webhook-id, and the receiver handled it once
      const api = testClient(key.key);
      const deliveryList = () => unwrap(api.GET('/webhook-delivery-list', { params: { query: { limit: 50 } } }));
      let deliveries = await deliveryList();
      for (let i = 1; i <= 20 && deliveries.some((d) => d.status !== 'succeeded'); i++) {
        // the retry is due a while after the failed attempt: the job runs later each time
        expect((await runJobs(new Date(afterInspection.getTime() + i * 3_600_000).toISOString())).status).toBe(200);
        deliveries = await deliveryList();
      }
      expect(deliveries.map((d) => d.status)).toEqual(deliveries.map(() => 'succeeded'));
      const funded = deliveries.find((d) => d.type === 'escrow.funded')!;
      expect(funded.attempts).toBe(2);
      expect(funded.message_id).toBe(events.find((e) => e.type === 'escrow.funded')?.id);
      expect(typesReceived().filter((t) => t === 'escrow.funded')).toHaveLength(1);
    } finally {
      await link.close();
      await receiver.close();
    }
  });
  it('a refund: the seller refunds a paid order, and the money goes back to the card through the provider', {
    timeout: 60_000,
  }, async () => {
    const owner = await signUp({ tier: 4 });
    const ownerApi = testClient(owner.accessToken);
    await unwrap(ownerApi.POST('/merchant-create', { body: { name: 'Ada Phones' } }));
    const key = await unwrap(ownerApi.POST('/merchant-key-create', { body: { name: 'web server' } }));
    const port = await freePort();
    const endpoint = await unwrap(
      ownerApi.POST('/merchant-webhook-create', {
        body: { url: `http://127.0.0.1:${port}/webhooks`, event_types: ['escrow.funded', 'escrow.refunded'] },
      }),
    );
    const events: MerchantEvent[] = [];
    const receiver = await startReceiver({ port, secret: endpoint.secret, onEvent: (e) => void events.push(e) });
    try {
      const seller = await signUp({ first_name: 'Chidi', last_name: 'Okafor' });
      const buyer = await signUp({ first_name: 'Amaka', last_name: 'Nwosu' });
      const shop = merchantEscrows({ baseUrl: baseUrl(), apiKey: key.key, fetch: checkedFetch });
      const order = {
        id: `order-${randomUUID()}`,
        title: 'Out of stock blender',
        amount: 40_000,
        commission: 2_000,
        buyerPhone: buyer.phone,
        sellerPhone: seller.phone,
      };
      const escrow = await shop.open(order);
      await payCheckout(escrow.id);
      const charge = await checkoutOf(escrow.id);

      // the seller cannot deliver after all and refunds in the app
      const sellerApi = testClient(seller.accessToken);
      expect(await unwrap(sellerApi.POST('/escrow-refund', { body: { escrow_id: escrow.id } }))).toMatchObject({
        status: 'refunded',
      });
      // the provider was asked once to refund the whole charge, by the charge's reference
      const totalKobo = Math.round(escrow.fee_breakdown.total_charge * 100);
      expect((await paystack.refunds()).filter((r) => r.reference === charge)).toEqual([
        expect.objectContaining({ reference: charge, amount: totalKobo }),
      ]);
      // nothing went to the buyer's wallet: the refund waits for the provider
      const buyerApi = testClient(buyer.accessToken);
      expect((await unwrap(buyerApi.GET('/wallet-get'))).balance).toBe(0);
      const refundOf = async () =>
        (await unwrap(buyerApi.GET('/transaction-list', { params: { query: { escrow_id: escrow.id } } }))).data
          .find((t) => t.type === 'escrow_refund');
      expect(await refundOf()).toMatchObject({ status: 'pending', amount: escrow.fee_breakdown.total_charge });

      // the provider's signed refund.processed: the money is back on the card
      const delivered = await paystack.refundOutcome(charge, 'refund.processed');
      expect(delivered.responses[0]?.status).toBe(200);
      expect(await refundOf()).toMatchObject({ status: 'succeeded' });
      expect((await unwrap(buyerApi.GET('/wallet-get'))).balance).toBe(0);
      expect(await shop.ofOrder(order.id)).toMatchObject({ status: 'refunded' });

      // the merchant heard both, signed, once each
      await jobsUntil(() => events.some((e) => e.type === 'escrow.refunded'));
      expect(events.map((e) => e.type).sort()).toEqual(['escrow.funded', 'escrow.refunded']);
      expect(events.find((e) => e.type === 'escrow.refunded')?.data).toMatchObject({
        id: escrow.id,
        status: 'refunded',
      });
    } finally {
      await receiver.close();
    }
  });
});
