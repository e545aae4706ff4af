// The five reads Postgres builds (the `reads` schema, shared/core/json-text.ts) answer, byte for
// byte, what the same handlers wrote when they built the answer in TypeScript from the rows: the
// TypeScript path is kept beside each (…AsObject(s)) and both run here on the same rows, chosen to
// be awkward (amounts with kobo, timestamps with and without microseconds, nulls, quotes, emoji,
// line breaks, control characters and marker characters in stored text, nested metadata,
// notifications whose sentences TypeScript writes). Through the server, the answer is the success
// envelope around the same text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthUser } from '../../shared/auth/session.ts';
import { closeDb } from '../../shared/core/db.ts';
import { fillSlots } from '../../shared/core/json-text.ts';
import { profileGet, profileGetAsObject } from '../../shared/profile/profile.ts';
import { walletGet, walletGetAsObject } from '../../shared/money/wallet.ts';
import { escrowList, escrowListAsObjects } from '../../shared/escrow/escrow.ts';
import { transactionList, transactionListAsObjects } from '../../shared/money/transactions.ts';
import { messageFeed, messageFeedAsObjects } from '../../shared/conversations/conversations.ts';
import { baseUrl, patch, post } from '../support/api.ts';
import { testDb } from '../support/db.ts';
import { escrowOp, fundedDeal, newDeal } from '../support/escrows.ts';
import { signUp, type TestUser } from '../support/users.ts';
import profileUpdate from '../../supabase/functions/profile-update/handler.ts';
import profileNokUpdate from '../../supabase/functions/profile-nok-update/handler.ts';
import messageSend from '../../supabase/functions/message-send/handler.ts';

afterAll(() => closeDb());

const authOf = (user: TestUser): AuthUser => {
  const claims = JSON.parse(atob(user.accessToken.split('.')[1] as string));
  return {
    id: user.id,
    phone: user.phone,
    sessionId: claims.session_id,
    claims: { ...claims, role: 'authenticated' },
  } as AuthUser;
};

/** The answer's text through the server, as a client receives it. */
async function served(path: string, user: TestUser): Promise<string> {
  const res = await fetch(`${baseUrl()}/${path}`, { headers: { Authorization: `Bearer ${user.accessToken}` } });
  expect(res.status).toBe(200);
  return await res.text();
}

const envelope = (data: string) => `{"success":true,"status":200,"data":${data}}\n`;

// stored text no request may send (control characters, both markers) but old rows could hold
const AWKWARD = 'Tricky "quoted" \\ back\nslash \u0001\u0002 marker \u2028 Ọ́lá 😀 </script>';

let user: TestUser;
let other: TestUser;
let conversation: string;

