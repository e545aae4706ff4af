// The typed client's README example (clients/typescript/example.ts, the same code as the README's
// block) runs against the real service: sign-up, an escrow, a refusal, the escrow read back. Every
// answer it receives is checked against docs/api/openapi.json (tests/support/client.ts).
import { describe, expect, it } from 'vitest';
import { EscrowApiError } from '../../clients/typescript/index.ts';
import { signUpAndOpenEscrow } from '../../clients/typescript/example.ts';
import { baseUrl } from '../support/api.ts';
import { checkedFetch } from '../support/client.ts';
import { lastOtp } from '../support/db.ts';
import { newPhone } from '../support/users.ts';

describe('the typed client README example', () => {
  it('signs up, opens an escrow, meets a refusal as an EscrowApiError, reads the escrow', async () => {
    const buyer = newPhone();
    const seller = newPhone();
    const { user, created, escrow, refusal } = await signUpAndOpenEscrow({
      baseUrl: baseUrl(),
      phone: buyer.local,
      sellerPhone: seller.local,
      askCode: () => lastOtp(buyer.e164),
      fetch: checkedFetch,
    });
    expect(user.phone).toBe(buyer.e164);
    expect(created.fee_breakdown).toMatchObject({ escrow_amount: 25_000, total_charge: 25_201.56 });
    expect(escrow).toMatchObject({
      id: created.escrow_id,
      status: 'draft',
      initiator_id: user.id,
      counterparty_phone: seller.e164,
      amount: 25_000,
    });
    expect(refusal).toBeInstanceOf(EscrowApiError);
    expect(refusal?.status).toBe(400);
    expect(refusal?.error).toBe('Invalid query parameters');
    expect(refusal?.fields).toEqual(['escrow_id']);
    expect(refusal?.response.status).toBe(400);
  });
});
