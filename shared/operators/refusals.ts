// The refusals of the operators area: the operator auth mode (shared/operators/auth.ts) and the
// second factor (admin-totp-enrol, admin-totp-verify). A non-operator is never refused with a code
// of its own: the operator endpoints answer them the 404 of a function that does not exist.
import { refusal } from '../core/http.ts';

export const SECOND_FACTOR_REQUIRED = refusal({
  code: 'second_factor_required',
  status: 401,
  when: 'An operator whose session has no live second-factor pass (none yet, over 12 hours old, or made in ' +
    'another session or in a sibling of a reused refresh token)',
  then: 'Pass the second factor in this session with admin-totp-verify (enrol first with admin-totp-enrol), then retry',
  message: () => 'This session has not passed the second factor; verify a code with admin-totp-verify',
  example: {},
});

export const OPERATOR_ROLE_REQUIRED = refusal<{ roles: string[] }>({
  code: 'operator_role_required',
  status: 403,
  when: 'An operator whose roles do not include one that may perform the action',
  then: 'Ask an admin for the role, or leave the action to an operator who holds it',
  message: (f) => `This action needs the ${f.roles.join(' or ')} role`,
  example: { roles: ['disputes'] },
});

export const TOTP_ALREADY_ACTIVE = refusal({
  code: 'totp_already_active',
  status: 409,
  when: 'admin-totp-enrol by an operator whose factor is active: a factor is enrolled once',
  then: 'Sign in with the factor you have (admin-totp-verify); a lost factor is reset by an admin',
  message: () => 'Your second factor is already enrolled',
  example: {},
});

export const TOTP_ENROLMENT_CLOSED = refusal({
  code: 'totp_enrolment_closed',
  status: 409,
  when: 'admin-totp-enrol more than 24 hours after the latest grant of a role and after the last factor reset',
  then: 'Ask an admin to reset your second factor, then enrol within 24 hours',
  message: () => 'Enrolment of a second factor closed 24 hours after your grant or reset',
  example: {},
});

export const TOTP_NOT_ENROLLED = refusal({
  code: 'totp_not_enrolled',
  status: 409,
  when: 'admin-totp-verify by an operator with no factor (never enrolled, or reset)',
  then: 'Enrol first with admin-totp-enrol',
  message: () => 'You have no second factor to verify; enrol first',
  example: {},
});

export const TOTP_INVALID = refusal({
  code: 'totp_invalid',
  status: 409,
  when: 'A code that matches neither the current 30-second step nor the one before or after it, or one already used',
  then: 'Enter the code your authenticator shows now; five wrong codes in a row lock the factor for 15 minutes',
  message: () => 'The code is invalid or was already used',
  details: () => [{ field: 'code', message: 'is invalid or was already used' }],
  example: {},
});

export const TOTP_LOCKED = refusal<{ wait: string }>({
  code: 'totp_locked',
  status: 429,
  when: 'Five wrong codes in a row locked the factor for 15 minutes; Retry-After says how many seconds are left',
  then: 'Wait the seconds of Retry-After, then enter a fresh code',
  message: (f) => `Too many wrong codes: try again in ${f.wait}`,
  example: { wait: '15 minutes' },
});

// The refusals of private.operator_grant / private.operator_revoke: the grant script words them
// itself today (scripts/operator.ts); the four-eyes grant endpoint answers them.
export const OPERATOR_TIER_REQUIRED = refusal<{ tier: number }>({
  code: 'operator_tier_required',
  status: 409,
  when: 'A role granted to an account below KYC tier 3: every operator is verified',
  then: 'The account must reach KYC tier 3 first (kyc-upgrade), then grant again',
  message: (f) => `The account is at KYC tier ${f.tier}; an operator must be at tier 3 or more`,
  example: { tier: 2 },
});

export const OPERATOR_IDENTITY_UNBOUND = refusal<{ missing: string[] }>({
  code: 'operator_identity_unbound',
  status: 409,
  when: 'A role granted to an account without its NIN and BVN bound to it: two operators are two people',
  then: 'The account must verify the missing identity number, then grant again',
  message: (f) => `The account has no ${f.missing.join(' and ').toUpperCase()} bound to it; an operator needs both`,
  example: { missing: ['bvn'] },
});

