// The money actions of finance operators (docs/operators.md#resolving-a-held-charge,
// docs/operators.md#retrying-a-failed-payout): both ask the payments provider first, before any
// transaction, and act only on what it confirms.
//
// - admin-charge-resolve: a charge held for review (metadata.review) is credited at the amount the
//   provider's verify confirms (never the amount expected), or failed on a verified failure or
//   abandonment; anything else is refused. Four eyes above FOUR_EYES_MIN_AMOUNT of the verified
//   amount.
// - admin-payout-retry: a failed payout is sent again, as a new withdrawal from the wallet under
//   the withdrawal's rules, only when the provider confirms the old transfer failed (or has no
//   transfer by its reference: nothing was sent). Four eyes above FOUR_EYES_MIN_AMOUNT of the payout.
//
// The SQL (private.charge_resolve, private.payout_retry) locks the row it acts on and re-checks its
// state, so two operators, or two approvals, racing act once.
import { afterCommit } from '../core/background.ts';
import { asService, type Tx } from '../core/db.ts';
import type { Reply } from '../core/endpoint.ts';
import { toNaira } from '../core/money.ts';
import { PROVIDER_UNAVAILABLE, providerUnavailable } from '../core/refusals.ts';
import { ACCOUNT_FROZEN } from '../freezes/refusals.ts';
import { KYC_LIMIT_EXCEEDED, KYC_TIER_REQUIRED } from '../kyc/refusals.ts';
import { payments, ProviderError } from '../money/payments/index.ts';
import type { ChargeVerification } from '../money/payments/provider.ts';
import { type PayoutAccountForTransfer, TRANSFER_ACCOUNT_COLUMNS } from '../money/payments/recipient.ts';
import { sendPayout } from '../money/payouts.ts';
import { startRefundsOf } from '../money/refunds.ts';
import { INSUFFICIENT_FUNDS, PAYOUT_ACCOUNT_NOT_FOUND } from '../money/refusals.ts';
import { aboveFourEyes, type FourEyesAction, performNow, requestApproval } from './approvals.ts';
import { recordAudit } from './audit.ts';
import type { OperatorCaller } from './auth.ts';
import {
  CHARGE_NOT_FOUND,
  CHARGE_NOT_HELD,
  CHARGE_NOT_SETTLED,
  PAYOUT_ALREADY_RETRIED,
  PAYOUT_NOT_FAILED,
  PAYOUT_NOT_FOUND,
  PAYOUT_RETRY_UNSUPPORTED,
} from './refusals.ts';
import type { AdminChargeResolveResponse, AdminPayoutRetryResponse, ApprovalResponse } from './schema.ts';

const CHARGE_TYPES = ['wallet_topup', 'escrow_funding'];
/** The currency every charge of ours is made in: a success in another one is not credited. */
const CHARGE_CURRENCY = 'NGN';

// ---- admin-charge-resolve ---------------------------------------------------------------------

interface ChargeParams {
  transaction_id: string;
  /** Set in an approval: the verified amount the second operator approves (kobo); the same is required then. */
  verified_kobo?: number;
}

/** The provider's verified answer, as the resolution acts on it. */
type VerifiedCharge =
  | { status: 'success'; amountKobo: number; chargeId: string; verification: ChargeVerification }
  | { status: 'failed' | 'abandoned'; amountKobo: null; chargeId: string; verification: ChargeVerification };

type ChargeOutcome = AdminChargeResolveResponse['outcome'];

/** The charge held for review, or its refusal (404 not a charge, 409 not held). */
async function heldCharge(id: string): Promise<void> {
  const [row] = await asService((tx) =>
    tx<{ type: string; status: string; held: boolean }[]>`
    select type, status::text as status, metadata ? 'review' as held from public.transactions where id = ${id}`
  );
  if (!row || !CHARGE_TYPES.includes(row.type)) throw CHARGE_NOT_FOUND.error({ transaction_id: id });
  if (row.status !== 'pending' || !row.held) throw CHARGE_NOT_HELD.error({ transaction_id: id, status: row.status });
}

/** The provider's verify of the charge: only a success in naira, a failure or an abandonment settles it. */
async function verifiedCharge(params: ChargeParams): Promise<VerifiedCharge> {
  await heldCharge(params.transaction_id);
  let v: ChargeVerification | null;
  try {
    v = await payments().verifyCharge(params.transaction_id);
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    throw providerUnavailable('The payment provider is unavailable; nothing was resolved, try again shortly');
  }
  const approved = params.verified_kobo;
  if (
    v?.status === 'success' && v.currency === CHARGE_CURRENCY && Number.isSafeInteger(v.amountKobo) &&
    v.amountKobo > 0 && (approved === undefined || approved === v.amountKobo)
  ) {
    return { status: 'success', amountKobo: v.amountKobo, chargeId: v.chargeId, verification: v };
  }
  if ((v?.status === 'failed' || v?.status === 'abandoned') && approved === undefined) {
    return { status: v.status, amountKobo: null, chargeId: v.chargeId, verification: v };
  }
  throw CHARGE_NOT_SETTLED.error({ provider_status: v?.status ?? null });
}

