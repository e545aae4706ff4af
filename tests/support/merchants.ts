// Merchants in the suites: a tier-4 owner's merchant with one API key, merchant escrows made with
// that key, and the buyer's payment through the checkout (a signed charge.success from the
// Paystack fake for the checkout's charge). Everything goes through the real server.
import { expect } from 'vitest';
import { expectOk, post } from './api.ts';
import { testDb } from './db.ts';
import { paystack } from './paystack.ts';
import { newPhone, signUp, type TestUser } from './users.ts';

export interface Merchant {
  owner: TestUser;
  id: string;
  name: string;
  key: string;
  keyId: string;
}

/** A new tier-4 user's merchant named `name`, and one of its API keys. */
export async function newMerchant(name = 'Ada Phones'): Promise<Merchant> {
  const owner = await signUp({ tier: 4 });
  const m = expectOk(await post('merchant-create', { name }, { token: owner.accessToken }), 201);
  const k = expectOk(await post('merchant-key-create', { name: 'server' }, { token: owner.accessToken }), 201);
  return { owner, id: m.id, name, key: k.key, keyId: k.id };
}

let refs = 0;
/** A merchant reference no other test uses. */
export const newReference = (prefix = 'order') => `${prefix}-${Date.now()}-${++refs}`;

/** A valid merchant-escrow-create body for new phones, with `over` on top. */
export const merchantEscrowBody = (over: Record<string, unknown> = {}) => ({
  reference: newReference(),
  category: 'goods_products',
  title: 'Phone 15',
  amount: 50_000,
  buyer_phone: newPhone().e164,
  seller_phone: newPhone().e164,
  ...over,
});

/** merchant-escrow-create with the merchant's key. */
export const createMerchantEscrow = (m: Merchant, body: Record<string, unknown>) =>
  post('merchant-escrow-create', body, { token: m.key });

/** A merchant escrow made with `over` on a valid body (201 expected): the body sent and the escrow. */
export async function newMerchantEscrow(m: Merchant, over: Record<string, unknown> = {}) {
  const body = merchantEscrowBody(over);
  return { body, escrow: expectOk(await createMerchantEscrow(m, body), 201) };
}

/** The buyer's checkout charge of a merchant escrow: its reference (the pending transaction's id). */
export async function checkoutOf(escrowId: string): Promise<string> {
  const [row] = await testDb()<{ checkout_tx: string }[]>`
    select checkout_tx from private.merchant_escrows where escrow_id = ${escrowId}`;
  return row!.checkout_tx;
}

/** Funds a merchant escrow as its buyer does: a signed charge.success for its checkout's charge. */
export async function payCheckout(escrowId: string) {
  const d = await paystack.chargeSuccess(await checkoutOf(escrowId));
  expect(d.responses[0]?.status).toBe(200);
}

/** Signs up with a phone of a merchant escrow's party, claiming its placeholder: the account. */
export const signUpAs = (phone: string): Promise<TestUser> => signUp({ phone, first_name: 'Bola', last_name: 'Ade' });

/**
 * A merchant whose wallet holds `fee` naira, earned as a merchant earns it: an escrow of NGN 10,000
 * with that merchant_fee, paid through the checkout, delivered with the key, released by its buyer.
 */
export async function merchantWithFee(fee: number, name = 'Ada Phones'): Promise<Merchant> {
  const m = await newMerchant(name);
  const { body, escrow } = await newMerchantEscrow(m, { amount: 10_000, merchant_fee: fee });
  await payCheckout(escrow.id);
  expectOk(await post('merchant-escrow-deliver', { escrow_id: escrow.id }, { token: m.key }));
  const buyer = await signUpAs(body.buyer_phone);
  expectOk(await post('escrow-release', { escrow_id: escrow.id }, { token: buyer.accessToken }));
  return m;
}
