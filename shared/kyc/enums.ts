// The closed lists of values the kyc area stores or answers with, written once. Each equals the
// values its database column accepts (tests/integration/enums.test.ts); adding a value is
// docs/architecture.md#how-to-add.

/** A KYC check (private.kyc_checks.check_type; docs/kyc.md#tiers-and-their-limits): what each tier needs. */
export const KYC_CHECK_TYPES = [
  'kyc_basic',
  'kyc_address',
  'nin',
  'bvn',
  'cac',
  'tin',
  'director_match',
  'bank_account',
] as const;
export type KycCheckType = (typeof KYC_CHECK_TYPES)[number];

/** Where a check stands (private.kyc_checks.status). */
export const KYC_CHECK_STATUSES = ['pending', 'passed', 'failed'] as const;
export type KycCheckStatus = (typeof KYC_CHECK_STATUSES)[number];

/** What a failure allows (private.kyc_checks.reject_type): RETRY may try again, FINAL may not. */
export const KYC_REJECT_TYPES = ['RETRY', 'FINAL'] as const;
export type KycRejectType = (typeof KYC_REJECT_TYPES)[number];
