// Escrows do not tell an initiator whether the invited phone has an account
// (docs/escrow.md#what-the-initiator-sees-of-the-counterparty), through the real server: with a registered and an unregistered counterparty phone,
// every answer the initiator gets (escrow-create, -get, -list, -fund, -accept, -decline, -deliver,
// -cancel, the milestone endpoints, notifications, transactions, and a direct read of the table
// as the Data API would run it) is the same once ids, times and the phone are blanked out;
// counterparty_id is null until the counterparty accepts or declines, then it is theirs.
import { describe, expect, it } from 'vitest';
import { type ApiResult, expectOk, get, post } from '../support/api.ts';
import { asUserSql, expectDenied } from '../support/db.ts';
import { type Category, fundWallet } from '../support/escrows.ts';
import { newPhone, signUp, type TestUser, verifyPhone } from '../support/users.ts';
import authSignup from '../../supabase/functions/auth-signup/handler.ts';
import escrowAccept from '../../supabase/functions/escrow-accept/handler.ts';
import escrowCancel from '../../supabase/functions/escrow-cancel/handler.ts';
import escrowCreate from '../../supabase/functions/escrow-create/handler.ts';
import escrowDecline from '../../supabase/functions/escrow-decline/handler.ts';
import escrowDeliver from '../../supabase/functions/escrow-deliver/handler.ts';
import escrowFund from '../../supabase/functions/escrow-fund/handler.ts';
import escrowGetEndpoint from '../../supabase/functions/escrow-get/handler.ts';
import escrowListEndpoint from '../../supabase/functions/escrow-list/handler.ts';
import escrowRefund from '../../supabase/functions/escrow-refund/handler.ts';
import escrowRelease from '../../supabase/functions/escrow-release/handler.ts';
import milestoneApprove from '../../supabase/functions/milestone-approve/handler.ts';
import milestoneComplete from '../../supabase/functions/milestone-complete/handler.ts';
import milestoneCreate from '../../supabase/functions/milestone-create/handler.ts';
import milestoneList from '../../supabase/functions/milestone-list/handler.ts';
import milestoneRelease from '../../supabase/functions/milestone-release/handler.ts';
import milestoneUpdate from '../../supabase/functions/milestone-update/handler.ts';
import notificationList from '../../supabase/functions/notification-list/handler.ts';
import transactionList from '../../supabase/functions/transaction-list/handler.ts';

// ---- helpers -------------------------------------------------------------------------------

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIMESTAMP = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}(?::?\d{2})?)?/g;

type PayerRole = 'initiator' | 'counterparty';

const create = (u: TestUser, phone: string, payerRole: PayerRole, category: Category = 'hiring') =>
  post(escrowCreate, {
    category,
    payer_role: payerRole,
    title: 'Logo design',
    counterparty_phone: phone,
    amount: 5_000,
  }, { token: u.accessToken });

const escrowGet = (u: TestUser, id: string) =>
  get(escrowGetEndpoint, { token: u.accessToken, query: { escrow_id: id } });
const escrowList = (u: TestUser) => get(escrowListEndpoint, { token: u.accessToken });

/** An answer with every id (ours and the payment provider's), time, phone and token blanked: what is left must not depend on the phone. */
function blank(value: unknown, phone: string): unknown {
  const local = `0${phone.slice(4)}`;
  const text = JSON.stringify(value)
    .replaceAll(phone, '<phone>')
    .replaceAll(local, '<phone>')
    .replace(/"invite_token":"[^"]*"/g, '"invite_token":"<token>"')
    .replace(/"(provider_\w+_id|reference)":"[^"]*"/g, '"$1":"<provider id>"')
    .replace(UUID, '<uuid>')
    .replace(TIMESTAMP, '<time>');
  return JSON.parse(text);
}

const answer = (r: ApiResult) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: r.body });

async function signUpWithPhone(phone: string): Promise<TestUser> {
  await verifyPhone(phone);
  const password = 'a sound passphrase';
  const res = await post(authSignup, { phone, first_name: 'Late', last_name: 'Comer', password });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return {
    id: res.body.data.user.id,
    phone,
    password,
    accessToken: res.body.data.session.access_token,
    refreshToken: res.body.data.session.refresh_token,
  };
}

