// The words did not change when they moved out of SQL. Until then the transitions wrote
// every notification content, SMS body and transaction description with pg_catalog.format(...)
// and private.naira(); now they record a message ({kind, ...params}) and shared/messages/texts.ts writes
// the text. For every message kind, sample facts (hostile titles and names, amounts from 1 kobo to
// beyond what to_char can show) go through both: the OLD SQL expression, copied here from the
// migrations as they were before (commit 696a633, variables renamed to read the facts), run in the
// test database; and the NEW message the migrations now build from the same facts, rendered in
// TypeScript. Each pair must be the same string. The one-time code texts, which were TypeScript
// already, are compared with their old templates the same way. (Old format strings longer than a
// line are split into adjacent literals, which SQL joins when a newline separates them.)
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { nairaEn } from '../../shared/core/money.ts';
import { NOTIFICATION_KINDS, SMS_KINDS, TRANSACTION_KINDS } from '../../shared/messages/catalog.ts';
import { renderNotification, renderSms, renderTransaction } from '../../shared/messages/texts.ts';
import { ESCROW_CATEGORIES } from '../../shared/escrow/enums.ts';
import { KYC_CHECK_TYPES } from '../../shared/kyc/enums.ts';
import { testDb } from '../support/db.ts';

type Facts = Record<string, string | number | boolean | null>;
type Channel = 'notification' | 'sms' | 'transaction';

interface Case {
  channel: Channel;
  /** The kinds the new message expression produces for these facts. */
  kinds: string[];
  /** The old text, as SQL over the facts `p` (jsonb). */
  old: string;
  /** The message the migrations now record for the same facts, as SQL over `p`. */
  message: string;
  facts: (i: number) => Facts;
}

// ---- sample facts --------------------------------------------------------------------------

const TITLES = [
  'Logo design',
  'Toyota Camry 2015 (Lagos)',
  'Say "hello" & get 100% off',
  "Ada's 'special' order",
  'Ẹ̀kọ́ ìdánwò — ₦50k',
  'Café ☕ 🚗',
  '%s %I %L %% $1',
  'x',
  'T'.repeat(200),
  '  spaced  out  ',
  'Line\\break \\n',
];
const NAMES = [
  'Ada Obi',
  'Chukwuemeka Okafor-Eze',
  "D'Angelo O'Neil",
  'Ẹ̀mí Àjàyí',
  'Name %s with %I',
  null,
  ' ',
  'Ọlá',
];
/** Raw first names as users type them (the SMS shows what private.sms_first_name leaves of them). */
const FIRST_NAMES = [
  'Bola',
  'Adéọlá',
  'Chioma',
  'Your code 482913 http://x.example',
  '482913 is your Escrow code',
  'http://escrow-verify.example',
  'Ada.example.com/login',
  "O'Neil-Okafor!!",
  'Abcdefghijklmnopqrstuvwxyz',
  '-- Escrow Security Team',
  '',
  null,
  '   Ümit  Kaya',
  "Ngozi'",
  'Zoë’',
  'A',
];
const AMOUNTS = [
  1,
  5,
  10,
  99,
  100,
  101,
  1000,
  12_345,
  100_000,
  1_000_000,
  99_999_999,
  100_000_000,
  123_456_789,
  1_000_000_000,
  9_999_999_999,
  10_000_000_000,
  123_456_789_012,
  99_999_999_999_999,
  100_000_000_000_000,
  7,
];
const CATEGORIES = ESCROW_CATEGORIES;
const DAYS = [1, 0, 2, 7, 30];
const BANKS = ['GTBank', 'First Bank of Nigeria', 'Access Bank (Diamond)', "Bank 'quoted' %s"];
const ACCOUNTS = ['0123456789', '9876543210', '01234567890123456789', '00000000001234'];
const BALANCES = [0, null, 50_000, 1, 999_999];
const TIERS = [0, 1, 2, 3, 4];
/** A tier change: from `before` to another tier, up or down. */
const tierChange = (i: number) => {
  const before = at(TIERS, i);
  return { before, after: (before + 1 + (Math.floor(i / TIERS.length) % 4)) % TIERS.length };
};

const at = <T>(pool: readonly T[], i: number, stride = 1): T => pool[(i * stride) % pool.length] as T;
const SAMPLES = 30;

