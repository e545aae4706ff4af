// Raising a test user's KYC tier the way production does: each check the tier needs is recorded
// as passed by private.kyc_record, the one SQL function the providers' webhooks call (which
// re-evaluates the tier, notifies and queues the SMS). Enforcement is never switched off; suites
// whose users move more than tier 0 allows call this for those users. tests/integration/kyc*.ts
// go the whole way instead (kyc-start and identity-verify, with signed webhooks from the fakes).
import { checksUpTo } from '../../shared/kyc/tiers.ts';
import { testDb } from './db.ts';

/** Records every check up to `tier` as passed (provider 'test'); answers the tier reached. */
export async function raiseTier(userId: string, tier: number): Promise<number> {
  const sql = testDb();
  let reached = 0;
  for (const check of checksUpTo(tier)) {
    const [row] = await sql<{ result: { tier: number } }[]>`
      select private.kyc_record(${userId}, ${check}, true, '{}'::text[], null, 'test', null, now()) as result`;
    reached = row?.result.tier ?? reached;
  }
  return reached;
}
