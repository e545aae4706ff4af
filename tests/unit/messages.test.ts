// shared/messages/texts.ts: one sample of every message kind renders; the SQL records only kinds this
// module knows, and builds no sentence itself (no format() with %s, none of the English texts);
// amounts read as private.naira() writes them. That the texts are the ones SQL wrote before is
// tests/integration/messages.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOTIFICATION_EVENT_TYPES } from '../../shared/notifications/enums.ts';
import { nairaEn } from '../../shared/core/money.ts';
import {
  NOTIFICATION_EVENT_TYPES_WRITTEN,
  NOTIFICATION_KIND_EVENTS,
  NOTIFICATION_KINDS,
  type NotificationParams,
  SMS_KINDS,
  type SmsParams,
  TRANSACTION_KINDS,
  type TransactionParams,
} from '../../shared/messages/catalog.ts';
import { renderNotification, renderSms, renderTransaction, UnknownMessageError } from '../../shared/messages/texts.ts';

const MIGRATIONS = new URL('../../supabase/migrations/', import.meta.url).pathname;
/** Every migration's code, its `--` comments left out (a comment may quote what a message says). */
const code = readdirSync(MIGRATIONS)
  .filter((f) => f.endsWith('.sql'))
  .map((f) => ({ file: f, sql: readFileSync(join(MIGRATIONS, f), 'utf8').replace(/--.*$/gm, '') }));

// One sample per kind (the types make a new kind add its sample here). Texts are the marker S,
// amounts and days the number N: what is left between them is the message's own words.
const S = '\u0001';
const N = 987_654_321;
const NOTIFICATIONS: { [K in keyof NotificationParams]: NotificationParams[K] } = {
  escrow_created: { title: S, amount: N },
  invite_received: { inviter: S, title: S, amount: N, category: 'goods_products' },
  invite_received_funded: { inviter: S, title: S, amount: N },
  funded_payer: { title: S, total_charge: N },
  funded_payee: { title: S, amount: N },
  funding_shortfall: { title: S, received: N, shortfall: N },
  accepted: { accepter: S, title: S },
  accepted_funded: { accepter: S, title: S },
  payment_requested: { title: S, total_charge: N },
  closed_unfunded: { title: S, how: 'declined' },
  refunded_unaccepted: { title: S, how: 'cancelled', amount: N },
  refunded: { title: S, amount: N },
  delivered_inspection: { title: S, days: N },
  delivered: { title: S },
  released_payee: { title: S, amount: N, to: 'bank' },
  released_payer: { title: S, automatic: true },
  milestones_released_payee: { title: S, amount: N },
  milestones_released_payer: { title: S },
  payout_succeeded: { amount: N },
  payout_failed: { amount: N },
  milestone_proposed: { milestone: S, amount: N, title: S },
  milestone_updated: { milestone: S, title: S },
  milestone_accepted: { milestone: S },
  milestone_completed: { milestone: S, amount: N },
  milestone_released: { milestone: S },
  review_received: { reviewer: S, title: S, rating: 4 },
  dispute_raised: { title: S, reason_code: 'item_damaged', by_payer: true },
  dispute_proposal: { title: S, outcome: 'split', payee_amount: N },
  dispute_proposal_rejected: { title: S, outcome: 'refund' },
  dispute_withdrawn: { title: S },
  dispute_deadline_soon: { title: S, auto_release: true },
  dispute_escalated: { title: S },
  dispute_resolved: { title: S, outcome: 'release', amount: N, by_admin: true },
  kyc_tier_raised: { tier: 2 },
  kyc_tier_lowered: { tier: 1 },
  verification_failed: { check_type: 'kyc_basic', can_retry: true },
  verification_needed: { tier: 0, balance: N, limit: N },
  verify_to_move_money: { tier: 1, balance: N },
  verify_to_pay_out: { amount: N, kyc_limit: 'daily', limit: N, tier: 2 },
  merchant_escrow: { merchant: S, side: 'payer', category: 'goods_products', amount: N },
};
const SMS: { [K in keyof SmsParams]: SmsParams[K] } = {
  escrow_invite: { inviter: S, category: 'hiring', amount: N },
  escrow_invite_funded: { inviter: S, category: 'p2p_crypto', amount: N },
  funding_shortfall: { received: N, category: 'auto_dealership', total_charge: N, shortfall: N },
  otp_code: { context: 'reset', code: S, minutes: N },
  account_exists: {},
  dispute_settled: { outcome: 'split', amount: N },
  kyc_tier_changed: { tier: 3, raised: true },
  verification_needed: { tier: 0, limit: N },
  verify_to_move_money: { tier: 1, balance: N },
  verify_to_pay_out: { amount: N, kyc_limit: 'daily', limit: N, tier: 2 },
  merchant_escrow: { merchant: 'Ada Phones', side: 'payee', category: 'goods_products', amount: N },
};
const TRANSACTIONS: { [K in keyof TransactionParams]: TransactionParams[K] } = {
  escrow_funding: { title: S },
  payment_request: { title: S },
  refund_unaccepted: { title: S, how: 'declined' },
  refund: { title: S },
  escrow_release: { title: S, merchant: 'Ada Phones', merchant_fee: N },
  milestone_release: { milestone: S },
  escrow_payout: { title: S, bank_name: S, account_last4: S },
  wallet_topup: {},
  wallet_topup_saved_card: {},
  virtual_account_deposit: {},
  withdrawal: { bank_name: S, account_last4: S },
  merchant_fee: { title: S, merchant: 'Ada Phones' },
  merchant_withdrawal: { merchant: 'Ada Phones', bank_name: S, account_last4: S },
};