// ---- the old SQL, piece by piece -----------------------------------------------------------

const naira = (field: string) => `private.naira((p->>'${field}')::bigint)`;
/** private.sms_first_name as it was, including its fallback ('Someone'). */
const OLD_SMS_FIRST_NAME = `coalesce(
    nullif(pg_catalog.rtrim(pg_catalog.left(
      pg_catalog.substring(coalesce(p->>'first_name', '') collate pg_catalog.pg_c_utf8,
                           '^[[:space:]]*([[:alpha:]][[:alpha:]\\u0300-\\u036f''’-]*)'),
      20), '''’-'), ''),
    'Someone')`;
/** private.category_sms_word as it was. */
const OLD_CATEGORY_WORD = `case (p->>'category')::public.escrow_category
           when 'goods_products' then 'goods'
           when 'hiring' then 'hiring'
           when 'auto_dealership' then 'vehicle'
           when 'p2p_crypto' then 'crypto'
         end`;
const label = (side: 'payer' | 'payee') =>
  `(select r.${side}_label from private.category_rules r where r.category = (p->>'category')::public.escrow_category)`;
/** A message with the given kind and the facts named, as the migrations build it. */
const build = (kind: string, ...fields: string[]) =>
  `pg_catalog.jsonb_build_object('kind', '${kind}'${fields.map((f) => `, '${f}', p->'${f}'`).join('')})`;

const notification = (kind: string, old: string, facts: (i: number) => Facts, message?: string): Case => ({
  channel: 'notification',
  kinds: [kind],
  old,
  facts,
  message: message ?? build(kind, ...Object.keys(facts(0))),
});

