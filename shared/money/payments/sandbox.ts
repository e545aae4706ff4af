// The sandbox provider: no keys, no network beyond ourselves. Every call succeeds the way
// Paystack's test mode would, and the outcome arrives as a correctly signed webhook (Paystack's
// event shapes) delivered to our own webhook-payments endpoint a moment later, so local work goes
// through exactly the code paths production uses.
import { providerFetch } from '../../core/outbound.ts';
import { errorMessage, log } from '../../core/log.ts';
import { type PaymentsProvider, ProviderError } from './provider.ts';
import { signPayload } from './signature.ts';

let nextId = Math.floor(Date.now() / 1000);

/** The card authorizations this process's sandbox issued (in its charge.success events), by code: the email. */
const issued = new Map<string, string>();

export function sandboxProvider(opts: { webhookUrl: string; secret: string; delayMs: number }): PaymentsProvider {
  const deliver = (event: string, data: Record<string, unknown>) => {
    const body = JSON.stringify({ event, data });
    setTimeout(async () => {
      try {
        const res = await providerFetch(opts.webhookUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'x-payments-signature': await signPayload(opts.secret, body) },
          body,
        });
        await res.body?.cancel();
      } catch (err) {
        log.warn('sandbox.webhook_failed', { event, error: errorMessage(err) });
      }
    }, opts.delayMs);
  };
  const chargeData = (reference: string, amount: number, email: string, metadata: Record<string, unknown>) => {
    const event = chargeEvent(++nextId, reference, amount, email, metadata);
    issued.set(event.authorization.authorization_code, email);
    return event;
  };
  const chargeEvent = (
    id: number,
    reference: string,
    amount: number,
    email: string,
    metadata: Record<string, unknown>,
  ) => ({
    id,
    status: 'success',
    reference,
    amount,
    currency: 'NGN',
    channel: 'card',
    gateway_response: 'Successful',
    paid_at: new Date().toISOString(),
    metadata,
    customer: { email, customer_code: `CUS_sandbox${id}` },
    authorization: {
      authorization_code: `AUTH_sandbox${id}`,
      last4: '4081',
      exp_month: '12',
      exp_year: '2030',
      card_type: 'visa',
      bank: 'TEST BANK',
      brand: 'visa',
      reusable: true,
      signature: `SIG_sandbox${id}`,
    },
  });

  return {
    name: 'sandbox',
    async initializeCharge(input) {
      // Locally nobody visits the payment page: the payment "completes" at once, by the first of
      // the channels offered (a card when none are named).
      const channel = input.channels?.[0] ?? 'card';
      deliver('charge.success', {
        ...chargeData(input.reference, input.amountKobo, input.email, input.metadata),
        channel,
      });
      return {
        authorizationUrl: `https://sandbox.invalid/pay/${input.reference}`,
        accessCode: `sandbox_${input.reference}`,
        reference: input.reference,
      };
    },
    async chargeAuthorization(input) {
      deliver('charge.success', chargeData(input.reference, input.amountKobo, input.email, input.metadata));
      return { status: 'success', message: 'Approved' };
    },
    async checkAuthorization(input) {
      // only an authorization it issued, to that customer (kept in memory: a restart forgets them)
      return issued.get(input.authorizationCode) === input.email;
    },
    async assignDedicatedAccount(input) {
      const accountNumber = `99${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
      deliver('dedicatedaccount.assign.success', {
        customer: {
          email: input.email,
          first_name: input.firstName,
          last_name: input.lastName,
          customer_code: `CUS_sandbox${++nextId}`,
        },
        dedicated_account: {
          account_number: accountNumber,
          account_name: `ESCROW/${input.lastName} ${input.firstName}`.toUpperCase(),
          bank: { name: 'Sandbox Bank', slug: 'sandbox-bank' },
          active: true,
          assigned: true,
        },
      });
      return { status: 'pending' };
    },
    async deactivateDedicatedAccount() {
      // nothing to deactivate: the sandbox's accounts receive only what the sandbox sends
    },
    async resolveAccount() {
      return null; // the sandbox cannot check names: payout accounts stay unverified
    },
    async createTransferRecipient(input) {
      return { recipientCode: `RCP_sandbox${input.bankCode}${input.accountNumber}` };
    },
    async initiateTransfer(input) {
      const transferCode = `TRF_sandbox${++nextId}`;
      deliver('transfer.success', {
        id: nextId,
        reference: input.reference,
        transfer_code: transferCode,
        amount: input.amountKobo,
        currency: 'NGN',
        status: 'success',
        reason: input.reason,
        recipient: { recipient_code: input.recipientCode },
      });
      return { transferCode, status: 'pending' };
    },
    async refund(input) {
      const refundId = `${++nextId}`;
      // completed a moment later, like Paystack's refund.processed (which names the charge)
      deliver('refund.processed', {
        status: 'processed',
        transaction_reference: input.chargeReference,
        refund_reference: `RFN_sandbox${refundId}`,
        amount: String(input.amountKobo),
        currency: 'NGN',
        processor: 'sandbox',
        domain: 'test',
      });
      return { refundId, status: 'pending', amountKobo: input.amountKobo, currency: 'NGN' };
    },
    async findRefund() {
      throw new ProviderError('unavailable', 'the sandbox keeps no records');
    },
    // The sandbox keeps no records: its webhooks are the only outcome it reports, so it can never
    // say a charge or transfer does not exist.
    async verifyCharge() {
      throw new ProviderError('unavailable', 'the sandbox keeps no records');
    },
    async verifyTransfer() {
      throw new ProviderError('unavailable', 'the sandbox keeps no records');
    },
  };
}