export const chargeResolve: FourEyesAction<ChargeParams, AdminChargeResolveResponse, VerifiedCharge> = {
  action: 'charge.resolve',
  endpoint: 'admin-charge-resolve',
  roles: ['finance'],
  targetType: 'transaction',
  targetOf: (p) => p.transaction_id,
  refusals: [CHARGE_NOT_FOUND, CHARGE_NOT_HELD, CHARGE_NOT_SETTLED, PROVIDER_UNAVAILABLE],
  prepare: verifiedCharge,
  async perform(tx: Tx, operator: OperatorCaller, params, reason, v, approvalId) {
    const id = params.transaction_id;
    const payload = {
      resolved_by_operator: true,
      status: v.verification.status,
      amount: v.verification.amountKobo,
      currency: v.verification.currency,
      charge_id: v.chargeId,
    };
    const [row] = await tx<{ outcome: ChargeOutcome }[]>`
      select private.charge_resolve(${id}, ${v.status}, ${v.amountKobo}, ${v.chargeId}, ${
      tx.json(payload as never)
    }) as outcome`;
    const [after] = await tx<{ expected: string; type: string }[]>`
      select metadata -> 'resolution' ->> 'expected_amount' as expected, type from public.transactions where id = ${id}`;
    const outcome = row!.outcome;
    await recordAudit(tx, operator, {
      action: 'charge.resolve',
      roles: ['finance'],
      targetType: 'transaction',
      targetId: id,
      reason,
      facts: {
        type: after!.type,
        provider_status: v.status,
        verified_amount: v.amountKobo,
        expected_amount: Number(after!.expected),
        outcome,
        ...(approvalId ? { approval_id: approvalId } : {}),
      },
    });
    return {
      transaction_id: id,
      provider_status: v.status,
      verified_amount: v.amountKobo === null ? null : toNaira(v.amountKobo),
      expected_amount: toNaira(after!.expected),
      outcome,
    };
  },
  async after(result) {
    // a merchant escrow's charge that cannot fund it goes back through the provider
    if (result.outcome === 'refund_due') {
      await afterCommit('escrow.refund', () => startRefundsOf({ chargeReference: result.transaction_id }));
    }
  },
};

/** admin-charge-resolve: verify, then credit or fail now, or wait for a second operator (202). */
export async function adminChargeResolve(
  op: OperatorCaller,
  body: { transaction_id: string; reason: string },
): Promise<AdminChargeResolveResponse | Reply<{ approval: ApprovalResponse }>> {
  const params: ChargeParams = { transaction_id: body.transaction_id };
  const verified = await verifiedCharge(params);
  if (verified.status === 'success' && aboveFourEyes(verified.amountKobo)) {
    return await requestApproval(
      chargeResolve,
      op,
      { ...params, verified_kobo: verified.amountKobo },
      body.reason,
      verified.amountKobo,
    );
  }
  return await performNow(chargeResolve, op, params, body.reason, verified);
}

// ---- admin-payout-retry -----------------------------------------------------------------------

interface PayoutParams {
  transaction_id: string;
}

interface ConfirmedFailure {
  /** What the provider said of the old transfer: failed, reversed, or null (no transfer by that reference). */
  oldStatus: string | null;
  amountKobo: number;
}