const CASES: Case[] = [
  // escrow-create
  notification(
    'escrow_created',
    `pg_catalog.format('You created "%s" for %s.', p->>'title', ${naira('amount')})`,
    (i) => ({ title: at(TITLES, i), amount: at(AMOUNTS, i) }),
  ),
  notification(
    'invite_received',
    `pg_catalog.format('%s invited you to "%s" for %s as %s.', p->>'inviter', p->>'title', ${naira('amount')},
                       ${label('payer')})`,
    (i) => ({
      inviter: at(NAMES, i),
      title: at(TITLES, i, 3),
      amount: at(AMOUNTS, i, 7),
      category: at(CATEGORIES, i),
    }),
  ),
  {
    channel: 'sms',
    kinds: ['escrow_invite', 'escrow_invite_funded'],
    old: `case when p->>'payer_role' = 'counterparty' then
            pg_catalog.format('%s invited you to a %s escrow of %s as the %s. '
                              'Open the Escrow app with this number to review it.',
                              coalesce(${OLD_SMS_FIRST_NAME}, 'Someone'), ${OLD_CATEGORY_WORD}, ${naira('amount')},
                              ${label('payer')})
          else
            pg_catalog.format('%s invited you to a %s escrow of %s as the %s, and the money is already in escrow. '
                              'Open the Escrow app with this number to accept it.',
                              coalesce(${OLD_SMS_FIRST_NAME}, 'Someone'), ${OLD_CATEGORY_WORD}, ${naira('amount')},
                              ${label('payee')})
          end`,
    message: `pg_catalog.jsonb_build_object(
            'kind', case when p->>'payer_role' = 'counterparty' then 'escrow_invite' else 'escrow_invite_funded' end,
            'inviter', private.sms_first_name(p->>'first_name'), 'category', p->'category', 'amount', p->'amount')`,
    facts: (i) => ({
      first_name: at(FIRST_NAMES, i),
      category: at(CATEGORIES, i, 3),
      amount: at(AMOUNTS, i, 3),
      payer_role: i % 2 ? 'counterparty' : 'initiator',
    }),
  },
  // funding
  notification(
    'funded_payer',
    `pg_catalog.format('%s is locked in escrow for "%s".', ${naira('total_charge')}, p->>'title')`,
    (i) => ({ title: at(TITLES, i, 5), total_charge: at(AMOUNTS, i, 3) }),
  ),
  notification(
    'invite_received_funded',
    `pg_catalog.format('%s invited you to "%s" for %s; the money is already in escrow.', p->>'inviter', p->>'title',
                       ${naira('amount')})`,
    (i) => ({ inviter: at(NAMES, i, 3), title: at(TITLES, i), amount: at(AMOUNTS, i, 11) }),
  ),
  notification(
    'funded_payee',
    `pg_catalog.format('"%s" is funded: %s is in escrow. You can deliver now.', p->>'title', ${naira('amount')})`,
    (i) => ({ title: at(TITLES, i, 7), amount: at(AMOUNTS, i) }),
  ),
  {
    channel: 'sms',
    kinds: ['funding_shortfall'],
    old: `pg_catalog.format(
    'We received %s and put it in your Escrow wallet. Your %s escrow needs %s: send %s more to fund it.',
    ${naira('received')}, ${OLD_CATEGORY_WORD}, ${naira('total_charge')},
    private.naira((p->>'total_charge')::bigint - coalesce((p->>'balance')::bigint, 0)))`,
    message: `pg_catalog.jsonb_build_object('kind', 'funding_shortfall',
    'received', p->'received', 'category', p->'category', 'total_charge', p->'total_charge',
    'shortfall', (p->>'total_charge')::bigint - coalesce((p->>'balance')::bigint, 0))`,
    facts: (i) => ({
      received: at(AMOUNTS, i),
      category: at(CATEGORIES, i),
      total_charge: at(AMOUNTS, i, 3) + 1_000_000,
      balance: at(BALANCES, i),
    }),
  },
  notification(
    'funding_shortfall',
    `pg_catalog.format(
    'We received %s; "%s" needs %s more to be funded. The money is in your wallet.',
    ${naira('received')}, p->>'title',
    private.naira((p->>'total_charge')::bigint - coalesce((p->>'balance')::bigint, 0)))`,
    (i) => ({
      title: at(TITLES, i),
      received: at(AMOUNTS, i, 7),
      total_charge: at(AMOUNTS, i) + 500,
      balance: at(BALANCES, i),
    }),
    `pg_catalog.jsonb_build_object('kind', 'funding_shortfall',
    'title', p->'title', 'received', p->'received',
    'shortfall', (p->>'total_charge')::bigint - coalesce((p->>'balance')::bigint, 0))`,
  ),
  // lifecycle
  notification(
    'accepted',
    `pg_catalog.format('%s accepted "%s". The escrow is active.', p->>'accepter', p->>'title')`,
    (i) => ({ accepter: at(NAMES, i), title: at(TITLES, i, 3) }),
  ),
  notification(
    'payment_requested',
    `pg_catalog.format('Fund "%s": %s (the escrow amount, fee and VAT).', p->>'title', ${naira('total_charge')})`,
    (i) => ({ title: at(TITLES, i), total_charge: at(AMOUNTS, i, 13) }),
  ),
  notification(
    'accepted_funded',
    `pg_catalog.format('%s accepted "%s". The money is in escrow and the deal is on.', p->>'accepter', p->>'title')`,
    (i) => ({ accepter: at(NAMES, i, 5), title: at(TITLES, i) }),
  ),
  // escrow_close_unfunded(e, actor, p_event, p_verb) was called with ('declined', 'declined by the
  // counterparty') and ('cancelled', 'cancelled')
  notification(
    'closed_unfunded',
    `pg_catalog.format('"%s" was %s.', p->>'title',
       case p->>'event' when 'declined' then 'declined by the counterparty' when 'cancelled' then 'cancelled' end)`,
    (i) => ({ title: at(TITLES, i), event: i % 2 ? 'declined' : 'cancelled' }),
    `pg_catalog.jsonb_build_object('kind', 'closed_unfunded', 'title', p->'title', 'how', p->'event')`,
  ),
  // escrow_refund_unaccepted(e, p_verb): p_verb 'declined' or 'cancelled'
  notification(
    'refunded_unaccepted',
    `pg_catalog.format('"%s" was %s; %s went back to the payer''s wallet.', p->>'title', p->>'verb',
                       ${naira('total_charge')})`,
    (i) => ({ title: at(TITLES, i, 3), verb: i % 2 ? 'declined' : 'cancelled', total_charge: at(AMOUNTS, i) }),
    `pg_catalog.jsonb_build_object('kind', 'refunded_unaccepted', 'title', p->'title', 'how', p->'verb',
                                  'amount', p->'total_charge')`,
  ),
  notification(
    'delivered_inspection',
    `pg_catalog.format('"%s" was delivered. Inspect it: the money is released automatically after %s day(s) '
                       'unless you raise a dispute.',
                        p->>'title', (p->>'days')::integer)`,
    (i) => ({ title: at(TITLES, i), days: at(DAYS, i) }),
  ),
  notification(
    'delivered',
    `pg_catalog.format('"%s" was marked delivered. Release the money when you are satisfied.', p->>'title')`,
    (i) => ({ title: at(TITLES, i) }),
  ),
  // escrow_release: v_payout_tx null or not, p_actor null (the job) or not
  notification(
    'released_payee',
    `pg_catalog.format('%s from "%s" was released to you%s.', ${naira('payout')}, p->>'title',
                      case when not (p->>'payout_started')::boolean then ' and is in your wallet'
                           else ' and is on its way to your bank' end)`,
    (i) => ({ title: at(TITLES, i), payout: at(AMOUNTS, i, 3), payout_started: i % 2 === 0 }),
    `pg_catalog.jsonb_build_object('kind', 'released_payee', 'title', p->'title', 'amount', p->'payout',
                                  'to', case when not (p->>'payout_started')::boolean then 'wallet' else 'bank' end)`,
  ),
  notification(
    'released_payer',
    `pg_catalog.format('"%s" was released%s.', p->>'title',
       case when (p->>'by_job')::boolean then ' automatically at the end of the inspection period' else '' end)`,
    (i) => ({ title: at(TITLES, i), by_job: i % 2 === 1 }),
    `pg_catalog.jsonb_build_object('kind', 'released_payer', 'title', p->'title',
                                  'automatic', (p->>'by_job')::boolean)`,
  ),
  notification(
    'refunded',
    `pg_catalog.format('"%s" was refunded: %s went back to the payer''s wallet.', p->>'title', ${naira('amount')})`,
    (i) => ({ title: at(TITLES, i, 5), amount: at(AMOUNTS, i) }),
  ),
  {
    channel: 'notification',
    kinds: ['payout_succeeded', 'payout_failed'],
    old: `case when (p->>'succeeded')::boolean
         then pg_catalog.format('%s reached your bank account.', ${naira('amount')})
         else pg_catalog.format('The payout of %s could not be completed; the money is back in your wallet.',
                                ${naira('amount')}) end`,
    message: `pg_catalog.jsonb_build_object('kind', case when (p->>'succeeded')::boolean then 'payout_succeeded'
                                                  else 'payout_failed' end,
                                  'amount', p->'amount')`,
    facts: (i) => ({ amount: at(AMOUNTS, i), succeeded: i % 2 === 0 }),
  },
  // milestones
  notification(
    'milestone_proposed',
    `pg_catalog.format('A milestone "%s" (%s) was proposed for "%s".', p->>'milestone', ${naira('amount')},
                       p->>'title')`,
    (i) => ({ milestone: at(TITLES, i, 3), amount: at(AMOUNTS, i), title: at(TITLES, i) }),
  ),
  notification(
    'milestone_updated',
    `pg_catalog.format('Milestone "%s" of "%s" was changed. Review and approve the new terms.', p->>'milestone',
                       p->>'title')`,
    (i) => ({ milestone: at(TITLES, i), title: at(TITLES, i, 5) }),
  ),
  notification(
    'milestone_accepted',
    `pg_catalog.format('Milestone "%s" was agreed by both parties.', p->>'milestone')`,
    (i) => ({ milestone: at(TITLES, i) }),
  ),
  notification(
    'milestone_completed',
    `pg_catalog.format('Milestone "%s" was marked complete. Release %s when satisfied.', p->>'milestone',
                       ${naira('amount')})`,
    (i) => ({ milestone: at(TITLES, i), amount: at(AMOUNTS, i, 3) }),
  ),
  notification(
    'milestone_released',
    `pg_catalog.format('Milestone "%s" was released to you.', p->>'milestone')`,
    (i) => ({ milestone: at(TITLES, i, 7) }),
  ),
  notification(
    'milestones_released_payee',
    `pg_catalog.format('Every milestone of "%s" was released to you: %s in all, less fees.', p->>'title',
                       ${naira('amount')})`,
    (i) => ({ title: at(TITLES, i), amount: at(AMOUNTS, i, 7) }),
  ),
  notification(
    'milestones_released_payer',
    `pg_catalog.format('"%s" was released: every milestone is paid.', p->>'title')`,
    (i) => ({ title: at(TITLES, i, 3) }),
  ),
  // reviews: new after the move, so there is no old SQL; this is the sentence meant,
  // written as SQL, to check the rendering with the same hostile names and titles
  notification(
    'review_received',
    `pg_catalog.format('%s rated you %s out of 5 for "%s".', p->>'reviewer', p->>'rating', p->>'title')`,
    (i) => ({ reviewer: at(NAMES, i), title: at(TITLES, i, 3), rating: 1 + (i % 5) }),
  ),
  // KYC: new after the move too, so, as for reviews, the sentence meant written as SQL
  // over the facts private.kyc_record and private.kyc_balance_notice have, and the message as they
  // build it from them
  {
    channel: 'notification',
    kinds: ['kyc_tier_raised', 'kyc_tier_lowered'],
    old: `case when (p->>'after')::smallint > (p->>'before')::smallint
            then pg_catalog.format('Your account is now verified to tier %s: your limits are higher.', p->>'after')
            else pg_catalog.format('A verification of your account was withdrawn; it is now at tier %s and its '
                                   'limits are lower.', p->>'after') end`,
    message: `pg_catalog.jsonb_build_object(
            'kind', case when (p->>'after')::smallint > (p->>'before')::smallint then 'kyc_tier_raised'
                         else 'kyc_tier_lowered' end,
            'tier', (p->>'after')::smallint)`,
    facts: tierChange,
  },
  notification(
    'verification_failed',
    `pg_catalog.format('Your %s did not pass. %s',
       case p->>'check_type' when 'kyc_basic' then 'ID document and selfie check'
                             when 'kyc_address' then 'proof of address'
                             when 'nin' then 'NIN'
                             when 'bvn' then 'BVN'
                             when 'cac' then 'CAC registration'
                             when 'tin' then 'TIN'
                             when 'director_match' then 'director check'
                             when 'bank_account' then 'business bank account check' end,
       case when p->>'reject_type' = 'RETRY' then 'You can try again.'
            else 'It cannot be tried again; contact support.' end)`,
    (i) => ({ check_type: at(KYC_CHECK_TYPES, i), reject_type: i % 3 ? 'RETRY' : 'FINAL' }),
    `pg_catalog.jsonb_build_object('kind', 'verification_failed', 'check_type', p->'check_type',
                                  'can_retry', p->>'reject_type' = 'RETRY')`,
  ),
  notification(
    'verification_needed',
    `pg_catalog.format('Your wallet holds %s, above the %s tier %s allows. '
                       'The money is yours; verify your identity to raise the limit.',
                       ${naira('balance')}, ${naira('limit')}, p->>'tier')`,
    (i) => ({ tier: at(TIERS, i), balance: at(AMOUNTS, i, 3) + at(AMOUNTS, i), limit: at(AMOUNTS, i) }),
  ),
  {
    channel: 'sms',
    kinds: ['kyc_tier_changed'],
    old: `case when (p->>'after')::smallint > (p->>'before')::smallint
            then pg_catalog.format('Your Escrow account is now verified to tier %s. Your new limits are in the app.',
                                   p->>'after')
            else pg_catalog.format('Your Escrow account is now at tier %s and its limits are lower. '
                                   'Open the app for details.', p->>'after') end`,
    message: `pg_catalog.jsonb_build_object('kind', 'kyc_tier_changed', 'tier', (p->>'after')::smallint,
                                        'raised', (p->>'after')::smallint > (p->>'before')::smallint)`,
    facts: tierChange,
  },
  {
    channel: 'sms',
    kinds: ['verification_needed'],
    old: `pg_catalog.format('Your Escrow wallet is above the %s your verification level allows. '
                          'Verify your identity in the app to raise it.', ${naira('limit')})`,
    message: build('verification_needed', 'tier', 'limit'),
    facts: (i) => ({ tier: at(TIERS, i, 3), limit: at(AMOUNTS, i) }),
  },
  // transaction descriptions
  ...(
    [
      ['escrow_funding', `pg_catalog.format('Escrow funding: %s', p->>'title')`],
      ['payment_request', `pg_catalog.format('Payment request: %s', p->>'title')`],
      ['refund', `pg_catalog.format('Refund: %s', p->>'title')`],
      ['escrow_release', `pg_catalog.format('Released: %s', p->>'title')`],
    ] as const
  ).map(([kind, old]): Case => ({
    channel: 'transaction',
    kinds: [kind],
    old,
    message: build(kind, 'title'),
    facts: (i) => ({ title: at(TITLES, i) }),
  })),
  {
    channel: 'transaction',
    kinds: ['refund_unaccepted'],
    old: `pg_catalog.format('Refund: "%s" was %s', p->>'title', p->>'verb')`,
    message: `pg_catalog.jsonb_build_object('kind', 'refund_unaccepted', 'title', p->'title', 'how', p->'verb')`,
    facts: (i) => ({ title: at(TITLES, i), verb: i % 2 ? 'declined' : 'cancelled' }),
  },
  {
    channel: 'transaction',
    kinds: ['milestone_release'],
    old: `pg_catalog.format('Milestone released: %s', p->>'milestone')`,
    message: build('milestone_release', 'milestone'),
    facts: (i) => ({ milestone: at(TITLES, i, 3) }),
  },
  {
    channel: 'transaction',
    kinds: ['escrow_payout'],
    old: `pg_catalog.format('Payout of "%s" to %s %s', p->>'title', p->>'bank_name',
                            pg_catalog.right(p->>'account_number', 4))`,
    message: `pg_catalog.jsonb_build_object('kind', 'escrow_payout', 'title', p->'title', 'bank_name', p->'bank_name',
                                          'account_last4', pg_catalog.right(p->>'account_number', 4))`,
    facts: (i) => ({ title: at(TITLES, i), bank_name: at(BANKS, i), account_number: at(ACCOUNTS, i, 3) }),
  },
  {
    channel: 'transaction',
    kinds: ['wallet_topup', 'wallet_topup_saved_card'],
    old: `case when p->>'card_id' is null then 'Wallet top-up by card' else 'Wallet top-up with a saved card' end`,
    message: `pg_catalog.jsonb_build_object('kind', case when p->>'card_id' is null then 'wallet_topup'
                                                     else 'wallet_topup_saved_card' end)`,
    facts: (i) => ({ card_id: i % 2 ? null : '00000000-0000-4000-8000-000000000000' }),
  },
  {
    channel: 'transaction',
    kinds: ['virtual_account_deposit'],
    old: `'Bank transfer to your virtual account'`,
    message: `pg_catalog.jsonb_build_object('kind', 'virtual_account_deposit')`,
    facts: () => ({}),
  },
  {
    channel: 'transaction',
    kinds: ['withdrawal'],
    old: `'Withdrawal to ' || (p->>'bank_name') || ' ' || pg_catalog.right(p->>'account_number', 4)`,
    message: `pg_catalog.jsonb_build_object('kind', 'withdrawal', 'bank_name', p->'bank_name',
                                        'account_last4', pg_catalog.right(p->>'account_number', 4))`,
    facts: (i) => ({ bank_name: at(BANKS, i), account_number: at(ACCOUNTS, i) }),
  },
];

