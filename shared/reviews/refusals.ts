// The refusals of the reviews area: each code declared once (docs/errors.md lists them all). SQL
// raises the review's with their facts (private.review_submit); these write the sentences. An
// escrow the caller is not a party to is escrow_not_found, one not yet over escrow_wrong_state
// (shared/escrow/refusals.ts).
import { refusal } from '../core/http.ts';

export const USER_NOT_FOUND = refusal({
  code: 'user_not_found',
  status: 404,
  when: 'No user with this id',
  then: 'Check the id',
  message: () => 'User not found',
  example: {},
});

export const REVIEW_NEVER_ACCEPTED = refusal({
  code: 'review_never_accepted',
  status: 409,
  when: 'The escrow ended without the counterparty ever accepting it: there was no deal to review',
  then: 'Nothing to review',
  message: () => 'cannot review an escrow the counterparty never accepted',
  example: {},
});

export const ALREADY_REVIEWED = refusal({
  code: 'already_reviewed',
  status: 409,
  when: 'The caller has reviewed this escrow already (one review per party and escrow)',
  then: 'Nothing to do: the review stands',
  message: () => 'you have already reviewed this escrow',
  example: {},
});
