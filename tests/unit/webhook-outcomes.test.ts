// webhook-payments: what an event did is a typed outcome. Its text in private.webhook_inbox.outcome
// stays what operators (and the integration suites) read, and whether SMS follow the commit is
// decided per kind, not by matching words in that text.
import { describe, expect, it } from 'vitest';
import { outcomeText, queuedSms, type WebhookOutcome } from '../../shared/money/payments/webhook.ts';

const cases: [WebhookOutcome, string, boolean][] = [
  [{ kind: 'duplicate' }, 'duplicate', false],
  [{ kind: 'ignored' }, 'ignored', false],
  [{ kind: 'ignored', reason: 'not_success' }, 'ignored:not_success', false],
  [{ kind: 'ignored', reason: 'already_active' }, 'ignored:already_active', false],
  [{ kind: 'flagged', reason: 'unknown_reference' }, 'flagged:unknown_reference', false],
  [{ kind: 'topup', result: 'succeeded' }, 'topup:succeeded', false],
  [{ kind: 'topup', result: 'already_done' }, 'topup:already_done', false],
  [
    { kind: 'topup', result: 'held_for_review', check: 'amount_mismatch' },
    'topup:held_for_review:amount_mismatch',
    false,
  ],
  [{ kind: 'topup', result: 'succeeded', check: 'verified' }, 'topup:succeeded:verified', false],
  // a draft funded by card becomes active and invites its counterparty by SMS
  [{ kind: 'escrow_charge', result: 'escrow:active' }, 'escrow_charge:escrow:active', true],
  [{ kind: 'escrow_charge', result: 'escrow:active', check: 'verified' }, 'escrow_charge:escrow:active:verified', true],
  [{ kind: 'escrow_charge', result: 'escrow:funded' }, 'escrow_charge:escrow:funded', false],
  [{ kind: 'escrow_charge', result: 'credited_to_wallet' }, 'escrow_charge:credited_to_wallet', false],
  [
    { kind: 'escrow_charge', result: 'held_for_review', check: 'currency_mismatch' },
    'escrow_charge:held_for_review:currency_mismatch',
    false,
  ],
  // a bank transfer: funds a waiting draft (an invitation SMS), tells the payer the shortfall, or (any deposit) tells the user to verify
  [{ kind: 'bank_transfer', result: 'deposit' }, 'virtual_account_deposit', true],
  [{ kind: 'bank_transfer', result: 'deposit:shortfall' }, 'virtual_account_deposit:shortfall', true],
  [{ kind: 'bank_transfer', result: 'deposit:escrow:active' }, 'virtual_account_deposit:escrow:active', true],
  [{ kind: 'bank_transfer', result: 'deposit:escrow:funded' }, 'virtual_account_deposit:escrow:funded', true],
  [{ kind: 'bank_transfer', result: 'already_done' }, 'virtual_account_already_done', false],
  [{ kind: 'transfer', event: 'transfer.success', result: 'succeeded' }, 'transfer.success:succeeded', false],
  [{ kind: 'transfer', event: 'transfer.reversed', result: 'already_done' }, 'transfer.reversed:already_done', false],
  [{ kind: 'virtual_account', status: 'active' }, 'virtual_account:active', false],
  [{ kind: 'virtual_account', status: 'inactive' }, 'virtual_account:inactive', false],
];

describe('webhook-payments', () => {
  describe('outcomes', () => {
    it.each(cases)('%o is kept as %s', (outcome, text) => {
      expect(outcomeText(outcome)).toBe(text);
    });

    it.each(cases)('%o (kept as %s) queued SMS: %s', (outcome, _text, sms) => {
      expect(queuedSms(outcome)).toBe(sms);
    });
  });
});