beforeAll(async () => {
  // the reader: a funded deal as payer, another as payee, one declined, one they were invited to
  const deal = await fundedDeal({ title: 'Generator "Mikano" 20kVA', amount: 123_456.78 });
  user = deal.payer;
  other = deal.payee;
  conversation = deal.conversationId;
  await escrowOp('escrow-deliver', deal.payee, deal.escrowId);
  await escrowOp('escrow-release', deal.payer, deal.escrowId);
  const declined = await newDeal({ title: 'Declined one' });
  await escrowOp('escrow-decline', declined.counterparty, declined.escrowId);
  await post('escrow-create', {
    category: 'hiring',
    payer_role: 'counterparty',
    title: 'Logo design, 3 drafts',
    counterparty_phone: user.phone,
    amount: 25_000.5,
  }, { token: other.accessToken });
  expect(
    (await patch(profileUpdate, {
      username: 'ada_reads',
      bio: 'Line one\nline "two" 😀',
      address: '12 Awolowo Rd, Ikoyi',
    }, {
      token: user.accessToken,
    })).status,
  ).toBe(200);
  expect(
    (await patch(profileNokUpdate, {
      first_name: 'Ngozi',
      last_name: "O'Neil",
      phone: '+2348030000001',
      address: 'Flat 2, "Blue" House',
      relationship: 'sister',
    }, { token: user.accessToken })).status,
  ).toBe(200);
  for (const content of ['Hello 👋', 'Is it "new"?\nReply soon', 'ok']) {
    expect((await post(messageSend, { conversation_id: conversation, content }, { token: user.accessToken })).status)
      .toBe(201);
    expect(
      (await post(messageSend, { conversation_id: conversation, content: `re: ${content}` }, {
        token: other.accessToken,
      }))
        .status,
    ).toBe(201);
  }
  // stored values no request sends: awkward text, a timestamp on a whole second, nested metadata
  const db = testDb();
  await db`update public.escrows set description = ${AWKWARD}, updated_at = date_trunc('second', updated_at)
            where id = ${deal.escrowId}`;
  await db`update public.messages set content = ${AWKWARD} where id = (
             select id from public.messages where conversation_id = ${conversation} order by created_at limit 1)`;
  await db`update public.profiles set avatar_url = 'https://cdn.example.com/a.png', avatar_storage_path = null,
            avatar_status = null where id = ${user.id}`;
  await db`insert into public.transactions (user_id, type, category, amount, currency, direction, status, provider,
              metadata, message, created_at)
            values (${user.id}, 'virtual_account_deposit', 'deposit', 1, 'NGN', 'in', 'pending', 'wallet',
              ${db.json({ amount: 150_050, note: AWKWARD, nested: { fee: 7, rate: 1.5, list: [1, 2.25] } })},
              null, date_trunc('second', now()) - interval '1 day')`;
  await db`insert into public.virtual_accounts (user_id, status, provider, failure_reason)
            values (${user.id}, 'inactive', 'paystack', ${AWKWARD})
            on conflict (user_id) do update set status = 'inactive', failure_reason = excluded.failure_reason`;
});

describe('profile-get', () => {
  it('is the text TypeScript wrote for the same rows, in the envelope through the server', async () => {
    const expected = JSON.stringify(await profileGetAsObject(authOf(user)));
    expect((await profileGet(authOf(user))).text).toBe(expected);
    expect(await served('profile-get', user)).toBe(envelope(expected));
  });

  it('without next of kin or avatar, the nulls are the same', async () => {
    const fresh = await signUp();
    const expected = JSON.stringify(await profileGetAsObject(authOf(fresh)));
    expect(expected).toContain('"avatar":null');
    expect((await profileGet(authOf(fresh))).text).toBe(expected);
  });
});

describe('wallet-get', () => {
  it('is the same text, with the balance read as service_role and an inactive account', async () => {
    const expected = JSON.stringify(await walletGetAsObject(authOf(user)));
    expect(expected).toContain('"status":"inactive"');
    expect((await walletGet(authOf(user))).text).toBe(expected);
    expect(await served('wallet-get', user)).toBe(envelope(expected));
  });

  it('with no movement and no account: zeros and a null account', async () => {
    const fresh = await signUp();
    const expected = JSON.stringify(await walletGetAsObject(authOf(fresh)));
    expect(expected).toBe(
      '{"balance":0,"pending_deposits":0,"pending_withdrawals":0,"currency":"NGN","virtual_account":null}',
    );
    expect((await walletGet(authOf(fresh))).text).toBe(expected);
  });
});