/**
 * Everything the initiator can see of an escrow inviting `phone`, from creation to cancellation,
 * without the counterparty doing anything: each endpoint's answer, in order.
 */
async function initiatorSees(payerRole: PayerRole, phone: string) {
  // an initiator who pays tops up and funds below: tier 1 (tier 0 moves no money), the same in both runs
  const me = await signUp({ first_name: 'Ini', tier: payerRole === 'initiator' ? 1 : 0 });
  const t = { token: me.accessToken };
  const seen: Record<string, unknown> = {};
  const created = await create(me, phone, payerRole);
  seen['escrow-create'] = answer(created);
  const id = created.body.data.escrow_id as string;
  seen['escrow-get'] = answer(await escrowGet(me, id));
  seen['escrow-list'] = answer(await escrowList(me));
  seen['escrow-list by status'] = answer(
    await get(escrowListEndpoint, { ...t, query: { status: payerRole === 'initiator' ? 'draft' : 'invite_pending' } }),
  );

  // milestones (a hiring escrow): propose, approve, complete, list
  const m = await post(milestoneCreate, { escrow_id: id, title: 'Sketches', amount: 1_000 }, t);
  seen['milestone-create'] = answer(m);
  const mid = m.body.data.id as string;
  seen['milestone-update'] = answer(
    await post(milestoneUpdate, { milestone_id: mid, amount: 1_500 }, { ...t, method: 'PATCH' }),
  );
  seen['milestone-approve'] = answer(await post(milestoneApprove, { milestone_id: mid }, t));
  seen['milestone-complete'] = answer(await post(milestoneComplete, { milestone_id: mid }, t));
  seen['milestone-release'] = answer(await post(milestoneRelease, { milestone_id: mid }, t));
  seen['milestone-list'] = answer(await get(milestoneList, { ...t, query: { escrow_id: id } }));

  // what only the counterparty may do, tried by the initiator
  seen['escrow-accept'] = answer(await post(escrowAccept, { escrow_id: id }, t));
  seen['escrow-accept by token'] = answer(
    await post(escrowAccept, { invite_token: created.body.data.invite_token }, t),
  );
  seen['escrow-decline'] = answer(await post(escrowDecline, { escrow_id: id }, t));
  seen['escrow-deliver'] = answer(await post(escrowDeliver, { escrow_id: id }, t));
  seen['escrow-refund'] = answer(await post(escrowRefund, { escrow_id: id }, t));
  seen['escrow-release'] = answer(await post(escrowRelease, { escrow_id: id }, t));

  // the initiator pays: the money goes in and the invite goes out
  if (payerRole === 'initiator') {
    await fundWallet(me, created.body.data.fee_breakdown.total_charge);
    seen['escrow-fund'] = answer(await post(escrowFund, { escrow_id: id, method: 'wallet' }, t));
  } else {
    seen['escrow-fund'] = answer(await post(escrowFund, { escrow_id: id, method: 'wallet' }, t));
  }
  seen['escrow-get funded'] = answer(await escrowGet(me, id));
  seen['notification-list'] = answer(await get(notificationList, t));
  seen['transaction-list'] = answer(await get(transactionList, t));
  seen['escrow-cancel'] = answer(await post(escrowCancel, { escrow_id: id }, t));
  seen['escrow-get cancelled'] = answer(await escrowGet(me, id));
  seen['escrow-list cancelled'] = answer(await escrowList(me));
  seen['notification-list at the end'] = answer(await get(notificationList, t));
  // the table as the Data API would read it for the initiator
  seen['public.escrows as the initiator'] = await asUserSql(me.id, (tx) =>
    tx`
    select revealed_counterparty_id, status, accepted_at, declined_at, updated_at from public.escrows where id = ${id}`);
  return { me, id, seen };
}

// ---- the same answers either way -------------------------------------------------------------

