// The example of README.md (the same code: tests/unit/client.test.ts compares them), run against
// the real service by tests/e2e/client-example.test.ts. Not part of the published package.
import { createEscrowClient, EscrowApiError, unwrap } from './index.ts';

export async function signUpAndOpenEscrow(options: {
  baseUrl: string; // e.g. http://127.0.0.1:54321/functions/v1
  phone: string; // the new user's phone: 0803... or +234803...
  sellerPhone: string; // who the escrow is with
  askCode: (phone: string) => Promise<string>; // the 6-digit code the user received by SMS
  fetch?: (request: Request) => Promise<Response>; // optional: globalThis.fetch by default
}) {
  const { baseUrl, phone, fetch } = options;
  const api = createEscrowClient({ baseUrl, fetch });

  // 1. Sign up: a code by SMS, proof of the phone with it, then the account and its session.
  await unwrap(api.POST('/auth-send-otp', { body: { phone, context: 'signup' } }));
  const otp_code = await options.askCode(phone);
  await unwrap(api.POST('/auth-verify', { body: { phone, context: 'signup', otp_code } }));
  const { user, session } = await unwrap(
    api.POST('/auth-signup', {
      body: { phone, first_name: 'Amaka', last_name: 'Nwosu', password: 'a long passphrase' },
    }),
  );

  // 2. As that user (the token is sent as Authorization: Bearer ...), open an escrow. The
  //    Idempotency-Key makes a retry after a timeout safe: the same key replays the first answer.
  const me = createEscrowClient({ baseUrl, fetch, accessToken: session.access_token });
  const created = await unwrap(
    me.POST('/escrow-create', {
      params: { header: { 'Idempotency-Key': crypto.randomUUID() } },
      body: {
        category: 'goods_products',
        payer_role: 'initiator',
        title: 'iPhone 13, 128 GB',
        counterparty_phone: options.sellerPhone,
        amount: 25_000, // naira
      },
    }),
  );
  // created.fee_breakdown.total_charge: what funding it will cost, fees and VAT included

  // 3. A refusal is an EscrowApiError: the status, its code, the service's message, each field refused.
  let refusal: EscrowApiError | undefined;
  try {
    await unwrap(me.GET('/escrow-get', { params: { query: { escrow_id: 'not-a-uuid' } } }));
  } catch (e) {
    if (!(e instanceof EscrowApiError)) throw e;
    refusal = e; // e.status 400, e.code 'validation_failed', e.fields ['escrow_id']
  }

  const escrow = await unwrap(me.GET('/escrow-get', { params: { query: { escrow_id: created.escrow_id } } }));
  return { user, created, escrow, refusal }; // escrow.status: 'draft' until it is funded
}
