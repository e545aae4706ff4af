// Written by `npm run gen` (scripts/lib/console-page.ts) from the operator endpoints: the roles
// each one admits (null: any operator) and whether it may wait for a second operator (a 202).
// The console shows an action only to an operator holding one of its roles; the API decides.
export default {
  'admin-approval-decide': { roles: null, fourEyes: false },
  'admin-approval-list': { roles: null, fourEyes: false },
  'admin-audit-list': { roles: ['admin'], fourEyes: false },
  'admin-charge-resolve': { roles: ['finance'], fourEyes: true },
  'admin-dispute-list': { roles: ['disputes'], fourEyes: false },
  'admin-dispute-resolve': { roles: ['disputes'], fourEyes: true },
  'admin-escrow-get': { roles: null, fourEyes: false },
  'admin-payout-retry': { roles: ['finance'], fourEyes: true },
  'admin-queue-list': { roles: null, fourEyes: false },
  'admin-role-grant': { roles: ['admin'], fourEyes: true },
  'admin-role-revoke': { roles: ['admin'], fourEyes: false },
  'admin-search': { roles: null, fourEyes: false },
  'admin-session-revoke': { roles: ['support'], fourEyes: false },
  'admin-sms-resend': { roles: ['support'], fourEyes: false },
  'admin-totp-reset': { roles: ['admin'], fourEyes: true },
  'admin-user-freeze': { roles: ['finance'], fourEyes: false },
  'admin-user-get': { roles: null, fourEyes: false },
  'admin-user-unfreeze': { roles: ['finance'], fourEyes: true },
};
