// Raising a test user's KYC tier the way production does: each check the tier needs is recorded
// as passed by private.kyc_record, the one SQL function the providers' webhooks call (which
// re-evaluates the tier, notifies and queues the SMS). Enforcement is never switched off; suites
// whose users move money (tier 0 moves none) call this for those users. tests/integration/kyc*.ts
// go the whole way instead (kyc-start and identity-verify, with signed webhooks from the fakes).
import { testDb } from './db.ts';
import { recordTier } from './kyc-record.ts';

/** Records every check up to `tier` as passed (provider 'test'); answers the tier reached. */
export const raiseTier = (userId: string, tier: number): Promise<number> => recordTier(testDb(), userId, tier);
