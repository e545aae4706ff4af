// docs/security.md: NUL and the other C0 control characters (but tab, line feed and carriage return) are
// refused in every text field with 400 and details naming the field, never a 500 from the database.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, type Envelope, patch, post, postRaw } from '../support/api.ts';
import { newDeal } from '../support/escrows.ts';
import { TEST_PAYMENTS_WEBHOOK_SECRET } from '../support/stack.ts';
import { newPhone, signUp } from '../support/users.ts';
import authSignup from '../../supabase/functions/auth-signup/handler.ts';
import cardAdd from '../../supabase/functions/card-add/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import escrowList from '../../supabase/functions/escrow-list/handler.ts';
import milestoneCreate from '../../supabase/functions/milestone-create/handler.ts';
import milestoneUpdate from '../../supabase/functions/milestone-update/handler.ts';
import profileNokUpdate from '../../supabase/functions/profile-nok-update/handler.ts';
import profileUpdate from '../../supabase/functions/profile-update/handler.ts';
import webhookPayments from '../../supabase/functions/webhook-payments/handler.ts';

const CONTROL_MESSAGE = expect.stringContaining('control characters');

function refusedOn(res: { status: number; body: Envelope<unknown> }, field: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toMatchObject({ success: false, status: 400 });
  expect(res.body.details).toContainEqual({ field, message: CONTROL_MESSAGE });
}

describe('control characters in text fields', () => {
  it('escrow-create, profile-update, profile-nok-update, card-add and auth-signup answer 400 on the field for a NUL', async () => {
    const user = await signUp();
    const token = user.accessToken;
    refusedOn(
      await post(escrowCreate, {
        category: 'goods_products',
        payer_role: 'initiator',
        title: 'a\u0000b',
        amount: 5000,
        counterparty_phone: newPhone().local,
      }, { token }),
      'title',
    );
    refusedOn(await patch(profileUpdate, { first_name: 'Ada\u0000' }, { token }), 'first_name');
    refusedOn(
      await patch(profileNokUpdate, {
        first_name: 'Ngozi',
        last_name: 'O\u0000bi',
        phone: newPhone().local,
        address: '1 Marina, Lagos',
        relationship: 'sister',
      }, { token }),
      'last_name',
    );
    refusedOn(
      await post(cardAdd, {
        authorization_code: 'AUTH_\u0000x',
        last4: '4081',
        brand: 'visa',
        exp_month: '12',
        exp_year: '2030',
        signature: 'SIG_x',
      }, { token }),
      'authorization_code',
    );
    refusedOn(
      await post(authSignup, {
        phone: newPhone().local,
        first_name: '\u0000',
        last_name: 'Obi',
        password: 'a sound passphrase',
      }),
      'first_name',
    );
  });

  it('refuses every C0 code but tab, line feed and carriage return, nested fields too, and names each field', async () => {
    const user = await signUp();
    for (const c of ['\u0001', '\u0007', '\u0008', '\u000b', '\u000c', '\u001b', '\u001f']) {
      refusedOn(await patch(profileUpdate, { bio: `x${c}y` }, { token: user.accessToken }), 'bio');
    }
    const two = await patch(profileUpdate, { first_name: 'A\u0000', last_name: 'B\u0002' }, {
      token: user.accessToken,
    });
    refusedOn(two, 'first_name');
    refusedOn(two, 'last_name');
    // tab, line feed and carriage return are text
    const ok = await patch(profileUpdate, { bio: 'line one\r\nline two\tindented' }, { token: user.accessToken });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('a control character in a query parameter is a 400 on the parameter', async () => {
    const user = await signUp();
    const res = await call(escrowList, { token: user.accessToken, query: { status: 'draft\u0000' } });
    refusedOn(res, 'status');
  });
});

// JSON text may escape an unpaired surrogate (\ud800), which is no Unicode character and which the
// document's patterns admit: the server reads it as U+FFFD, as a text column stores it, where a json
// column refused it with a 500 (found by tests/integration/fuzz.clock.test.ts).
describe('unpaired surrogates in JSON text', () => {
  it('escrow-create and milestone-update keep the text, with U+FFFD for each unpaired surrogate', async () => {
    const deal = await newDeal({ category: 'hiring', amount: 5_000 });
    const token = deal.initiator.accessToken;
    const created = await post(escrowCreate, {
      category: 'goods_products',
      payer_role: 'counterparty',
      title: 'A\ud800B',
      amount: 5000,
      counterparty_phone: newPhone().local,
    }, { token });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const m = await post(milestoneCreate, { escrow_id: deal.escrowId, title: 'First', amount: 100 }, { token });
    expect(m.status, JSON.stringify(m.body)).toBe(201);
    const updated = await patch(milestoneUpdate, { milestone_id: m.body.data.id, title: '\udfffx\ud800' }, { token });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.data.title).toBe('\ufffdx\ufffd');
  });

  it('webhook-payments takes them in any value or key of the payload', async () => {
    const raw = JSON.stringify({ event: 'fuzz.\ud800', data: { 'k\udfff': ['v\ud800'] } });
    const signature = createHmac('sha512', TEST_PAYMENTS_WEBHOOK_SECRET).update(raw).digest('hex');
    const res = await postRaw(webhookPayments, raw, {
      headers: { 'Content-Type': 'application/json', 'x-payments-signature': signature },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });
});