const RENDER: Record<Channel, (m: never) => string> = {
  notification: renderNotification,
  sms: renderSms,
  transaction: renderTransaction,
};

// ---- the comparisons -----------------------------------------------------------------------

describe('every message reads as the SQL wrote it before', () => {
  let compared = 0;

  it('covers every kind of every channel', () => {
    const covered = (channel: Channel) => CASES.filter((c) => c.channel === channel).flatMap((c) => c.kinds).sort();
    // The dispute messages were written in TypeScript from the start: there is no SQL
    // they must read as, and tests/unit/messages.test.ts renders each with its sample.
    const disputes = NOTIFICATION_KINDS.filter((k) => k.startsWith('dispute_'));
    // Kinds added after the move (the identity floor's notice) had no SQL text either.
    const later = ['verify_to_move_money', 'verify_to_pay_out'];
    // and merchant_escrow, in the app as in the SMS, came with merchant escrows
    expect([...covered('notification'), ...disputes, ...later, 'merchant_escrow'].sort()).toEqual(
      [...NOTIFICATION_KINDS].sort(),
    );
    // otp_code and account_exists were TypeScript already: compared below; dispute_settled as above
    // merchant_escrow came with merchant escrows, long after the move: TypeScript only
    expect([...covered('sms'), 'account_exists', 'otp_code', 'dispute_settled', 'merchant_escrow', ...later].sort())
      .toEqual(
        [...SMS_KINDS].sort(),
      );
    // the merchant's transactions came with the merchant's wallet, long after the move: TypeScript only
    expect([...covered('transaction'), 'merchant_fee', 'merchant_withdrawal'].sort()).toEqual(
      [...TRANSACTION_KINDS].sort(),
    );
  });

  for (const c of CASES) {
    it(`${c.channel} ${c.kinds.join(', ')}`, async () => {
      const facts = Array.from({ length: SAMPLES }, (_, i) => c.facts(i));
      const rows = await testDb()<{ old: string; message: { kind: string } }[]>`
        select ${testDb().unsafe(c.old)} as old, ${testDb().unsafe(c.message)} as message
          from jsonb_array_elements(${testDb().json(facts)}::jsonb) with ordinality as t(p, n)
         order by n`;
      expect(rows).toHaveLength(SAMPLES);
      const seen = new Set<string>();
      rows.forEach((row, i) => {
        expect(typeof row.old, JSON.stringify(facts[i])).toBe('string');
        seen.add(row.message.kind);
        expect(RENDER[c.channel](row.message as never), JSON.stringify(facts[i])).toBe(row.old);
        compared++;
      });
      expect([...seen].sort()).toEqual([...c.kinds].sort());
    });
  }

  it('the one-time code and the sign-up notice read as their old templates', () => {
    // shared/auth/otp.ts and shared/auth/flows.ts before the move
    const OLD: Record<'signup' | 'login' | 'reset', (code: string, minutes: number) => string> = {
      signup: (c, m) => `Your Escrow sign-up code is ${c}. It expires in ${m} minutes. Never share it.`,
      login: (c, m) => `Your Escrow login code is ${c}. It expires in ${m} minutes. Never share it.`,
      reset: (c, m) => `Your Escrow password reset code is ${c}. It expires in ${m} minutes. Never share it.`,
    };
    for (const context of ['signup', 'login', 'reset'] as const) {
      for (const [code, minutes] of [['000000', 10], ['482913', 1], ['999999', 15], ['012345', 60]] as const) {
        expect(renderSms({ kind: 'otp_code', context, code, minutes })).toBe(OLD[context](code, minutes));
        compared++;
      }
    }
    expect(renderSms({ kind: 'account_exists' })).toBe(
      'Someone asked to sign up with this number, which already has an Escrow account. ' +
        'Log in, or reset your password if you forgot it.',
    );
    compared++;
  });

  it('naira amounts read as private.naira() writes them', async () => {
    const edges = [
      0,
      1,
      9,
      10,
      99,
      100,
      101,
      999,
      1000,
      99_999,
      100_000,
      123_456,
      99_999_999,
      100_000_000,
      999_999_999_999_99,
      1_000_000_000_000_00,
      1_000_000_000_000_01,
      9_007_199_254_740_991,
      -1,
      -99,
      -100,
      -123_456_789,
      -999_999_999_999_99,
      -1_000_000_000_000_00,
    ];
    const random = Array.from({ length: 3000 }, (_, i) => {
      const digits = 1 + (i % 17);
      return randomInt(0, 10 ** Math.min(digits, 12)) * (digits > 12 ? 10 ** (digits - 12) : 1) + (i % 7);
    });
    const amounts = [...edges, ...random].map((n) => BigInt(n));
    const rows = await testDb()<{ kobo: string; text: string }[]>`
      select k::text as kobo, private.naira(k) as text from unnest(${amounts.map(String)}::bigint[]) as k`;
    expect(rows).toHaveLength(amounts.length);
    for (const row of rows) expect(nairaEn(row.kobo), row.kobo).toBe(row.text);
    compared += rows.length;
  });

  it('compared every sample', () => {
    // every case's samples, 13 code texts, and the naira amounts
    expect(compared).toBeGreaterThan(CASES.length * SAMPLES + 13);
    const kinds = NOTIFICATION_KINDS.length + SMS_KINDS.length + TRANSACTION_KINDS.length;
    console.info(`messages: ${CASES.length} cases over ${kinds} kinds, ${compared} comparisons with the old texts`);
  });
});
