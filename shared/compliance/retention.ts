// What the service keeps about people, how long, and why: one entry per store (a table, a group of
// tables kept together, or a log) holding personal data. This file is the one source of those
// facts:
//
//   - docs/compliance.md's retention table is generated from it (`npm run gen`);
//   - the job (shared/jobs/jobs.ts) passes the periods below to private.retention_purge,
//     private.cleanup_expired and private.webhook_purge, so the docs and the job cannot disagree;
//   - tests/integration/retention-coverage.test.ts lists every table of the public and private
//     schemas and fails for one that is neither here nor in NO_PERSONAL_DATA.
//
// Legal bases are those of the Nigeria Data Protection Act 2023: contract, legal
// obligation, legitimate interest, consent. "Legal obligation" here is the CBN's AML/CFT
// regulations and the Money Laundering (Prevention and Prohibition) Act 2022, which keep
// transaction and customer-due-diligence records for 5 years after the transaction or the end of
// the relationship.

/** What account deletion does to a store's personal fields. */
export type OnDelete = 'erased' | 'pseudonymised' | 'kept';

/** The lawful bases of the NDPA 2023 that this service relies on. */
export type LegalBasis = 'contract' | 'legal obligation' | 'legitimate interest' | 'consent';

/**
 * What the job purges and when. `kind` names the step in private.retention_purge (or the older
 * purge that does it); `after` is a PostgreSQL interval, counted from `from`.
 */
export interface Purge {
  kind: PurgeKind;
  after: string;
  from: string;
  does: string;
}

export interface RetentionEntry {
  /** The store as a reader knows it. */
  store: string;
  /** Its tables, schema-qualified; none for a log outside the database. */
  tables: readonly string[];
  /** Its fields that identify or describe a person. */
  personal: string;
  onDelete: OnDelete;
  /** What deletion does exactly. */
  deletion: string;
  /** What the job purges, when; empty when the job never purges it. */
  purges: readonly Purge[];
  /** How long it is kept when the job never purges it. */
  kept?: string;
  basis: readonly LegalBasis[];
  why: string;
}

/** The steps of the job's purges, one per kind of data. */
export const PURGE_KINDS = [
  'idempotency_keys',
  'webhook_deliveries',
  'messages',
  'counterparty_phones',
  'disputes',
  'sms_outbox',
  'otps',
  'phone_verifications',
  'events',
  'webhook_inbox',
  'kyc_webhook_inbox',
  'webhook_failures',
  'admin_audit',
  'approvals',
  'account_freezes',
  'operator_flags',
  'payment_flags',
  'notifications',
  'sessions',
  'stream_tickets',
  'operator_passes',
  'rate_limit_events',
  'kyc_records',
] as const;
export type PurgeKind = typeof PURGE_KINDS[number];

/** What the job writes in place of erased free text (a message, a dispute's reason). */
export const ERASED_TEXT = '[erased at the end of its retention period]';

/** How many rows each purge step touches at most in one run of the job. */
export const PURGE_BATCH = 500;

const FIVE_YEARS = '5 years';