describe('escrow-list', () => {
  it('is the same text on either side of a deal, page by page, and by status', async () => {
    for (const reader of [user, other]) {
      for (
        const q of [{ limit: 20 }, { limit: 1 }, { limit: 20, status: 'released' }, { limit: 20, status: 'deleted' }]
      ) {
        const expected = JSON.stringify(await escrowListAsObjects(authOf(reader), q));
        expect((await escrowList(authOf(reader), q)).text, JSON.stringify(q)).toBe(expected);
      }
      const all = await escrowListAsObjects(authOf(reader), { limit: 20 });
      const before = { limit: 20, before: all[0]!.created_at };
      expect((await escrowList(authOf(reader), before)).text).toBe(
        JSON.stringify(await escrowListAsObjects(authOf(reader), before)),
      );
    }
    expect(await served('escrow-list?limit=20', user)).toBe(
      envelope(JSON.stringify(await escrowListAsObjects(authOf(user), { limit: 20 }))),
    );
  });

  it("with a merchant's escrow: its merchant and fee, the same text for both parties", async () => {
    const [owner, buyer, seller] = await Promise.all([signUp({ tier: 4 }), signUp(), signUp()]);
    const token = owner.accessToken;
    expect((await post('merchant-create', { name: 'Reads Shop' }, { token })).status).toBe(201);
    const key = (await post('merchant-key-create', { name: 'server' }, { token })).body.data.key as string;
    const made = await post('merchant-escrow-create', {
      reference: 'reads-1',
      category: 'hiring',
      title: 'Reads "quoted" Ọ́lá 😀',
      amount: 1_234.56,
      buyer_phone: buyer.phone,
      seller_phone: seller.phone,
      merchant_fee: 12.34,
    }, { token: key });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    for (const reader of [buyer, seller]) {
      const expected = JSON.stringify(await escrowListAsObjects(authOf(reader), { limit: 20 }));
      expect(expected).toContain(`"merchant":{"id":"${made.body.data.merchant.id}","name":"Reads Shop","fee":12.34}`);
      expect((await escrowList(authOf(reader), { limit: 20 })).text).toBe(expected);
    }
  });
});

describe('transaction-list', () => {
  it('is the same text: descriptions from their messages, metadata in naira, the cursor', async () => {
    const queries = [
      { limit: 20 },
      { limit: 2 },
      { limit: 20, category: 'deposit' },
      { limit: 20, status: 'pending' },
      { limit: 20, category: 'withdrawal' },
    ];
    for (const q of queries) {
      const expected = JSON.stringify(await transactionListAsObjects(authOf(user), q));
      expect((await transactionList(authOf(user), q)).text, JSON.stringify(q)).toBe(expected);
    }
    const page = await transactionListAsObjects(authOf(user), { limit: 2 });
    const rest = { limit: 20, before: page.next_cursor as string };
    expect((await transactionList(authOf(user), rest)).text).toBe(
      JSON.stringify(await transactionListAsObjects(authOf(user), rest)),
    );
    const escrowId = page.data.find((t) => t.escrow_id)?.escrow_id;
    if (escrowId) {
      const byEscrow = { limit: 20, escrow_id: escrowId };
      expect((await transactionList(authOf(user), byEscrow)).text).toBe(
        JSON.stringify(await transactionListAsObjects(authOf(user), byEscrow)),
      );
    }
    const served_ = await served('transaction-list?limit=20', user);
    expect(served_).toBe(envelope(JSON.stringify(await transactionListAsObjects(authOf(user), { limit: 20 }))));
    // the inserted row's metadata: kobo under its keys in naira, the rest as stored
    expect(served_).toContain('"metadata":{"note":');
    expect(served_).toContain('"amount":1500.5');
  });

  it('an empty page has a null cursor', async () => {
    const fresh = await signUp();
    expect((await transactionList(authOf(fresh), { limit: 20 })).text).toBe('{"data":[],"next_cursor":null}');
  });
});

