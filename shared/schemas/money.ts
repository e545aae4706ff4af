import { z } from 'zod';
import { TRANSACTION_CATEGORIES, TRANSACTION_STATUSES } from '../enums.ts';
import { nairaAmount } from '../money.ts';
import { queryInt, queryTimestamp } from '../validation.ts';

const uuid = z.uuid({ message: 'must be a UUID' });

export const walletTopupBody = z.strictObject({
  amount: nairaAmount({ minKobo: 100_00 }),
  card_id: uuid.optional(),
  callback_url: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).max(2048).optional(),
});

export const walletWithdrawBody = z.strictObject({
  amount: nairaAmount({ minKobo: 100_00 }),
  payout_account_id: uuid.optional(),
  reason: z.string().trim().max(100, 'must be at most 100 characters').optional(),
});

export const cardAddBody = z.strictObject({
  authorization_code: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  last4: z.string().regex(/^[0-9]{4}$/, 'must be exactly 4 digits'), // one problem, one detail
  brand: z.string().trim().min(1, 'must not be empty').max(50, 'must be at most 50 characters'),
  exp_month: z.string().regex(/^(0?[1-9]|1[0-2])$/, 'must be a month, 1-12'),
  exp_year: z.string().regex(/^[0-9]{2}([0-9]{2})?$/, 'must be a 2- or 4-digit year'),
  signature: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  bank: z.string().trim().max(100, 'must be at most 100 characters').optional(),
});

export const cardIdBody = z.strictObject({ card_id: uuid });

export const payoutAddBody = z.strictObject({
  bank_code: z.string().trim().regex(/^[0-9A-Za-z]{2,10}$/, 'must be the bank code (2-10 letters or digits)'),
  bank_name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  account_number: z
    .string()
    .min(10, 'must be at least 10 characters')
    .max(20, 'must be at most 20 characters')
    .regex(/^[0-9]+$/, 'must contain only digits'),
  account_name: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
});

export const payoutIdBody = z.strictObject({ payout_account_id: uuid });

export const transactionListQuery = z.strictObject({
  category: z.enum(TRANSACTION_CATEGORIES).optional(),
  escrow_id: uuid.optional(),
  status: z.enum(TRANSACTION_STATUSES).optional(),
  limit: queryInt(20, 1, 100),
  before: queryTimestamp.optional(),
});
