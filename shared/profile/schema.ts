import { z } from 'zod';
import { MARITAL_STATUSES } from './enums.ts';
import { text } from '../core/validation.ts';
import { e164Phone, timestamp, uuid } from '../core/schema.ts';

// ---- requests --------------------------------------------------------------------------------

const avatarUrl = z
  .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
  .max(2048, 'must be at most 2048 characters');

const phoneIsFixed = z
  .unknown()
  .refine(() => false, 'cannot be changed; the phone number is fixed at signup')
  // no value is accepted: JSON Schema's `not: {}`
  .meta({ not: {}, description: 'Cannot be changed: the phone number is fixed at sign-up (any value is refused)' });

export const profileUpdateBody = z
  .strictObject({
    first_name: text(1, 100),
    last_name: text(1, 100),
    username: z
      .string()
      .min(3, 'must be at least 3 characters')
      .max(30, 'must be at most 30 characters')
      .regex(/^[a-zA-Z0-9_]+$/, 'may contain only letters, digits and underscores'),
    address: z.string().trim().max(500, 'must be at most 500 characters'),
    marital_status: z.enum(MARITAL_STATUSES),
    bio: z.string().trim().max(300, 'must be at most 300 characters'),
    avatar_url: avatarUrl,
    storage_path: z.string().trim().min(1, 'must not be empty').max(1024, 'must be at most 1024 characters'),
    // Named so the answer says why rather than just "not accepted".
    phone_number: phoneIsFixed,
    phone: phoneIsFixed,
  })
  .partial();

export type ProfileUpdate = z.output<typeof profileUpdateBody>;

export const nokUpdateBody = z.strictObject({
  first_name: text(1, 100),
  last_name: text(1, 100),
  phone: z
    .string()
    .trim()
    .max(20, 'must be at most 20 characters')
    .regex(/^\+?[0-9][0-9 -]{5,}$/, 'must be a phone number (digits, optionally a leading + and spaces or dashes)'),
  address: text(1, 500),
  relationship: text(1, 100),
});

// ---- responses (the `data` of the success envelope) ----------------------------------------

/** The spec's Next of kin (profile-nok-update, and inside the profile). */
export const nextOfKinResponse = z.strictObject({
  id: uuid,
  first_name: z.string(),
  last_name: z.string(),
  phone: z.string(),
  address: z.string(),
  relationship: z.string(),
  created_at: timestamp,
});
export type NextOfKinResponse = z.input<typeof nextOfKinResponse>;

/** The spec's Profile; the optional parts are null until set (avatar and next_of_kin included). */
export const profileResponse = z.strictObject({
  id: uuid,
  first_name: z.string(),
  last_name: z.string(),
  username: z.string().nullable(),
  phone_number: e164Phone,
  address: z.string().nullable(),
  marital_status: z.enum(MARITAL_STATUSES).nullable(),
  bio: z.string().nullable(),
  avatar: z
    .strictObject({
      avatar_url: z.url(),
      storage_path: z.string().nullable(),
      status: z.string(),
    })
    .nullable(),
  next_of_kin: nextOfKinResponse.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type ProfileResponse = z.input<typeof profileResponse>;