describe('message-feed', () => {
  it('is the same text: messages with their senders, notifications with their sentences, both ways', async () => {
    const first = await messageFeedAsObjects(authOf(user), { conversation_id: conversation, limit: 50 });
    expect(first.some((i) => i.source === 'notification')).toBe(true);
    const middle = first[Math.floor(first.length / 2)]!.created_at;
    for (
      const q of [
        { conversation_id: conversation, limit: 50 },
        { conversation_id: conversation, limit: 3 },
        { conversation_id: conversation, limit: 4, before: middle },
        { conversation_id: conversation, limit: 4, after: middle },
        { conversation_id: conversation, limit: 50, after: first[first.length - 1]!.created_at },
      ]
    ) {
      for (const reader of [user, other]) {
        const expected = JSON.stringify(await messageFeedAsObjects(authOf(reader), q));
        expect((await messageFeed(authOf(reader), q)).text, JSON.stringify(q)).toBe(expected);
      }
    }
    const text = await served(`message-feed?conversation_id=${conversation}&limit=50`, user);
    expect(text).toBe(
      envelope(JSON.stringify(await messageFeedAsObjects(authOf(user), { conversation_id: conversation, limit: 50 }))),
    );
    // the control characters of stored text stay escaped: never taken for markers
    expect(text).toContain('\\u0001\\u0002 marker');
  });

  it('a conversation the caller does not see is 404 on both paths', async () => {
    const stranger = await signUp();
    const q = { conversation_id: conversation, limit: 20 };
    await expect(messageFeed(authOf(stranger), q)).rejects.toMatchObject({ code: 'conversation_not_found' });
    await expect(messageFeedAsObjects(authOf(stranger), q)).rejects.toMatchObject({ code: 'conversation_not_found' });
  });
});

describe('whose rows', () => {
  // wallet, escrow-list and message-feed choose the caller's rows themselves (security definer):
  // what they answer is what the policies let the TypeScript path read, for strangers too
  it('a stranger reads none of the deal: an empty list, their own empty wallet, 404 on the feed', async () => {
    const stranger = await signUp();
    for (const q of [{ limit: 20 }, { limit: 20, status: 'released' }, { limit: 20, status: 'deleted' }]) {
      expect((await escrowList(authOf(stranger), q)).text).toBe('[]');
      expect(JSON.stringify(await escrowListAsObjects(authOf(stranger), q))).toBe('[]');
    }
    expect((await walletGet(authOf(stranger))).text).toBe(JSON.stringify(await walletGetAsObject(authOf(stranger))));
    await expect(messageFeed(authOf(stranger), { conversation_id: conversation, limit: 20 })).rejects.toMatchObject({
      code: 'conversation_not_found',
    });
    expect(await served('conversation-list?limit=50', stranger)).toBe(envelope('[]'));
  });

  it("conversation-list: each party's conversations, the invited counterparty's included", async () => {
    const listed = async (who: TestUser) =>
      (JSON.parse(await served('conversation-list?limit=50', who)).data as { conversation_id: string }[])
        .map((c) => c.conversation_id);
    const deal = await newDeal({ title: 'Listed for both' });
    expect(await listed(deal.initiator)).toEqual([deal.conversationId]);
    expect(await listed(deal.counterparty)).toEqual([deal.conversationId]);
    expect(await listed(user)).toContain(conversation);
  });

  it('a deleted escrow: listed only under status=deleted, its conversation gone for both parties', async () => {
    const deal = await newDeal({ title: 'To be deleted' });
    expect((await escrowOp('escrow-delete', deal.initiator, deal.escrowId)).status).toBe(200);
    for (const party of [deal.initiator, deal.counterparty]) {
      for (const q of [{ limit: 20 }, { limit: 20, status: 'deleted' }]) {
        expect((await escrowList(authOf(party), q)).text).toBe(
          JSON.stringify(await escrowListAsObjects(authOf(party), q)),
        );
      }
      expect((await escrowList(authOf(party), { limit: 20 })).text).toBe('[]');
      await expect(messageFeed(authOf(party), { conversation_id: deal.conversationId, limit: 20 })).rejects
        .toMatchObject({ code: 'conversation_not_found' });
      expect(await served('conversation-list?limit=50', party)).toBe(envelope('[]'));
    }
  });
});

describe('markers', () => {
  it('each kind is filled in order; a count that differs from the values is an error', () => {
    expect(fillSlots('[\u0001,\u0002,\u0001]', [['a', 'b'], [3]], [(v) => JSON.stringify(v), (v) => `${v}`])).toBe(
      '["a",3,"b"]',
    );
    expect(() => fillSlots('[\u0001]', [[]], [(v) => `${v}`])).toThrow(/has no value/);
    expect(() => fillSlots('[\u0001]', [['a', 'b']], [(v) => `${v}`])).toThrow(/2 values for 1 markers/);
  });
});