export const OPERATOR_ARGUMENT_INVALID = refusal<{ field: string }>({
  code: 'operator_argument_invalid',
  status: 422,
  when: 'private.operator_grant or private.operator_revoke called with a malformed phone, role or name of who ran it',
  then: 'Pass an E.164 Nigerian phone, one of support, finance, disputes, admin, and 1-200 characters for who',
  message: (f) => `The ${f.field} is malformed`,
  example: { field: 'role' },
});

export const OPERATOR_NOT_FOUND = refusal({
  code: 'operator_not_found',
  status: 404,
  when: 'An operator action recorded for a user who no longer holds the role (revoked while the request ran), or a ' +
    'factor reset of a user who holds no operator role',
  then: 'Nothing: the action did not happen; check the user id, or the caller is no longer an operator',
  message: () => 'No such operator',
  example: {},
});

// ---- granting and revoking roles (admin-role-grant, admin-role-revoke) ------------------------

export const OPERATOR_ROLE_HELD = refusal<{ role: string }>({
  code: 'operator_role_held',
  status: 409,
  when: 'admin-role-grant of a role the user holds already (asked for, or granted since it was asked for)',
  then: 'Nothing to grant: the user has the role',
  message: (f) => `The user holds the ${f.role} role already`,
  example: { role: 'finance' },
});

