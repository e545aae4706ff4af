import { z } from 'zod';
import { ESCROW_CATEGORIES, ESCROW_STATUSES, PAYER_ROLES } from '../enums.ts';
import { nairaAmount } from '../money.ts';
import { NIGERIAN_PHONE, queryBool, queryInt, queryTimestamp, toE164 } from '../validation.ts';

const uuid = z.uuid({ message: 'must be a UUID' });
const date = z.iso.date({ message: 'must be a date (YYYY-MM-DD)' });

export const escrowCreateBody = z.strictObject({
  category: z.enum(ESCROW_CATEGORIES),
  payer_role: z.enum(PAYER_ROLES),
  title: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  counterparty_phone: z
    .string()
    .regex(NIGERIAN_PHONE, 'must match ^(\\+234[0-9]{10}|0[0-9]{10})$')
    .transform(toE164),
  amount: nairaAmount({ minKobo: 1 }),
  description: z.string().trim().max(2000, 'must be at most 2000 characters').optional(),
});

export const escrowIdQuery = z.strictObject({ escrow_id: uuid });

export const escrowListQuery = z.strictObject({
  status: z.enum(ESCROW_STATUSES).optional(),
  limit: queryInt(20, 1, 50),
  before: queryTimestamp.optional(),
});

export const escrowIdBody = z.strictObject({ escrow_id: uuid });

/** accept / decline: by escrow id or by the invite token, exactly one */
export const escrowInviteBody = z
  .strictObject({
    escrow_id: uuid.optional(),
    invite_token: z.string().min(20, 'is not a valid invite token').max(200, 'is not a valid invite token').optional(),
  })
  .refine((b) => (b.escrow_id === undefined) !== (b.invite_token === undefined), {
    path: ['escrow_id'],
    message: 'give escrow_id or invite_token (exactly one)',
  });

export const escrowFundBody = z
  .strictObject({
    escrow_id: uuid,
    method: z.enum(['wallet', 'card', 'saved_card', 'bank_transfer']),
    card_id: uuid.optional(),
    callback_url: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).max(2048).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.method === 'saved_card' && !b.card_id) ctx.addIssue({ code: 'custom', path: ['card_id'], message: 'is required when method is saved_card' });
    if (b.method !== 'saved_card' && b.card_id) ctx.addIssue({ code: 'custom', path: ['card_id'], message: 'is only accepted when method is saved_card' });
    if (b.method !== 'card' && b.callback_url) ctx.addIssue({ code: 'custom', path: ['callback_url'], message: 'is only accepted when method is card' });
  });

export const milestoneCreateBody = z.strictObject({
  escrow_id: uuid,
  title: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  amount: nairaAmount({ minKobo: 1 }),
  description: z.string().trim().max(2000, 'must be at most 2000 characters').optional(),
  due_date: date.optional(),
});

export const milestoneUpdateBody = z
  .strictObject({
    milestone_id: uuid,
    title: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional(),
    description: z.string().trim().max(2000, 'must be at most 2000 characters').nullable().optional(),
    amount: nairaAmount({ minKobo: 1 }).optional(),
    due_date: date.nullable().optional(),
    changes_note: z.string().trim().max(2000, 'must be at most 2000 characters').optional(),
  })
  .refine((b) => Object.keys(b).some((k) => k !== 'milestone_id'), { path: ['body'], message: 'must change at least one field' });

export const milestoneIdBody = z.strictObject({ milestone_id: uuid });

export const notificationListQuery = z.strictObject({
  escrow_id: uuid.optional(),
  limit: queryInt(50, 1, 100),
  before: queryTimestamp.optional(),
  unread_only: queryBool(false),
});

export const notificationReadBody = z
  .strictObject({ notification_id: uuid.optional(), escrow_id: uuid.optional() })
  .refine((b) => (b.notification_id === undefined) !== (b.escrow_id === undefined), {
    path: ['notification_id'],
    message: 'give notification_id (one) or escrow_id (all of that escrow), exactly one',
  });

export const jobsRunBody = z.strictObject({ now: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp' }).optional() });
