// docs/security.md: NUL and the other C0 control characters (but tab, line feed and carriage return) are
// refused in every text field with 400 and details naming the field, never a 500 from the database.
import { describe, expect, it } from 'vitest';
import { call, type Envelope, patch, post } from '../support/api.ts';
import { newPhone, signUp } from '../support/users.ts';
import authSignup from '../../supabase/functions/auth-signup/handler.ts';
import cardAdd from '../../supabase/functions/card-add/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import escrowList from '../../supabase/functions/escrow-list/handler.ts';
import profileNokUpdate from '../../supabase/functions/profile-nok-update/handler.ts';
import profileUpdate from '../../supabase/functions/profile-update/handler.ts';

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
