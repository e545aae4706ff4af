import { z } from 'zod';
import { MARITAL_STATUSES } from './enums.ts';
import { httpsUrl, nameText, text } from '../core/validation.ts';
import { minFields, withRules } from '../core/rules.ts';
import { e164Phone, timestamp, uuid } from '../core/schema.ts';

// ---- requests --------------------------------------------------------------------------------

const phoneIsFixed = z
  .unknown()
  .refine(() => false, 'cannot be changed; the phone number is fixed at signup')
  // no value is accepted: JSON Schema's `not: {}`
  .meta({ not: {}, description: 'Cannot be changed: the phone number is fixed at sign-up (any value is refused)' });

export const profileUpdateBody = withRules(
  z
    .strictObject({
      first_name: nameText(1, 100),
      last_name: nameText(1, 100),
      // ASCII letters, digits and underscores only: no bidirectional control or invisible character
      username: z
        .string()
        .min(3, 'must be at least 3 characters')
        .max(30, 'must be at most 30 characters')
        .regex(/^[a-zA-Z0-9_]+$/, 'may contain only letters, digits and underscores'),
      address: text(0, 500),
      marital_status: z.enum(MARITAL_STATUSES),
      bio: text(0, 300),
      avatar_url: httpsUrl(),
      storage_path: text(1, 1024),
      // Named so the answer says why rather than just "not accepted".
      phone_number: phoneIsFixed,
      phone: phoneIsFixed,
    })
    .partial(),
  // a PATCH that changes nothing is almost always a client's mistake
  [minFields(1, 'must contain at least one field', 'At least one field to change')],
);

export type ProfileUpdate = z.output<typeof profileUpdateBody>;

export const nokUpdateBody = z.strictObject({
  first_name: nameText(1, 100),
  last_name: nameText(1, 100),
  // the pattern refuses a trailing space (trimmed away, it could leave too few digits), so what
  // matches it as sent still matches once trimmed
  phone: z
    .string()
    .trim()
    .max(20, 'must be at most 20 characters')
    .regex(
      /^\+?[0-9][0-9 -]{4,}[0-9-]$/,
      'must be a phone number (digits, optionally a leading + and spaces or dashes)',
    )
    .meta({ description: 'At most 20 characters once leading and trailing white space is trimmed' }),
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
