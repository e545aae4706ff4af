// The refusals of the profile area: each code declared once (docs/errors.md lists them all).
import { refusal } from '../core/http.ts';

export const PROFILE_NOT_FOUND = refusal({
  code: 'profile_not_found',
  status: 404,
  when: "The caller's account has no profile (it was removed while the session was live)",
  then: 'Log in again; if it persists, the account is gone',
  message: () => 'Profile not found',
  example: {},
});

export const USERNAME_TAKEN = refusal({
  code: 'username_taken',
  status: 409,
  when: 'The username asked for is held by another user',
  then: 'Ask the user for another username',
  message: () => 'That username is taken',
  details: () => [{ field: 'username', message: 'is already taken' }],
  example: {},
});

export const NAME_VERIFIED = refusal<{ field: 'first_name' | 'last_name' }>({
  code: 'name_verified',
  status: 409,
  when: 'The first or last name would change after a NIN or BVN check matched it to the account',
  then: 'Names stay as the identity check matched them; a legal change of name goes through support',
  message: () => 'Your name was matched by an identity check and can no longer be changed in the app',
  details: (f) => [{ field: f.field, message: 'is the name your identity check matched' }],
  example: { field: 'last_name' },
});
