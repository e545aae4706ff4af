// The ledger as the tests read it: balances in kobo, read straight from the test database.
// A wallet's and an escrow hold's balance come through the SQL read functions the services use
// (private.wallet_balance, private.hold_balance: supabase/migrations/20261126234000_ledger_reads.sql);
// what reads entries, transfers or accounts by id is about the ledger itself and reads the tables.
// The invariants over the whole ledger are in ledger-checks.ts.
import { testDb } from './db.ts';
import type { Deal } from './escrows.ts';

/** The user's wallet balance (kobo); 0 before their first posting. */
export async function walletKobo(userId: string): Promise<number> {
  const [row] = await testDb()<{ balance: string }[]>`select private.wallet_balance(${userId})::text as balance`;
  return Number(row?.balance);
}

/** The money locked in the escrow's hold (kobo); 0 before it was funded. */
export async function holdKobo(escrowId: string): Promise<number> {
  const [row] = await testDb()<{ balance: string }[]>`select private.hold_balance(${escrowId})::text as balance`;
  return Number(row?.balance);
}

/** Wallets of both parties and the escrow hold, in kobo. */
export async function balances(deal: Deal) {
  const [payer, payee, hold] = await Promise.all([
    walletKobo(deal.payer.id),
    walletKobo(deal.payee.id),
    holdKobo(deal.escrowId),
  ]);
  return { payer, payee, hold };
}

/** The balance of one ledger account, by its id (kobo). */
export async function accountKobo(accountId: number): Promise<number> {
  const [row] = await testDb()<{ balance: string }[]>`
    select balance::text from private.ledger_accounts where id = ${accountId}`;
  return Number(row?.balance);
}

/**
 * The ledger transfers that took money out of the escrow's hold, by idempotency key (settlements,
 * releases, refunds, milestone releases), each with the entries per account kind.
 */
export async function holdTransfers(escrowId: string) {
  return testDb()<{ key: string; kind: string; hold: string }[]>`
    select lt.idempotency_key as key, lt.kind, le.amount::text as hold
      from private.ledger_transfers lt
      join private.ledger_entries le on le.transfer_id = lt.id
      join private.ledger_accounts a on a.id = le.account_id
     where a.kind = 'escrow_hold' and a.owner_id = ${escrowId} and le.amount < 0
     order by lt.created_at, lt.idempotency_key`;
}

/** What the system accounts (platform_fees, vat_payable) got from the transfers with these keys. */
export async function systemShares(keys: string[]) {
  const [row] = await testDb()<{ fees: string; vat: string }[]>`
    select coalesce(sum(le.amount) filter (where a.kind = 'platform_fees'), 0)::text as fees,
           coalesce(sum(le.amount) filter (where a.kind = 'vat_payable'), 0)::text as vat
      from private.ledger_transfers lt join private.ledger_entries le on le.transfer_id = lt.id
      join private.ledger_accounts a on a.id = le.account_id
     where lt.idempotency_key = any(${keys})`;
  return { fees: Number(row!.fees), vat: Number(row!.vat) };
}
