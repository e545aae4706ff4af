// The request rules the OpenAPI document states, through the real server (docs/openapi.md): a UUID of
// any version is an id (an unknown one is 404, never 400), an amount with a third decimal is a 400
// naming the field, timestamps and dates are what Postgres reads, URLs what the pattern admits, and
// a profile-update needs a field. tests/unit/request-rules.test.ts compares the document and the
// server's validation case by case; this file checks that the running functions answer the same.
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResult, get, patch, post } from '../support/api.ts';
import { signUp, type TestUser } from '../support/users.ts';
import cardRemove from '../../supabase/functions/card-remove/handler.ts';
import escrowGet from '../../supabase/functions/escrow-get/handler.ts';
import escrowList from '../../supabase/functions/escrow-list/handler.ts';
import milestoneCreate from '../../supabase/functions/milestone-create/handler.ts';
import profileUpdate from '../../supabase/functions/profile-update/handler.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';

/** UUIDs zod's z.uuid() refused (version 0, 9 to f, or another variant), and the nil and max ones. */
const ONCE_REFUSED = [
  '00000000-0000-0000-0000-000000000000', // nil
  'ffffffff-ffff-ffff-ffff-ffffffffffff', // max
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', // max, upper case
  '3f2504e0-4f89-01d3-9a0c-0305e82c3301', // version 0
  '3f2504e0-4f89-91d3-9a0c-0305e82c3301', // version 9
  '3f2504e0-4f89-f1d3-ca0c-0305e82c3301', // version f, variant c
  '3F2504E0-4F89-41D3-1A0C-0305E82C3301', // version 4, variant 1 (NCS), upper case
];

function refused(r: ApiResult, field: string, message: string | RegExp) {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body).toMatchObject({ success: false, status: 400 });
  const details = (r.body.details ?? []) as { field: string; message: string }[];
  expect(details.map((d) => d.field)).toContain(field);
  const detail = details.find((d) => d.field === field);
  if (typeof message === 'string') expect(detail?.message).toBe(message);
  else expect(detail?.message).toMatch(message);
}

let user: TestUser;
beforeAll(async () => {
  user = await signUp();
});

describe('escrow-get', () => {
  it('takes a UUID of any version or case: an unknown one is 404, not 400', async () => {
    for (const id of ONCE_REFUSED) {
      const r = await get(escrowGet, { token: user.accessToken, query: { escrow_id: id } });
      expect(r.status, `${id}: ${JSON.stringify(r.body)}`).toBe(404);
    }
    refused(
      await get(escrowGet, { token: user.accessToken, query: { escrow_id: `{${ONCE_REFUSED[0]}}` } }),
      'escrow_id',
      'must be a UUID',
    );
  });
});

describe('card-remove', () => {
  it('a body UUID of a version once refused names no card: 404', async () => {
    const r = await post(cardRemove, { card_id: ONCE_REFUSED[3]! }, { token: user.accessToken });
    expect(r.status, JSON.stringify(r.body)).toBe(404);
  });
});

describe('wallet-topup', () => {
  it('refuses 5000.001 and 5000.0000000001 with 400 on amount: at most 2 decimals, judged in decimal', async () => {
    for (const amount of [5000.001, 5000.0000000001, 100.005]) {
      refused(
        await post(walletTopup, { amount }, { token: user.accessToken }),
        'amount',
        'must have at most 2 decimal places',
      );
    }
  });

  it('refuses a callback_url outside the document’s pattern (user name, IPv6 host) with 400', async () => {
    for (const url of ['https://user@app.escrow.ng/funded', 'https://[::1]/funded', 'https://app.escrow.ng/a b']) {
      refused(
        await post(walletTopup, { amount: 5000, callback_url: url }, { token: user.accessToken }),
        'callback_url',
        /http\(s\) URL/,
      );
    }
  });
});

describe('escrow-list', () => {
  it('reads every timestamp the pattern admits, the year 0001 and offsets of 15:59 included', async () => {
    for (const before of ['0001-01-01T00:00:00+15:59', '9999-12-31T23:59:59.999999999-15:59', '2024-02-29T12:00:00Z']) {
      const r = await get(escrowList, { token: user.accessToken, query: { before } });
      expect(r.status, `${before}: ${JSON.stringify(r.body)}`).toBe(200);
    }
    for (const before of ['0000-06-01T00:00:00Z', '2026-01-01T00:00:00+16:00', '2026-01-01t00:00:00z']) {
      refused(await get(escrowList, { token: user.accessToken, query: { before } }), 'before', /ISO 8601/);
    }
  });
});

describe('milestone-create', () => {
  it('refuses the date 0000-01-01 with 400 (Postgres has no year 0); 0001-01-01 reaches the escrow check', async () => {
    const body = { escrow_id: ONCE_REFUSED[0]!, title: 'First half', amount: 0.07 };
    refused(
      await post(milestoneCreate, { ...body, due_date: '0000-01-01' }, { token: user.accessToken }),
      'due_date',
      /date/,
    );
    const r = await post(milestoneCreate, { ...body, due_date: '0001-01-01' }, { token: user.accessToken });
    expect(r.status, JSON.stringify(r.body)).toBe(404);
  });
});

describe('profile-update', () => {
  it('refuses a body without a field (minProperties 1), naming the body', async () => {
    const r = await patch(profileUpdate, {}, { token: user.accessToken });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.details).toEqual([{ field: 'body', message: 'must contain at least one field' }]);
  });
});
