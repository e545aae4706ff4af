// docs/security.md: NUL and the other C0 control characters (but tab, line feed and carriage return) are
// refused in every text field with 400 and details naming the field, never a 500 from the database.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, type Envelope, expectOk, get, patch, post, postRaw } from '../support/api.ts';
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
import payoutAdd from '../../supabase/functions/payout-add/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';
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
// column refused it with a 500 (found by the schema-driven fuzz).
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

// docs/security.md, "Input, headers and the local server": names, titles and usernames hold no
// bidirectional control (which can show `exe.txt` as `txt.exe`, or another party's name reversed)
// and no invisible character (two names that look the same but differ), as the document's pattern
// of each field says; the other texts (a bio, a description) may.
describe('bidirectional controls and invisible characters in names and titles', () => {
  const INVISIBLE_MESSAGE = expect.stringContaining('bidirectional controls or invisible characters');
  const invisibleOn = (res: { status: number; body: Envelope<unknown> }, field: string) => {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ success: false, status: 400, code: 'validation_failed' });
    expect(res.body.details).toContainEqual({ field, message: INVISIBLE_MESSAGE });
  };
  const SAMPLES = [
    '\u202e',
    '\u202a',
    '\u2066',
    '\u2069',
    '\u200b',
    '\u200c',
    '\u200d',
    '\u2060',
    '\ufeff',
    '\u200e',
    '\u200f',
    '\u061c',
  ];

  it('profile-update refuses each in first_name, last_name and username, and keeps the profile unchanged', async () => {
    const user = await signUp();
    const token = user.accessToken;
    const before = expectOk(await get(profileGet, { token }));
    for (const c of SAMPLES) {
      invisibleOn(await patch(profileUpdate, { first_name: `Ada${c}` }, { token }), 'first_name');
      // a leading U+FEFF would be trimmed as white space: it is refused all the same
      invisibleOn(await patch(profileUpdate, { last_name: `${c}Obi` }, { token }), 'last_name');
      const u = await patch(profileUpdate, { username: `ada${c}obi` }, { token });
      expect(u.status, JSON.stringify(u.body)).toBe(400);
      expect(u.body.details).toEqual([{ field: 'username', message: expect.any(String) }]);
    }
    expect(expectOk(await get(profileGet, { token }))).toEqual(before);
    // letters of any script, accents and emoji are names; a bio may hold the marks
    const ok = await patch(profileUpdate, { first_name: 'Ọlá 😀', last_name: 'عائشة', bio: 'a\u200fb\u202ec' }, {
      token,
    });
    expect(expectOk(ok)).toMatchObject({ first_name: 'Ọlá 😀', last_name: 'عائشة', bio: 'a\u200fb\u202ec' });
  });

  it('auth-signup, profile-nok-update, escrow-create, milestone-create, milestone-update and payout-add refuse them', async () => {
    invisibleOn(
      await post(authSignup, {
        phone: newPhone().local,
        first_name: 'Ada',
        last_name: 'Ob\u202ei',
        password: 'a sound passphrase',
      }),
      'last_name',
    );
    const deal = await newDeal({ category: 'hiring', amount: 5_000 });
    const token = deal.initiator.accessToken;
    invisibleOn(
      await patch(profileNokUpdate, {
        first_name: 'Ng\u200bozi',
        last_name: 'Obi',
        phone: newPhone().local,
        address: '1 Marina, Lagos',
        relationship: 'sister',
      }, { token }),
      'first_name',
    );
    invisibleOn(
      await post(escrowCreate, {
        category: 'goods_products',
        payer_role: 'initiator',
        title: 'Invoice \u202egnp.exe',
        amount: 5000,
        counterparty_phone: newPhone().local,
      }, { token }),
      'title',
    );
    invisibleOn(
      await post(milestoneCreate, { escrow_id: deal.escrowId, title: '\u2066First\u2069', amount: 100 }, { token }),
      'title',
    );
    const m = await post(milestoneCreate, { escrow_id: deal.escrowId, title: 'First', amount: 100 }, { token });
    expect(m.status, JSON.stringify(m.body)).toBe(201);
    invisibleOn(
      await patch(milestoneUpdate, { milestone_id: m.body.data.id, title: 'Fi\ufeffrst' }, { token }),
      'title',
    );
    const payout = await post(payoutAdd, {
      bank_code: '058',
      bank_name: 'GT\u200dBank',
      account_number: '0123456789',
      account_name: 'Ada \u202eObi',
    }, { token });
    invisibleOn(payout, 'bank_name');
    invisibleOn(payout, 'account_name');
  });

  it('profile-update: avatar_url is https only', async () => {
    const { accessToken: token } = await signUp();
    const http = await patch(profileUpdate, { avatar_url: 'http://cdn.example.ng/a.png' }, { token });
    expect(http.status, JSON.stringify(http.body)).toBe(400);
    expect(http.body.details).toEqual([{ field: 'avatar_url', message: expect.stringContaining('https URL') }]);
    expect(expectOk(await get(profileGet, { token })).avatar).toBeNull();
    const https = expectOk(await patch(profileUpdate, { avatar_url: 'https://cdn.example.ng/a.png' }, { token }));
    expect(https.avatar).toMatchObject({ avatar_url: 'https://cdn.example.ng/a.png' });
  });
});