describe('a registered and an unregistered counterparty phone look the same to the initiator', () => {
  for (const payerRole of ['initiator', 'counterparty'] as const) {
    it(
      `payer_role ${payerRole}: every answer from creation to cancellation is identical but for ids, times and the phone`,
      { timeout: 60_000 },
      async () => {
        const registered = await signUp({ first_name: 'Reg' });
        const unregistered = newPhone().e164;
        const [withAccount, without] = await Promise.all([
          initiatorSees(payerRole, registered.phone),
          initiatorSees(payerRole, unregistered),
        ]);

        // nothing the initiator got names the registered counterparty
        expect(JSON.stringify(withAccount.seen)).not.toContain(registered.id);
        for (const step of Object.keys(withAccount.seen)) {
          expect(blank(withAccount.seen[step], registered.phone), step).toEqual(
            blank(without.seen[step], unregistered),
          );
        }
        // and the escrow itself says counterparty_id null
        for (const run of [withAccount, without]) {
          const got = expectOk(await escrowGet(run.me, run.id));
          expect(got.counterparty_id).toBeNull();
          expect(got.declined_at).toBeNull();
          expect(expectOk(await escrowList(run.me))[0]!.counterparty_id).toBeNull();
        }
      },
    );
  }

  it('the column itself is not readable by users; revealed_counterparty_id is null until a response', async () => {
    const [me, other] = await Promise.all([signUp(), signUp()]);
    const id = expectOk(await create(me, other.phone, 'counterparty'), 201).escrow_id;
    for (const who of [me, other]) {
      await expectDenied(
        who.id,
        (tx) => tx`select counterparty_id from public.escrows where id = ${id}`,
        'counterparty_id',
      );
      await expectDenied(who.id, (tx) => tx`select * from public.escrows where id = ${id}`, 'select *');
      await expectDenied(
        who.id,
        (tx) => tx`select id from public.escrows where counterparty_id = ${other.id}`,
        'filter on counterparty_id',
      );
    }
    const before = await asUserSql(me.id, (tx) =>
      tx<{ revealed_counterparty_id: string | null }[]>`
      select revealed_counterparty_id from public.escrows where id = ${id}`);
    expect(before).toEqual([{ revealed_counterparty_id: null }]);
    // the invitee still reads the escrow (row-level security keeps using the link)
    expect(expectOk(await escrowGet(other, id))).toMatchObject({ id, counterparty_id: other.id });
    expectOk(await post(escrowAccept, { escrow_id: id }, { token: other.accessToken }));
    const after = await asUserSql(me.id, (tx) =>
      tx<{ revealed_counterparty_id: string | null }[]>`
      select revealed_counterparty_id from public.escrows where id = ${id}`);
    expect(after).toEqual([{ revealed_counterparty_id: other.id }]);
  });
});

// ---- until the counterparty answers ----------------------------------------------------------