export const ROLE_GRANT_PENDING = refusal<{ role: string; approval_id: string }>({
  code: 'role_grant_pending',
  status: 409,
  when: 'admin-role-grant while a grant of another role to the same user waits for a second admin: one at a time',
  then: 'Have the pending one decided (admin-approval-decide) or let it expire, then ask for this one',
  message: (f) => `A grant of the ${f.role} role to this user is waiting for approval ${f.approval_id}`,
  example: { role: 'finance', approval_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' },
});

export const OPERATOR_ROLE_NOT_HELD = refusal<{ role: string }>({
  code: 'operator_role_not_held',
  status: 409,
  when: 'admin-role-revoke of a role the user does not hold (never granted, or revoked already)',
  then: 'Nothing to revoke',
  message: (f) => `The user does not hold the ${f.role} role`,
  example: { role: 'finance' },
});

export const LAST_ADMIN = refusal({
  code: 'last_admin',
  status: 409,
  when: "admin-role-revoke of the only admin's admin role: the service is never left without one",
  then: 'Grant the admin role to another operator first (admin-role-grant, approved by this admin), then revoke',
  message: () => 'This is the only admin; grant the role to someone else before revoking it',
  example: {},
});

// ---- four eyes (admin-approval-decide and the actions that wait for a second operator) ----------

export const APPROVAL_NOT_FOUND = refusal({
  code: 'approval_not_found',
  status: 404,
  when: 'No approval has this id',
  then: 'Check the id (admin-approval-list shows the pending ones)',
  message: () => 'No approval has this id',
  details: () => [{ field: 'approval_id', message: 'no approval has this id' }],
  example: {},
});

export const APPROVAL_NOT_PENDING = refusal<{ status: string }>({
  code: 'approval_not_pending',
  status: 409,
  when: 'An approval already approved or rejected (by another operator, or by this one a moment ago)',
  then: 'Nothing to do: admin-approval-list shows who decided it and when',
  message: (f) => `This approval was ${f.status} already`,
  example: { status: 'approved' },
});

export const APPROVAL_EXPIRED = refusal<{ expired_at: string }>({
  code: 'approval_expired',
  status: 409,
  when: 'An approval still pending 24 hours after it was asked for: it can no longer be decided',
  then: 'The first operator asks again, if the action is still wanted',
  message: (f) => `This approval expired at ${f.expired_at}; the action must be asked for again`,
  example: { expired_at: '2026-11-28T09:00:00.000Z' },
});

export const APPROVAL_OWN_ACTION = refusal({
  code: 'approval_own_action',
  status: 409,
  when: 'The operator who asked for the action decides its approval: four eyes are two people',
  then: 'Another operator with a role that may perform the action must decide it',
  message: () => 'You cannot decide an approval of your own action; another operator must',
  example: {},
});

export const APPROVAL_TENURE_REQUIRED = refusal<{ roles: string[]; eligible_at: string }>({
  code: 'approval_tenure_required',
  status: 403,
  when: 'The deciding operator has held a role that may perform the action for less than 24 hours',
  then: 'Leave it to an operator who has held the role for 24 hours, or decide it after eligible_at',
  message: (f) => `Approving needs the ${f.roles.join(' or ')} role held for 24 hours; you may from ${f.eligible_at}`,
  example: { roles: ['finance'], eligible_at: '2026-11-28T09:00:00.000Z' },
});

// ---- the money actions of finance operators (admin-charge-resolve, admin-payout-retry) -------------

export const CHARGE_NOT_FOUND = refusal<{ transaction_id: string }>({
  code: 'charge_not_found',
  status: 404,
  when: 'admin-charge-resolve for a transaction that is not a card charge (a top-up or an escrow charge)',
  then: 'Check transaction_id: it is the charge reference of a top-up or an escrow funding',
  message: (f) => `No top-up or escrow charge ${f.transaction_id}`,
  details: () => [{ field: 'transaction_id', message: 'is not a top-up or an escrow charge' }],
  example: { transaction_id: '6f1c2b1e-8a4d-4c55-9a3e-2f6d1b7c9e10' },
});

export const CHARGE_NOT_HELD = refusal<{ transaction_id: string; status: string }>({
  code: 'charge_not_held',
  status: 409,
  when: 'admin-charge-resolve for a charge that is not held for review: settled already (by the provider, ' +
    'another operator or an approval), or still pending without a review',
  then: 'Nothing to resolve: read the transaction; a pending charge without a review is settled by the provider',
  message: (f) => `The charge is ${f.status} and not held for review`,
  example: { transaction_id: '6f1c2b1e-8a4d-4c55-9a3e-2f6d1b7c9e10', status: 'succeeded' },
});

export const CHARGE_NOT_SETTLED = refusal<{ provider_status: string | null }>({
  code: 'charge_not_settled',
  status: 409,
  when: "admin-charge-resolve when the provider's verify does not settle the charge: still pending, unknown to " +
    'the provider, a success in another currency, or (for an approval) a verified outcome other than the one ' +
    'approved',
  then: 'Nothing was credited or failed: ask again once the provider reports a success, a failure or an abandonment',
  message: (f) => `The provider does not settle this charge (it answers ${f.provider_status ?? 'nothing'})`,
  example: { provider_status: 'pending' },
});

export const PAYOUT_NOT_FOUND = refusal<{ transaction_id: string }>({
  code: 'payout_not_found',
  status: 404,
  when: 'admin-payout-retry for a transaction that is not a payout (a withdrawal or an escrow payout)',
  then: 'Check transaction_id: it is the transfer reference of a withdrawal or an escrow payout',
  message: (f) => `No withdrawal or escrow payout ${f.transaction_id}`,
  details: () => [{ field: 'transaction_id', message: 'is not a withdrawal or an escrow payout' }],
  example: { transaction_id: '6f1c2b1e-8a4d-4c55-9a3e-2f6d1b7c9e10' },
});

export const PAYOUT_NOT_FAILED = refusal<{ transaction_id: string; status: string; provider_status: string | null }>({
  code: 'payout_not_failed',
  status: 409,
  when: 'admin-payout-retry for a payout that is not failed here, or whose old transfer the provider reports as ' +
    'successful or still pending: only a confirmed failure is sent again',
  then: 'Do not retry: the money may have been paid; wait for the provider to settle the old transfer',
  message: (f) =>
    f.provider_status
      ? `The provider reports the old transfer as ${f.provider_status}; it is not retried`
      : `The payout is ${f.status}; only a failed payout is retried`,
  example: { transaction_id: '6f1c2b1e-8a4d-4c55-9a3e-2f6d1b7c9e10', status: 'failed', provider_status: 'success' },
});

export const PAYOUT_ALREADY_RETRIED = refusal<{ transaction_id: string; retry_transaction_id: string }>({
  code: 'payout_already_retried',
  status: 409,
  when: 'admin-payout-retry for a payout retried already: each failed payout is sent again once',
  then: 'Follow the retry (retry_transaction_id); if it failed too, retry that one',
  message: (f) => `This payout was retried already as ${f.retry_transaction_id}`,
  example: {
    transaction_id: '6f1c2b1e-8a4d-4c55-9a3e-2f6d1b7c9e10',
    retry_transaction_id: '0b8e7d6c-5a4f-4e3d-8c2b-1a0f9e8d7c6b',
  },
});

export const PAYOUT_RETRY_UNSUPPORTED = refusal<{ transaction_id: string; kind: string }>({
  code: 'payout_retry_unsupported',
  status: 409,
  when: "admin-payout-retry for a merchant's withdrawal: its money went back to the merchant wallet, which the " +
    'merchant withdraws from again with merchant-withdraw',
  then: 'Ask the merchant to withdraw again',
  message: () => "A merchant's withdrawal is not retried by an operator; the merchant withdraws again",
  example: { transaction_id: '6f1c2b1e-8a4d-4c55-9a3e-2f6d1b7c9e10', kind: 'merchant_withdrawal' },
});

// ---- account actions (admin-user-unfreeze, admin-sms-resend) ----------------------------------

export const ACCOUNT_NOT_FROZEN = refusal({
  code: 'account_not_frozen',
  status: 409,
  when: 'An unfreeze of an account that is not frozen: never frozen, or unfrozen since the unfreeze was asked for',
  then: 'Nothing to undo: the account moves money already',
  message: () => 'The account is not frozen',
  details: () => [{ field: 'user_id', message: 'the account is not frozen' }],
  example: {},
});

export const SMS_NOT_FOUND = refusal({
  code: 'sms_not_found',
  status: 404,
  when: 'No message of the SMS outbox has this id',
  then: "Check the id (a user's picture lists their messages)",
  message: () => 'No SMS has this id',
  details: () => [{ field: 'sms_id', message: 'no SMS has this id' }],
  example: {},
});

export const SMS_ONE_TIME_CODE = refusal<{ kind: string }>({
  code: 'sms_one_time_code',
  status: 409,
  when: 'A resend of a one-time code or of the notice sign-up sends instead of one: codes are never resent',
  then: 'The user asks for a new code (auth-send-otp), which is sent to their own phone',
  message: () => 'One-time codes are not resent; the user asks for a new one',
  example: { kind: 'otp_code' },
});

export const SMS_WITHHELD = refusal<{ withheld: string }>({
  code: 'sms_withheld',
  status: 409,
  when: 'A resend of a message the service withheld on purpose (a phone with no account, a daily cap of invites)',
  then: 'Nothing: the rule that withheld it applies to a resend as well',
  message: (f) => `This message was withheld (${f.withheld}) and is not sent`,
  example: { withheld: 'invite_daily_cap' },
});

export const SMS_TOO_OLD = refusal<{ hours: number }>({
  code: 'sms_too_old',
  status: 409,
  when: 'A resend of a message queued more than 24 hours ago: what it says is likely out of date',
  then: 'Tell the user what they need to know another way (their notifications hold the same news)',
  message: (f) => `Only messages of the last ${f.hours} hours are resent`,
  example: { hours: 24 },
});

export const SMS_RESEND_LIMIT = refusal<{ resends: number }>({
  code: 'sms_resend_limit',
  status: 409,
  when: 'A fourth resend of one message (each resend costs an SMS: three are enough to rule out a lost one)',
  then: "Check the user's phone number and their network instead",
  message: (f) => `This message was resent ${f.resends} times already; it is not resent again`,
  example: { resends: 3 },
});