export const RETENTION: readonly RetentionEntry[] = [
  {
    store: 'Accounts',
    tables: ['private.users'],
    personal: 'phone number, password hash',
    onDelete: 'pseudonymised',
    deletion:
      "the phone is replaced by `<keyed hash>:<user id>` (the hash an HMAC-SHA-256 of the phone under PHONE_HASH_KEY, the id keeping it unique when one phone's accounts are deleted twice), the password hash erased and `deleted_at` set; the row stays because the ledger and the deals refer to it",
    purges: [],
    kept: 'for good, pseudonymised',
    basis: ['contract', 'legal obligation'],
    why: 'the account runs the escrows the user asked for; the ledger must keep naming an owner for 5 years and more',
  },
  {
    store: 'Profiles',
    tables: ['public.profiles'],
    personal: 'names, username, phone number, address, marital status, bio, photo',
    onDelete: 'erased',
    deletion:
      'the names become `Deleted user` (first name `Deleted`, last name `user`), which counterparties see; username, phone, address, marital status, bio and photo erased',
    purges: [],
    kept: 'the life of the account',
    basis: ['contract'],
    why: 'shown to counterparties so they know who they deal with',
  },
  {
    store: 'Next of kin',
    tables: ['public.next_of_kin'],
    personal: "the next of kin's names, phone, address and relationship",
    onDelete: 'erased',
    deletion: 'rows deleted',
    purges: [],
    kept: 'the life of the account',
    basis: ['contract'],
    why: 'given by the user for their account; nothing else uses it',
  },
  {
    store: 'Escrows and their milestones',
    tables: ['public.escrows', 'public.milestones', 'private.merchant_escrows'],
    personal: "counterparty phone, title and description (the deal's terms), a merchant's metadata about its buyer",
    onDelete: 'kept',
    deletion:
      'the deal is kept for the other party; where the deleted user was the counterparty named by phone, `counterparty_phone` is masked for good (`+2348*******78`); their name is shown as `Deleted user`; an escrow naming the phone later names no account',
    purges: [{
      kind: 'counterparty_phones',
      after: FIVE_YEARS,
      from: 'the escrow ended (ended, cancelled or deleted)',
      does: "counterparty phone masked (`+2348*******78`), a merchant's metadata erased; the escrow row kept",
    }],
    basis: ['contract', 'legal obligation'],
    why: 'the record of a payment the service held: a transaction record under the AML/CFT rules',
  },
  {
    store: 'Messages',
    tables: ['public.messages'],
    personal: 'what the parties wrote to each other',
    onDelete: 'kept',
    deletion: "the other party's record of the deal and evidence in a dispute; the author shown as `Deleted user`",
    purges: [{
      kind: 'messages',
      after: '2 years',
      from: 'the escrow ended',
      does: `content replaced by \`${ERASED_TEXT}\`; the message's author and time kept`,
    }],
    basis: ['contract', 'legitimate interest'],
    why: 'evidence for a dispute about the deal; none can follow 2 years after it ended',
  },
  {
    store: 'Reviews',
    tables: ['public.reviews'],
    personal: "the reviewer's feedback text",
    onDelete: 'pseudonymised',
    deletion: 'feedback written by the user and feedback about the user erased; the ratings kept',
    purges: [],
    kept: 'the life of the reviewed account',
    basis: ['legitimate interest'],
    why: 'other users judge a counterparty by their ratings; the rating is not about the reviewer',
  },
  {
    store: 'Disputes',
    tables: ['public.disputes'],
    personal: "the reason a party gave, the operator's resolution note",
    onDelete: 'kept',
    deletion: 'kept as written: evidence of how money held was decided',
    purges: [{
      kind: 'disputes',
      after: FIVE_YEARS,
      from: 'the dispute was resolved or withdrawn',
      does: `reason and resolution replaced by \`${ERASED_TEXT}\`; outcome and amounts kept`,
    }],
    basis: ['legal obligation', 'legitimate interest'],
    why: 'explains a movement of money: kept as long as the transaction records',
  },
  {
    store: 'SMS outbox',
    tables: ['private.sms_outbox'],
    personal: 'phone number, the text sent',
    onDelete: 'erased',
    deletion: "rows for the user's phone deleted; SMS sent to others (an invitation naming the user) kept until purged",
    purges: [{ kind: 'sms_outbox', after: '90 days', from: 'the SMS was queued', does: 'rows deleted' }],
    basis: ['contract', 'legitimate interest'],
    why: 'proof that a code or notice was sent, for support and for the provider’s bill',
  },
  {
    store: 'Sign-in codes and phone checks',
    tables: ['private.otps', 'private.phone_verifications'],
    personal: 'phone number, a hash of the code',
    onDelete: 'erased',
    deletion: 'rows for the phone deleted',
    purges: [
      { kind: 'otps', after: '1 day', from: 'the code expired', does: 'rows deleted' },
      { kind: 'phone_verifications', after: '1 day', from: 'the check expired', does: 'rows deleted' },
    ],
    basis: ['contract'],
    why: 'needed only while the code can be used',
  },
  {
    store: 'Stored answers (Idempotency-Keys)',
    tables: ['private.idempotency_keys'],
    personal: 'the answer to a request, which may name people',
    onDelete: 'erased',
    deletion: "the user's rows deleted",
    purges: [{
      kind: 'idempotency_keys',
      after: '24 hours',
      from: 'the request',
      does: 'rows deleted (private.cleanup_expired)',
    }],
    basis: ['contract'],
    why: 'lets a client retry a request without doing it twice',
  },
  {
    store: 'Events',
    tables: ['private.events', 'private.event_recipients'],
    personal: 'who an event is for, escrow statuses, wallet balances (ids and figures, no names)',
    onDelete: 'erased',
    deletion: "the user's recipient rows deleted",
    purges: [{
      kind: 'events',
      after: '90 days',
      from: 'the event',
      does: 'events and their recipients deleted (never one the webhook feed has not read)',
    }],
    basis: ['contract'],
    why: 'feeds live streams and webhooks, which resume within minutes or days',
  },
  {
    store: 'Outbound webhook deliveries',
    tables: ['private.webhook_deliveries', 'private.webhook_endpoints'],
    personal: "the endpoint's URL, the copy of the receiver's answer",
    onDelete: 'erased',
    deletion: "the endpoints of the user and of the user's merchants deleted, with their deliveries",
    purges: [{
      kind: 'webhook_deliveries',
      after: '30 days',
      from: 'the delivery was queued',
      does: 'deliveries deleted, whatever their state (private.webhook_purge)',
    }],
    basis: ['contract'],
    why: 'lets a merchant see and retry what was sent to it',
  },
  {
    store: 'Provider webhooks received',
    tables: ['private.webhook_inbox', 'private.kyc_webhook_inbox', 'private.webhook_failures'],
    personal: "the providers' payloads: names, emails, phones, account numbers, verification results",
    onDelete: 'kept',
    deletion: 'until purged: they prove what a provider told us about a payment or a check',
    purges: [
      {
        kind: 'webhook_inbox',
        after: '180 days',
        from: 'receipt',
        does: 'rows deleted (not while a failure of the same event is kept)',
      },
      { kind: 'kyc_webhook_inbox', after: '180 days', from: 'receipt', does: 'rows deleted' },
      {
        kind: 'webhook_failures',
        after: '180 days',
        from: 'the failure',
        does:
          "rows deleted once a later delivery of the event was applied; a failure never resolved is kept, counted in the operators' webhooks_failed queue",
      },
    ],
    basis: ['legitimate interest'],
    why: 'makes a redelivery a no-op and lets an operator trace a payment; the money itself is in the ledger',
  },
  {
    store: 'Operator audit and approvals',
    tables: ['private.admin_audit', 'private.approvals'],
    personal: "ids of the operator and of the account acted on, the operator's reason",
    onDelete: 'kept',
    deletion: 'the record of who did what to an account',
    purges: [
      { kind: 'admin_audit', after: FIVE_YEARS, from: 'the action', does: 'rows deleted' },
      { kind: 'approvals', after: FIVE_YEARS, from: 'the decision (or the expiry)', does: 'rows deleted' },
    ],
    basis: ['legal obligation', 'legitimate interest'],
    why: 'accountability for actions on customers’ money and accounts',
  },
  {
    store: 'Freezes and operator flags',
    tables: ['private.account_freezes', 'private.operator_flags', 'private.payment_flags'],
    personal: 'the account frozen or flagged, the reasons, the payload of the payment flagged',
    onDelete: 'kept',
    deletion:
      "an account frozen cannot be deleted; money arriving at a deleted account's dedicated account afterwards is flagged (`deleted_account_deposit`), and so is a deactivation of it the provider failed (`dedicated_account_deactivation_failed`)",
    purges: [
      { kind: 'account_freezes', after: FIVE_YEARS, from: 'the unfreeze', does: 'rows deleted' },
      { kind: 'operator_flags', after: FIVE_YEARS, from: 'the flag was resolved', does: 'rows deleted' },
      { kind: 'payment_flags', after: FIVE_YEARS, from: 'the flag', does: 'rows deleted' },
    ],
    basis: ['legal obligation'],
    why: 'AML/CFT measures and their reasons',
  },
  {
    store: 'Identity checks (KYC)',
    tables: ['private.kyc_checks', 'private.identity_requests', 'private.identity_bindings'],
    personal: 'last 4 digits and keyed hash of the NIN or BVN, bank code, RC number, the check results',
    onDelete: 'pseudonymised',
    deletion:
      'identity requests deleted; the binding that makes an identity number unique to the account released (a new account may bind it); the check records (last 4 characters, results) kept until purged',
    purges: [{
      kind: 'kyc_records',
      after: FIVE_YEARS,
      from: 'the account was deleted',
      does: 'the check records and identity requests of the deleted account deleted (private.kyc_records_purge)',
    }],
    basis: ['legal obligation'],
    why: 'customer due diligence records under the AML/CFT rules',
  },
  {
    store: 'Ledger and transactions',
    tables: ['public.transactions', 'private.ledger_accounts', 'private.ledger_entries', 'private.ledger_transfers'],
    personal: "the owner's id, amounts, provider references, a transfer's recipient details",
    onDelete: 'kept',
    deletion: 'the books must balance',
    purges: [],
    kept: 'never purged: 5 years at least, and the ledger is append-only',
    basis: ['legal obligation'],
    why: 'transaction records under the AML/CFT rules; every balance is the sum of its entries',
  },
  {
    store: 'Bank accounts and cards',
    tables: ['public.payout_accounts', 'public.saved_cards', 'private.card_authorizations', 'public.virtual_accounts'],
    personal: 'account numbers and names, card last 4 digits and brand, the provider’s card authorization',
    onDelete: 'erased',
    deletion:
      'payout accounts, cards and their authorizations deleted; the dedicated account kept inactive with its name erased, and deactivated at the provider after the deletion commits; money still arriving goes to a suspense account flagged for operators',
    purges: [],
    kept: 'the life of the account',
    basis: ['contract'],
    why: 'pay the user in and out',
  },
  {
    store: 'Notifications',
    tables: ['public.notifications'],
    personal: 'what was told to the user, which may name a counterparty',
    onDelete: 'erased',
    deletion:
      "the user's rows deleted; in counterparties' notifications that named the user (inviter, accepter, reviewer) the name becomes `Deleted user`",
    purges: [{
      kind: 'notifications',
      after: '1 year',
      from: 'the notification (read ones only)',
      does: 'rows deleted',
    }],
    basis: ['contract'],
    why: 'the user’s inbox of what happened to their deals',
  },
  {
    store: 'Sessions',
    tables: ['private.sessions', 'private.refresh_tokens', 'private.stream_tickets', 'private.operator_passes'],
    personal: 'which account signed in, and when',
    onDelete: 'erased',
    deletion: "the user's sessions ended and deleted, with their refresh tokens, stream tickets and operator passes",
    purges: [
      {
        kind: 'sessions',
        after: '30 days',
        from: 'the session expired',
        does: 'sessions deleted with their refresh tokens, stream tickets and operator passes',
      },
      { kind: 'stream_tickets', after: '30 days', from: 'the ticket expired', does: 'rows deleted' },
      { kind: 'operator_passes', after: '30 days', from: 'the pass expired', does: 'rows deleted' },
    ],
    basis: ['contract', 'legitimate interest'],
    why: 'keeps the user signed in; refresh-token reuse is detected within a session’s life',
  },
  {
    store: 'Rate-limit counters',
    tables: ['private.rate_limit_events'],
    personal: 'keys naming a phone, an IP address or an account',
    onDelete: 'erased',
    deletion: "rows whose key names the user's phone or id deleted",
    purges: [{
      kind: 'rate_limit_events',
      after: '1 day',
      from: 'the event (the longest window)',
      does: 'rows deleted',
    }],
    basis: ['legitimate interest'],
    why: 'limits abuse of codes, invites and checks',
  },
  {
    store: 'Merchants and their keys',
    tables: ['private.merchants', 'private.merchant_api_keys'],
    personal: "the merchant's name and its owner's id",
    onDelete: 'kept',
    deletion:
      'a merchant must be closed before its owner is deleted; kept as a business record, its keys revoked (its webhook endpoints deleted: see Outbound webhook deliveries)',
    purges: [],
    kept: '5 years after the merchant stops',
    basis: ['legal obligation'],
    why: 'the escrows and money it took part in refer to it',
  },
  {
    store: 'Operators',
    tables: ['private.operators', 'private.operator_factors'],
    personal: "the operator's role, who granted it, the operator's second factor (encrypted)",
    onDelete: 'kept',
    deletion:
      'an operator cannot delete their account while they hold a role; a second factor left from a past role is deleted',
    purges: [],
    kept: 'while the role is held',
    basis: ['legitimate interest'],
    why: 'decides who may act on customers’ accounts',
  },
  {
    store: 'Server logs',
    tables: [],
    personal: 'none: the logs hold ids, never a phone, a name or an identity number',
    onDelete: 'kept',
    deletion: 'nothing to erase',
    purges: [],
    kept: "the host's log retention",
    basis: ['legitimate interest'],
    why: 'running and securing the service',
  },
];

