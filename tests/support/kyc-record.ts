// A user's KYC tier raised through private.kyc_record, the one SQL function the providers'
// webhooks call (it re-evaluates the tier, notifies and queues the SMS), over any postgres.js
// client and without a test framework: the suites use it through ./kyc.ts, the load runs of
// scripts/lib/stories.ts directly.
import type postgres from 'postgres';
import { checksUpTo } from './seeds.ts';

/** Records every check up to `tier` as passed (provider 'test'); answers the tier reached. */
export async function recordTier(sql: postgres.Sql, userId: string, tier: number): Promise<number> {
  let reached = 0;
  for (const check of checksUpTo(tier)) {
    const [row] = await sql<{ result: { tier: number } }[]>`
      select private.kyc_record(${userId}, ${check}, true, '{}'::text[], null, 'test', null, now()) as result`;
    reached = row?.result.tier ?? reached;
  }
  return reached;
}