/** The failed payout, and the provider's confirmation that its transfer failed; else the refusal. */
async function confirmedFailure(params: PayoutParams): Promise<ConfirmedFailure> {
  const id = params.transaction_id;
  const [row] = await asService((tx) =>
    tx<{ type: string; status: string; amount: string; retried_by: string | null; merchant: boolean }[]>`
    select type, status::text as status, amount::text as amount, metadata ->> 'retried_by' as retried_by,
           merchant_id is not null as merchant
      from public.transactions where id = ${id}`
  );
  if (!row || (row.type !== 'withdrawal' && row.type !== 'escrow_payout')) {
    throw PAYOUT_NOT_FOUND.error({ transaction_id: id });
  }
  if (row.retried_by) throw PAYOUT_ALREADY_RETRIED.error({ transaction_id: id, retry_transaction_id: row.retried_by });
  if (row.status !== 'failed') {
    throw PAYOUT_NOT_FAILED.error({ transaction_id: id, status: row.status, provider_status: null });
  }
  if (row.merchant) throw PAYOUT_RETRY_UNSUPPORTED.error({ transaction_id: id, kind: 'merchant_withdrawal' });
  let v: { status: string } | null;
  try {
    v = await payments().verifyTransfer(id);
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    throw providerUnavailable('The payment provider is unavailable; nothing was sent, try again shortly');
  }
  // no transfer by that reference: nothing was ever sent under it (it failed before /transfer)
  if (v !== null && v.status !== 'failed' && v.status !== 'reversed') {
    throw PAYOUT_NOT_FAILED.error({ transaction_id: id, status: row.status, provider_status: v.status });
  }
  return { oldStatus: v?.status ?? null, amountKobo: Number(row.amount) };
}

interface Retried extends AdminPayoutRetryResponse {
  amountKobo: number;
  payoutAccountId: string;
}

export const payoutRetry: FourEyesAction<PayoutParams, Retried, ConfirmedFailure> = {
  action: 'payout.retry',
  endpoint: 'admin-payout-retry',
  roles: ['finance'],
  targetType: 'transaction',
  targetOf: (p) => p.transaction_id,
  refusals: [
    PAYOUT_NOT_FOUND,
    PAYOUT_NOT_FAILED,
    PAYOUT_ALREADY_RETRIED,
    PAYOUT_RETRY_UNSUPPORTED,
    ACCOUNT_FROZEN,
    KYC_TIER_REQUIRED,
    KYC_LIMIT_EXCEEDED,
    PAYOUT_ACCOUNT_NOT_FOUND,
    INSUFFICIENT_FUNDS,
    PROVIDER_UNAVAILABLE,
  ],
  prepare: confirmedFailure,
  async perform(tx: Tx, operator: OperatorCaller, params, reason, confirmed, approvalId) {
    const old = params.transaction_id;
    const [row] = await tx<{ id: string }[]>`select private.payout_retry(${old}, ${payments().name})::text as id`;
    const id = row!.id;
    const [made] = await tx<{ amount: string; account: string; user_id: string }[]>`
      select amount::text as amount, metadata ->> 'payout_account_id' as account, user_id
        from public.transactions where id = ${id}`;
    await recordAudit(tx, operator, {
      action: 'payout.retry',
      roles: ['finance'],
      targetType: 'transaction',
      targetId: old,
      reason,
      facts: {
        user_id: made!.user_id,
        retry_transaction_id: id,
        amount: Number(made!.amount),
        old_transfer_status: confirmed.oldStatus,
        ...(approvalId ? { approval_id: approvalId } : {}),
      },
    });
    return {
      transaction_id: id,
      retry_of: old,
      amount: toNaira(made!.amount),
      status: 'pending',
      old_transfer_status: confirmed.oldStatus,
      amountKobo: Number(made!.amount),
      payoutAccountId: made!.account,
    };
  },
  async after(r) {
    await afterCommit('payout.retry', async () => {
      const [account] = await asService((tx) =>
        tx<PayoutAccountForTransfer[]>`
        select ${tx(TRANSFER_ACCOUNT_COLUMNS)} from public.payout_accounts where id = ${r.payoutAccountId}`
      );
      await sendPayout({
        kind: 'withdrawal',
        txId: r.transaction_id,
        account,
        amountKobo: r.amountKobo,
        reason: 'Payout retry',
      });
    });
  },
};

/** admin-payout-retry: the provider's confirmation, then the new withdrawal now, or a second operator (202). */
export async function adminPayoutRetry(
  op: OperatorCaller,
  body: { transaction_id: string; reason: string },
): Promise<AdminPayoutRetryResponse | Reply<{ approval: ApprovalResponse }>> {
  const params: PayoutParams = { transaction_id: body.transaction_id };
  const confirmed = await confirmedFailure(params);
  if (aboveFourEyes(confirmed.amountKobo)) {
    return await requestApproval(payoutRetry, op, params, body.reason, confirmed.amountKobo);
  }
  const r = await performNow(payoutRetry, op, params, body.reason, confirmed);
  const [now] = await asService((tx) =>
    tx<{ status: AdminPayoutRetryResponse['status'] }[]>`
    select status::text as status from public.transactions where id = ${r.transaction_id}`
  );
  return {
    transaction_id: r.transaction_id,
    retry_of: r.retry_of,
    amount: r.amount,
    status: now?.status ?? r.status,
    old_transfer_status: r.old_transfer_status,
  };
}