/**
 * Tables that hold no personal data, each with the reason. A table in neither this list nor
 * RETENTION fails tests/integration/retention-coverage.test.ts.
 */
export const NO_PERSONAL_DATA: Readonly<Record<string, string>> = {
  'public.conversations': 'ids and times only; the messages are under Messages',
  'public.dispute_proposals': 'ids, an outcome and an amount: no free text',
  'private.category_rules': "configuration: each category's labels and inspection period",
  'private.fee_schedules': 'configuration: fees by category',
  'private.kyc_tiers': "configuration: each tier's limits",
  'private.reconcile_checks': 'a transaction id and when it was last checked',
  'private.webhook_feed': "one row: the webhook queue's place in the event log",
};

/** Every purge step with its period, in the order of PURGE_KINDS. */
export function purgePeriods(): Record<PurgeKind, string> {
  const periods = {} as Record<PurgeKind, string>;
  for (const entry of RETENTION) {
    for (const p of entry.purges) {
      if (periods[p.kind]) throw new Error(`retention.ts: ${p.kind} is purged twice`);
      periods[p.kind] = p.after;
    }
  }
  for (const kind of PURGE_KINDS) {
    if (!periods[kind]) throw new Error(`retention.ts: no period for ${kind}`);
  }
  return periods;
}

/** The period of one purge step. */
export const purgePeriod = (kind: PurgeKind): string => purgePeriods()[kind];

/**
 * The kinds the job's `purged` answer counts: the steps private.retention_purge runs, and
 * kyc_records (private.kyc_records_purge); the two older purges have counts of their own.
 */
export const RETENTION_PURGE_KINDS = PURGE_KINDS.filter((k): k is RetentionPurgeKind =>
  k !== 'idempotency_keys' && k !== 'webhook_deliveries'
);
export type RetentionPurgeKind = Exclude<PurgeKind, 'idempotency_keys' | 'webhook_deliveries'>;