describe('counterparty_id appears when the counterparty accepts or declines, not before', () => {
  it('accept (counterparty pays): null before, their id after, in escrow-get, escrow-list and the accept answer', async () => {
    const [me, other] = await Promise.all([signUp(), signUp()]);
    const id = expectOk(await create(me, other.phone, 'counterparty', 'goods_products'), 201).escrow_id;
    expect(expectOk(await escrowGet(me, id)).counterparty_id).toBeNull();
    // the invitee sees their own id all along
    expect(expectOk(await escrowGet(other, id)).counterparty_id).toBe(other.id);
    const accepted = expectOk(await post(escrowAccept, { escrow_id: id }, { token: other.accessToken }));
    expect(accepted).toMatchObject({ id, status: 'active', counterparty_id: other.id });
    expect(expectOk(await escrowGet(me, id))).toMatchObject({
      status: 'active',
      counterparty_id: other.id,
      declined_at: null,
    });
    expect(expectOk(await escrowList(me))[0]).toMatchObject({ id, counterparty_id: other.id });
  });

  it('accept of a funded escrow (initiator pays): the answers the initiator gets show the counterparty from then on', async () => {
    // the initiator funds from a topped-up wallet: tier 1 (tier 0 moves no money)
    const [me, other] = await Promise.all([signUp({ tier: 1 }), signUp()]);
    const created = expectOk(await create(me, other.phone, 'initiator', 'goods_products'), 201);
    await fundWallet(me, created.fee_breakdown.total_charge);
    const funded = expectOk(
      await post(escrowFund, { escrow_id: created.escrow_id, method: 'wallet' }, { token: me.accessToken }),
    );
    expect(funded).toMatchObject({ status: 'active', counterparty_id: null });
    expectOk(await post(escrowAccept, { escrow_id: created.escrow_id }, { token: other.accessToken }));
    expect(expectOk(await escrowGet(me, created.escrow_id))).toMatchObject({
      status: 'funded',
      counterparty_id: other.id,
    });
    // later answers to the initiator carry it too
    const released = expectOk(
      await post(escrowRelease, { escrow_id: created.escrow_id }, { token: me.accessToken }),
    );
    expect(released).toMatchObject({ status: 'released', counterparty_id: other.id });
  });

  it('decline of an unfunded escrow: cancelled, declined_at set, counterparty_id filled', async () => {
    const [me, other] = await Promise.all([signUp(), signUp()]);
    const id = expectOk(await create(me, other.phone, 'initiator', 'goods_products'), 201).escrow_id;
    const declined = expectOk(await post(escrowDecline, { escrow_id: id }, { token: other.accessToken }));
    expect(declined).toMatchObject({ status: 'cancelled', counterparty_id: other.id });
    const got = expectOk(await escrowGet(me, id));
    expect(got).toMatchObject({ status: 'cancelled', counterparty_id: other.id });
    expect(Number.isNaN(Date.parse(got.declined_at!))).toBe(false);
  });

  it('decline of a funded, unaccepted escrow: refunded, counterparty_id filled', async () => {
    // the initiator funds from a topped-up wallet: tier 1 (tier 0 moves no money)
    const [me, other] = await Promise.all([signUp({ tier: 1 }), signUp()]);
    const created = expectOk(await create(me, other.phone, 'initiator', 'p2p_crypto'), 201);
    await fundWallet(me, created.fee_breakdown.total_charge);
    expectOk(await post(escrowFund, { escrow_id: created.escrow_id, method: 'wallet' }, { token: me.accessToken }));
    expectOk(await post(escrowDecline, { escrow_id: created.escrow_id }, { token: other.accessToken }));
    const got = expectOk(await escrowGet(me, created.escrow_id));
    expect(got).toMatchObject({ status: 'refunded', counterparty_id: other.id });
    expect(Number.isNaN(Date.parse(got.declined_at!))).toBe(false);
  });

  it('an escrow the initiator cancels before any answer never shows the counterparty', async () => {
    const [me, other] = await Promise.all([signUp(), signUp()]);
    const id = expectOk(await create(me, other.phone, 'counterparty', 'goods_products'), 201).escrow_id;
    expect(expectOk(await post(escrowCancel, { escrow_id: id }, { token: me.accessToken }))).toMatchObject({
      status: 'cancelled',
      counterparty_id: null,
    });
    expect(expectOk(await escrowGet(me, id))).toMatchObject({
      status: 'cancelled',
      counterparty_id: null,
      declined_at: null,
    });
  });

  it('an invitee who signs up later changes nothing the initiator sees, until they accept', async () => {
    const me = await signUp();
    const phone = newPhone().e164;
    const id = expectOk(await create(me, phone, 'counterparty', 'goods_products'), 201).escrow_id;
    const before = expectOk(await escrowGet(me, id));
    const listedBefore = expectOk(await escrowList(me));
    const late = await signUpWithPhone(phone);
    // linked: the invitee sees the invite
    expect(expectOk(await escrowGet(late, id))).toMatchObject({
      id,
      counterparty_id: late.id,
      status: 'invite_pending',
    });
    // the initiator sees exactly what they saw before, updated_at included
    expect(expectOk(await escrowGet(me, id))).toEqual(before);
    expect(expectOk(await escrowList(me))).toEqual(listedBefore);
    expectOk(await post(escrowAccept, { escrow_id: id }, { token: late.accessToken }));
    expect(expectOk(await escrowGet(me, id))).toMatchObject({ status: 'active', counterparty_id: late.id });
  });
});