const rendered = [
  ...Object.entries(NOTIFICATIONS).map(([kind, p]) => renderNotification({ kind, ...p } as never)),
  ...Object.entries(SMS).map(([kind, p]) => renderSms({ kind, ...p } as never)),
  ...Object.entries(TRANSACTIONS).map(([kind, p]) => renderTransaction({ kind, ...p } as never)),
];

/** The kinds the migrations record: every jsonb_build_object whose first key is 'kind'. */
function kindsInSql(): Set<string> {
  const kinds = new Set<string>();
  for (const { sql } of code) {
    for (const m of sql.matchAll(/jsonb_build_object\(\s*'kind',\s*('([a-z_]+)'|case\b([\s\S]*?)\bend\b)/g)) {
      if (m[2]) kinds.add(m[2]);
      for (const c of (m[3] ?? '').matchAll(/\b(?:then|else)\s+'([a-z_]+)'/g)) kinds.add(c[1] as string);
    }
  }
  return kinds;
}

describe('messages', () => {
  it('renders a sample of every kind, with words of its own and no "undefined" or "null"', () => {
    expect(rendered).toHaveLength(NOTIFICATION_KINDS.length + SMS_KINDS.length + TRANSACTION_KINDS.length);
    for (const text of rendered) {
      expect(text.replaceAll(S, '').replaceAll(nairaEn(N), '').trim().length).toBeGreaterThan(5);
      expect(text).not.toMatch(/undefined|null|NaN|\[object/);
    }
  });

  it('the SQL records only kinds this module renders, and every kind it writes', () => {
    const inSql = kindsInSql();
    const known = new Set<string>([...NOTIFICATION_KINDS, ...SMS_KINDS, ...TRANSACTION_KINDS]);
    expect([...inSql].filter((k) => !known.has(k))).toEqual([]);
    // one-time codes and the sign-up notice are written by shared/auth/otp.ts
    const writtenByTs = new Set(['otp_code', 'account_exists']);
    expect([...known].filter((k) => !inSql.has(k) && !writtenByTs.has(k))).toEqual([]);
  });

  it("the SQL builds no sentence: no format() with %s, none of the messages' words", () => {
    for (const { file, sql } of code) {
      for (const m of sql.matchAll(/format\(\s*'((?:[^']|'')*)'/g)) {
        expect(m[1], `${file}: format() with %s builds text; record a message instead`).not.toMatch(/%s/);
      }
    }
    const fragments = new Set(
      rendered.flatMap((t) => t.split(S).flatMap((part) => part.split(nairaEn(N))).flatMap((p) => p.split(String(N))))
        .map((f) => f.trim())
        .filter((f) => f.length >= 12),
    );
    expect(fragments.size).toBeGreaterThan(40);
    for (const { file, sql } of code) {
      for (const f of fragments) expect(sql.includes(f), `${file} says ${JSON.stringify(f)}`).toBe(false);
    }
  });

  it('every notification kind names the event types it is written with', () => {
    for (const kind of NOTIFICATION_KINDS) expect(NOTIFICATION_KIND_EVENTS[kind].length).toBeGreaterThan(0);
  });

  it('the kinds are written with every event type of shared/notifications/enums.ts and no other', () => {
    expect([...NOTIFICATION_EVENT_TYPES_WRITTEN].sort()).toEqual([...NOTIFICATION_EVENT_TYPES].sort());
  });

  it('writes naira as private.naira() does', () => {
    expect(nairaEn(0)).toBe('NGN 0.00');
    expect(nairaEn(1)).toBe('NGN 0.01');
    expect(nairaEn(50)).toBe('NGN 0.50');
    expect(nairaEn(123_450)).toBe('NGN 1,234.50');
    expect(nairaEn(1_000_000)).toBe('NGN 10,000.00');
    expect(nairaEn('125000000')).toBe('NGN 1,250,000.00');
    expect(nairaEn(10_000_000_000n)).toBe('NGN 100,000,000.00');
    expect(nairaEn(99_999_999_999_999)).toBe('NGN 999,999,999,999.99');
    expect(nairaEn(-12_345)).toBe('NGN -123.45');
  });

  it('refuses a kind it does not know, in every channel; a transaction without a message has no description', () => {
    expect(() => renderNotification({ kind: 'bulk' } as never)).toThrow(UnknownMessageError);
    expect(() => renderSms({ kind: 'toString' } as never)).toThrow(UnknownMessageError);
    expect(() => renderTransaction({} as never)).toThrow(UnknownMessageError);
    expect(renderTransaction(null)).toBe('');
  });

  it('never renders a one-time code it was not given (the outbox row does not keep it)', () => {
    expect(() => renderSms({ kind: 'otp_code', context: 'login', minutes: 10 } as never)).toThrow();
  });
});
