// A local HTTP fake of Paystack for the test suite (run under Deno by tests/support/stack.ts).
// It answers the API calls our adapter makes in Paystack's documented shapes (see
// docs/providers/paystack.md), remembers what it was asked, and, when a test says so, sends
// correctly signed webhooks to the running server, the way Paystack would.
//
// Control API (tests only, under /_fake):
//   GET  /_fake/requests?path=/transfer        requests received (method, path, body, auth header)
//   POST /_fake/accounts {bank_code, account_number, account_name}   what /bank/resolve knows
//   POST /_fake/fail {match, mode}   make calls fail: match = {path, field, value} (a body/query
//        field equal to value; a verify's reference, in its path, as field 'reference' of path
//        '/transaction/verify' or '/transfer/verify'; a deactivation's account id as field 'id' of
//        path '/dedicated_account'); mode = 'refuse' (400 status:false), 'unavailable' (500) or 'timeout'
//        (no answer until the caller gives up, at most 60 s)
//   POST /_fake/outage {mode: 'unavailable'|'timeout', seconds}   for that long every API call fails
//        that way, whatever it asks (load runs: a provider outage); mode 'none' ends it early
//   POST /_fake/webhook-faults {duplicate?, drop?}   the next `duplicate` webhooks are sent twice
//        (the same bytes, one after the other), the next `drop` ones never ({responses: []})
//   GET  /_fake/webhook-faults   what those faults did: {duplicated: [...], dropped: [...]}, each
//        {event, reference, at}, and how many are still to come
//   GET  /_fake/charges   every charge we were asked for: {reference, amount, status, channels}
//        (status null: nobody paid it yet; verify answers 'abandoned'; channels null: none named)
//   POST /_fake/deliver {event, data, times?, concurrent?, signature?}  send a webhook
//        (times copies of the same bytes, all at once when concurrent) -> {responses: [{status, body}]}
//   POST /_fake/charge-success {reference, amount?, currency?}   charge.success for a charge we were
//        asked for; amount and currency are the event's (currency null: left out). What verify says
//        is unchanged by them (set it with /charge-status): an event can disagree with verify.
//   POST /_fake/transfer-outcome {reference, event}   transfer.success / failed / reversed
//   POST /_fake/assign-outcome {email, success}       dedicatedaccount.assign.success / failed
//   (API) DELETE /dedicated_account/:id   deactivates an account assign-outcome assigned (404 for others)
//   POST /_fake/dva-deposit {account_number, amount, customer_code?}  a bank transfer into a DVA
//   POST /_fake/charge-status {reference, status, amount?, currency?}   what verify will say, no webhook sent
//   POST /_fake/transfer-status {reference, status}           (a lost webhook, for reconciliation)
//   GET  /_fake/refunds   every refund we were asked for: {id, reference (the charge's), amount, status}
//   POST /_fake/refund-outcome {reference, event, amount?, currency?, signature?, times?, concurrent?}
//        refund.pending / refund.processing / refund.processed / refund.failed for the refund of the
//        charge `reference` (amount, currency: the event's, by default the refund's); processed and
//        failed set the refund's status (what GET /refund answers)
//   POST /_fake/refund-status {reference, status}   what GET /refund will say, no webhook sent
//   POST /_fake/authorize {email, authorization_code?}   a card charge of that customer completed at
//        the checkout page (no webhook sent): -> {authorization_code, signature}, which
//        check_authorization then confirms (authorization_code: the code to issue, e.g. AUTH_decline...)
//
// Refunds (POST /refund {transaction, amount?}): of a paid charge (by its reference or id), at most
// what the charge has left after its refunds not failed (400 status:false otherwise, as Paystack
// does); GET /refund?transaction=<id or reference> (or reference=) lists a charge's refunds and
// GET /refund/:id fetches one.
//
// Card authorizations: the fake issues one with each successful card charge (charge-success,
// charge-status success, authorize), to the charge's email; POST /transaction/check_authorization
// confirms a code only for the email it was issued to (400 status:false otherwise, as Paystack does).

const port = Number(Deno.env.get('FAKE_PAYSTACK_PORT') ?? 54333);
const secretKey = Deno.env.get('FAKE_PAYSTACK_SECRET_KEY') ?? 'sk_test_fake';
const webhookUrl = Deno.env.get('FAKE_PAYSTACK_WEBHOOK_URL') ?? 'http://127.0.0.1:54331/functions/v1/webhook-payments';
const webhookSecret = Deno.env.get('FAKE_PAYSTACK_WEBHOOK_SECRET') ?? '';

type Json = Record<string, unknown>;
interface Recorded {
  method: string;
  path: string;
  body: Json | null;
  query: Record<string, string>;
  authorization: string | null;
  at: string;
}
type FailMode = 'refuse' | 'unavailable' | 'timeout';
interface FailRule {
  path: string;
  field: string;
  value: string;
  mode: FailMode;
}

const requests: Recorded[] = [];
const accounts = new Map<string, string>(); // `${bank}:${number}` -> name
const charges = new Map<
  string,
  {
    amount: number;
    email: string;
    metadata: unknown;
    authorization_code?: string;
    id: number;
    status?: string;
    currency?: string;
    /** the checkout's channels, when initialize named them */
    channels?: string[];
  }
>();
interface FakeRefund {
  id: number;
  reference: string;
  amount: number;
  status: string;
  created_at: string;
}
/** The refunds asked for, in order. */
const refunds: FakeRefund[] = [];
/** The channels Paystack's initialize accepts. */
const PAYSTACK_CHANNELS = ['card', 'bank', 'ussd', 'qr', 'mobile_money', 'bank_transfer', 'eft', 'apple_pay'];
const transfers = new Map<
  string,
  { amount: number; recipient: string; transfer_code: string; id: number; reason: string; status?: string }
>();
const recipients = new Map<string, { account_number: string; bank_code: string; name: string; id: number }>();
const assignments = new Map<string, Json>(); // email -> assign request
const dedicatedAccounts = new Map<string, Json>(); // dedicated_account.id -> the account assigned
const customers = new Map<string, { id: number; customer_code: string }>(); // email -> customer
const fails: FailRule[] = [];
/** The card authorizations issued with successful card charges: code -> the customer's email. */
const authorizations = new Map<string, string>();
/** A provider outage (POST /_fake/outage): every API call fails in `mode` until `until` (ms). */
let outage: { mode: 'unavailable' | 'timeout'; until: number } | null = null;
/** Webhook faults still to apply (POST /_fake/webhook-faults), and what they did. */
const webhookFaults = { duplicate: 0, drop: 0 };
const webhookFaulted: { duplicated: WebhookFaulted[]; dropped: WebhookFaulted[] } = { duplicated: [], dropped: [] };
interface WebhookFaulted {
  event: string;
  reference: string | null;
  at: string;
}
let seq = 5_000_000;

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
const ok = (message: string, data: unknown) => json(200, { status: true, message, data });
const refuse = (status: number, message: string) => json(status, { status: false, message });

async function hmac512(key: string, body: string): Promise<string> {
  const k = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(key),
    { name: 'HMAC', hash: 'SHA-512' },
    false,
    ['sign'],
  );
  const sig = await crypto.subtle.sign('HMAC', k, new TextEncoder().encode(body));
  return Array.from(new Uint8Array(sig), (b) => b.toString(16).padStart(2, '0')).join('');
}

async function deliver(
  event: string,
  data: Json,
  opts: { times?: number; concurrent?: boolean; signature?: string } = {},
) {
  const faulted = () => ({
    event,
    reference: data.reference ? String(data.reference) : null,
    at: new Date().toISOString(),
  });
  if (webhookFaults.drop > 0) {
    // lost on the way: the server never hears of it (reconciliation must find it)
    webhookFaults.drop--;
    webhookFaulted.dropped.push(faulted());
    return [];
  }
  let extra = 0;
  if (webhookFaults.duplicate > 0) {
    webhookFaults.duplicate--;
    webhookFaulted.duplicated.push(faulted());
    extra = 1;
  }
  const body = JSON.stringify({ event, data });
  const signature = opts.signature ?? (await hmac512(webhookSecret, body));
  const send = async () => {
    const res = await fetch(webhookUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'x-payments-signature': signature },
      body,
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  };
  const times = Math.max(1, opts.times ?? 1) + extra;
  if (opts.concurrent) return await Promise.all(Array.from({ length: times }, send));
  const out = [];
  for (let i = 0; i < times; i++) out.push(await send());
  return out;
}

/**
 * A 'timeout': no answer until the caller gives up (its connection closes), at most 60 s, longer
 * than the adapter waits (shared/money/payments/paystack.ts). The call is not carried out.
 */
function hang(req: Request): Promise<Response> {
  return new Promise((resolve) => {
    const answer = () => {
      clearTimeout(timer);
      resolve(json(504, { status: false, message: 'the fake held this request' }));
    };
    const timer = setTimeout(answer, 60_000);
    req.signal.addEventListener('abort', answer, { once: true });
  });
}

function failure(req: Request, path: string, fields: Json): Response | Promise<Response> | null {
  const mode = outage && Date.now() < outage.until
    ? outage.mode
    : fails.find((f) => f.path === path && String(fields[f.field]) === f.value)?.mode;
  if (!mode) return null;
  if (mode === 'timeout') return hang(req);
  return mode === 'refuse'
    ? refuse(400, 'Declined by test rule')
    : json(500, { status: false, message: 'Internal server error' });
}

/** A card charge succeeded: its authorization is now the customer's (check_authorization confirms it). */
function issueAuthorization(reference: string) {
  const data = chargeData(reference);
  if (data) authorizations.set(data.authorization.authorization_code, data.customer.email);
  return data;
}

function chargeData(reference: string) {
  const c = charges.get(reference);
  if (!c) return null;
  return {
    id: c.id,
    domain: 'test',
    status: 'success',
    reference,
    amount: c.amount,
    currency: 'NGN',
    channel: 'card',
    gateway_response: 'Successful',
    paid_at: new Date().toISOString(),
    metadata: c.metadata,
    customer: { id: 1000 + c.id, email: c.email, customer_code: `CUS_${c.id}` },
    authorization: {
      authorization_code: c.authorization_code ?? `AUTH_${c.id}`,
      last4: '4081',
      exp_month: '12',
      exp_year: '2030',
      card_type: 'visa DEBIT',
      bank: 'TEST BANK',
      brand: 'visa',
      channel: 'card',
      reusable: true,
      signature: `SIG_${c.id}`,
    },
  };
}

/** A charge's reference from its reference or its id (Paystack takes either). */
function chargeReferenceOf(key: string): string | null {
  if (charges.has(key)) return key;
  for (const [reference, c] of charges) if (String(c.id) === key) return reference;
  return null;
}

/** A refund in Paystack's shape (create and fetch name the transaction as an object). */
function refundData(r: FakeRefund, c: { id: number; amount: number } | undefined, b: Json = {}) {
  return {
    id: r.id,
    integration: 100032,
    domain: 'test',
    transaction: { id: c?.id ?? null, reference: r.reference, amount: c?.amount ?? null, currency: 'NGN' },
    dispute: null,
    amount: r.amount,
    deducted_amount: r.amount,
    currency: 'NGN',
    channel: 'card',
    fully_deducted: true,
    refunded_by: 'api',
    customer_note: b.customer_note ?? null,
    merchant_note: b.merchant_note ?? null,
    status: r.status,
    expected_at: new Date(Date.parse(r.created_at) + 10 * 86_400_000).toISOString(),
    createdAt: r.created_at,
  };
}

async function api(req: Request, url: URL): Promise<Response> {
  const path = url.pathname;
  const body = req.method === 'POST' ? ((await req.json().catch(() => null)) as Json | null) : null;
  requests.push({
    method: req.method,
    path,
    body,
    query: Object.fromEntries(url.searchParams),
    authorization: req.headers.get('authorization'),
    at: new Date().toISOString(),
  });
  if (req.headers.get('authorization') !== `Bearer ${secretKey}`) return refuse(401, 'Invalid key');
  const b = body ?? {};
  // a verify names its reference in the path: a rule {path: '/transaction/verify' or
  // '/transfer/verify', field: 'reference', value} matches it
  const verify = /^(\/(?:transaction|transfer)\/verify)\/(.+)$/.exec(path);
  const injected = verify
    ? failure(req, verify[1] as string, { reference: decodeURIComponent(verify[2] as string) })
    : failure(req, path, { ...b, ...Object.fromEntries(url.searchParams) });
  if (injected) return injected;

  if (req.method === 'POST' && path === '/transaction/initialize') {
    const reference = String(b.reference ?? '');
    if (!b.email || !b.amount) return refuse(400, 'Invalid request: email and amount are required');
    if (charges.has(reference)) return refuse(400, 'Duplicate Transaction Reference');
    const channels = b.channels === undefined ? undefined : b.channels;
    if (
      channels !== undefined &&
      (!Array.isArray(channels) || channels.length === 0 ||
        channels.some((c) => !PAYSTACK_CHANNELS.includes(String(c))))
    ) {
      return refuse(400, 'Invalid channels');
    }
    charges.set(reference, {
      amount: Number(b.amount),
      email: String(b.email),
      metadata: b.metadata ?? null,
      id: ++seq,
      ...(channels ? { channels: (channels as unknown[]).map(String) } : {}),
    });
    return ok('Authorization URL created', {
      authorization_url: `https://checkout.paystack.test/${seq.toString(36)}`,
      access_code: `acc_${seq.toString(36)}`,
      reference,
    });
  }
  if (req.method === 'POST' && path === '/transaction/charge_authorization') {
    const reference = String(b.reference ?? '');
    if (charges.has(reference)) return refuse(400, 'Duplicate Transaction Reference');
    const code = String(b.authorization_code ?? '');
    charges.set(reference, {
      amount: Number(b.amount),
      email: String(b.email),
      metadata: b.metadata ?? null,
      authorization_code: code,
      id: ++seq,
    });
    const declined = code.startsWith('AUTH_decline');
    const data = {
      ...chargeData(reference),
      status: declined ? 'failed' : 'success',
      gateway_response: declined ? 'Declined' : 'Approved',
    };
    return ok(declined ? 'Charge attempted' : 'Charge attempted', data);
  }
  if (req.method === 'POST' && path === '/transaction/check_authorization') {
    if (!b.authorization_code || !b.email || !b.amount) {
      return refuse(400, 'Invalid request: authorization_code, email and amount are required');
    }
    const owner = authorizations.get(String(b.authorization_code));
    if (owner === undefined) return refuse(400, 'Authorization code is invalid');
    if (owner !== String(b.email)) return refuse(400, 'Authorization code does not belong to this customer');
    return ok('Authorization is valid for this amount', { amount: String(b.amount), currency: 'NGN' });
  }
  if (req.method === 'POST' && path === '/dedicated_account/assign') {
    if (!b.email || !b.first_name || !b.last_name || !b.phone || !b.preferred_bank) {
      return refuse(400, 'Invalid request');
    }
    assignments.set(String(b.email), b);
    return ok('Assign dedicated account in progress', undefined);
  }
  const deactivate = /^\/dedicated_account\/([^/]+)$/.exec(path);
  if (req.method === 'DELETE' && deactivate) {
    // Paystack's "Deactivate Dedicated Account": the account, now unassigned and inactive
    const id = decodeURIComponent(deactivate[1] as string);
    // the id is in the path: a rule {path: '/dedicated_account', field: 'id', value} matches it
    const failed = failure(req, '/dedicated_account', { id });
    if (failed) return failed;
    const account = dedicatedAccounts.get(id);
    if (!account) return refuse(404, 'Dedicated account not found');
    Object.assign(account, { assigned: false, active: false });
    return ok('Managed Account Successfully Unassigned', account);
  }
  if (req.method === 'GET' && path === '/bank/resolve') {
    const name = accounts.get(`${url.searchParams.get('bank_code')}:${url.searchParams.get('account_number')}`);
    if (!name) return refuse(422, 'Could not resolve account name. Check parameters or try again.');
    return ok('Account number resolved', {
      account_number: url.searchParams.get('account_number'),
      account_name: name,
      bank_id: 9,
    });
  }
  if (req.method === 'POST' && path === '/transferrecipient') {
    if (b.type !== 'nuban' || !b.account_number || !b.bank_code || !b.name) return refuse(400, 'Invalid request');
    const id = ++seq;
    const code = `RCP_${id.toString(36)}`;
    recipients.set(code, {
      account_number: String(b.account_number),
      bank_code: String(b.bank_code),
      name: String(b.name),
      id,
    });
    return json(201, {
      status: true,
      message: 'Transfer recipient created successfully',
      data: {
        active: true,
        currency: 'NGN',
        id,
        name: b.name,
        recipient_code: code,
        type: 'nuban',
        details: {
          account_number: b.account_number,
          account_name: b.name,
          bank_code: b.bank_code,
          bank_name: 'Test Bank',
        },
      },
    });
  }
  if (req.method === 'POST' && path === '/transfer') {
    const reference = String(b.reference ?? '');
    if (!/^[a-z0-9_-]{16,50}$/.test(reference)) return refuse(400, 'Invalid transfer reference');
    if (transfers.has(reference)) {
      return refuse(400, 'Please provide a unique reference. Reference already exists on a transfer');
    }
    const recipient = recipients.get(String(b.recipient ?? ''));
    if (!recipient) return refuse(404, 'Recipient specified is invalid');
    const rfail = failure(req, '/transfer', { account_number: recipient.account_number });
    if (rfail) return rfail;
    const id = ++seq;
    const t = {
      amount: Number(b.amount),
      recipient: String(b.recipient),
      transfer_code: `TRF_${id.toString(36)}`,
      id,
      reason: String(b.reason ?? ''),
    };
    transfers.set(reference, t);
    return ok('Transfer has been queued', {
      integration: 100032,
      domain: 'test',
      amount: t.amount,
      currency: 'NGN',
      source: 'balance',
      reason: t.reason,
      recipient: id,
      status: 'pending',
      transfer_code: t.transfer_code,
      id,
      reference,
    });
  }
  const verifyCharge = /^\/transaction\/verify\/(.+)$/.exec(path);
  if (req.method === 'GET' && verifyCharge) {
    const reference = decodeURIComponent(verifyCharge[1] as string);
    const c = charges.get(reference);
    if (!c) return refuse(400, 'Transaction reference not found');
    const data = chargeData(reference);
    return ok('Verification successful', {
      ...data,
      status: c.status ?? 'abandoned',
      amount: c.amount,
      requested_amount: c.amount,
      currency: c.currency ?? 'NGN',
    });
  }
  const verifyTransfer = /^\/transfer\/verify\/(.+)$/.exec(path);
  if (req.method === 'GET' && verifyTransfer) {
    const reference = decodeURIComponent(verifyTransfer[1] as string);
    const t = transfers.get(reference);
    if (!t) return refuse(404, 'Transfer not found');
    return ok('Transfer retrieved', {
      id: t.id,
      reference,
      amount: t.amount,
      currency: 'NGN',
      status: t.status ?? 'pending',
      transfer_code: t.transfer_code,
      reason: t.reason,
    });
  }
  if (req.method === 'POST' && path === '/refund') {
    if (!b.transaction) return refuse(400, 'Transaction is required');
    const reference = chargeReferenceOf(String(b.transaction));
    const c = reference === null ? undefined : charges.get(reference);
    if (!c || reference === null) return refuse(404, 'Transaction not found');
    if (c.status !== 'success') return refuse(400, 'Cannot refund a transaction that has not been paid');
    const left = c.amount - refunds.filter((r) => r.reference === reference && r.status !== 'failed')
      .reduce((sum, r) => sum + r.amount, 0);
    const amount = b.amount === undefined ? left : Number(b.amount);
    if (!Number.isSafeInteger(amount) || amount <= 0) return refuse(400, 'Invalid amount');
    if (amount > left) return refuse(400, 'Refund amount cannot be more than the unrefunded transaction amount');
    const r: FakeRefund = { id: ++seq, reference, amount, status: 'pending', created_at: new Date().toISOString() };
    refunds.push(r);
    return ok('Refund has been queued for processing', refundData(r, c, b));
  }
  if (req.method === 'GET' && path === '/refund') {
    const key = url.searchParams.get('transaction') ?? url.searchParams.get('reference');
    const reference = key === null ? null : chargeReferenceOf(key);
    const list = refunds.filter((r) => key === null || r.reference === reference);
    return ok(
      'Refunds retrieved',
      list.map((r) => ({
        ...refundData(r, charges.get(r.reference)),
        transaction: charges.get(r.reference)?.id ?? null,
      })),
    );
  }
  const fetchRefund = /^\/refund\/(\d+)$/.exec(path);
  if (req.method === 'GET' && fetchRefund) {
    const r = refunds.find((x) => x.id === Number(fetchRefund[1]));
    if (!r) return refuse(404, 'Refund not found');
    return ok('Refund retrieved', refundData(r, charges.get(r.reference)));
  }
  return refuse(404, `No route ${req.method} ${path}`);
}

async function control(req: Request, url: URL): Promise<Response> {
  const path = url.pathname.slice('/_fake'.length);
  const b = req.method === 'POST' ? ((await req.json().catch(() => ({}))) as Json) : {};
  if (req.method === 'GET' && path === '/requests') {
    const p = url.searchParams.get('path');
    return json(200, requests.filter((r) => !p || r.path === p));
  }
  if (path === '/accounts') {
    accounts.set(`${b.bank_code}:${b.account_number}`, String(b.account_name));
    return json(200, { ok: true });
  }
  if (path === '/fail') {
    const m = b.match as Json;
    fails.push({
      path: String(m.path),
      field: String(m.field),
      value: String(m.value),
      mode: b.mode === 'unavailable' || b.mode === 'timeout' ? b.mode : 'refuse',
    });
    return json(200, { ok: true });
  }
  if (path === '/outage') {
    const seconds = Number(b.seconds);
    if (b.mode === 'none') outage = null;
    else if ((b.mode === 'unavailable' || b.mode === 'timeout') && seconds > 0) {
      outage = { mode: b.mode, until: Date.now() + seconds * 1000 };
    } else return json(400, { error: "mode ('unavailable', 'timeout' or 'none') and seconds > 0 are required" });
    return json(200, { ok: true, until: outage ? new Date(outage.until).toISOString() : null });
  }
  if (path === '/webhook-faults') {
    if (req.method === 'POST') {
      webhookFaults.duplicate += Math.max(0, Math.floor(Number(b.duplicate ?? 0)));
      webhookFaults.drop += Math.max(0, Math.floor(Number(b.drop ?? 0)));
    }
    return json(200, { ...webhookFaulted, pending: { ...webhookFaults } });
  }
  if (req.method === 'GET' && path === '/charges') {
    return json(
      200,
      [...charges].map(([reference, c]) => ({
        reference,
        amount: c.amount,
        status: c.status ?? null,
        channels: c.channels ?? null,
      })),
    );
  }
  if (path === '/deliver') {
    const responses = await deliver(String(b.event), b.data as Json, b as never);
    return json(200, { responses });
  }
  if (req.method === 'GET' && path === '/refunds') {
    return json(200, refunds.map((r) => ({ id: r.id, reference: r.reference, amount: r.amount, status: r.status })));
  }
  if (path === '/refund-status' || path === '/refund-outcome') {
    const r = refunds.findLast((x) => x.reference === String(b.reference));
    if (!r) return json(404, { error: 'no refund of that charge' });
    if (path === '/refund-status') {
      r.status = String(b.status);
      return json(200, { ok: true });
    }
    const event = String(b.event);
    const status = event.split('.')[1] ?? 'pending';
    if (status === 'processed' || status === 'failed') r.status = status;
    const c = charges.get(r.reference);
    const data: Json = {
      status,
      transaction_reference: r.reference,
      refund_reference: status === 'pending' ? null : `RFN_${r.id.toString(36)}`,
      amount: String(b.amount ?? r.amount),
      currency: b.currency === undefined ? 'NGN' : b.currency,
      processor: 'mpgs_zen',
      customer: { first_name: null, last_name: null, email: c?.email ?? null },
      integration: 100032,
      domain: 'test',
    };
    return json(200, { responses: await deliver(event, data, b as never) });
  }
  if (path === '/authorize') {
    const reference = `fake_checkout_${++seq}`;
    charges.set(reference, {
      amount: 100_00,
      email: String(b.email),
      metadata: null,
      id: seq,
      status: 'success',
      ...(b.authorization_code ? { authorization_code: String(b.authorization_code) } : {}),
    });
    const data = issueAuthorization(reference);
    return json(200, {
      authorization_code: data?.authorization.authorization_code,
      signature: data?.authorization.signature,
    });
  }
  if (path === '/charge-success') {
    const data = issueAuthorization(String(b.reference));
    if (!data) return json(404, { error: 'unknown charge reference' });
    (charges.get(String(b.reference)) as { status?: string }).status = 'success';
    const event: Json = { ...data };
    if (b.amount !== undefined) event.amount = Number(b.amount);
    if (b.currency === null) delete event.currency;
    else if (b.currency !== undefined) event.currency = String(b.currency);
    return json(200, { responses: await deliver('charge.success', event, b as never) });
  }
  if (path === '/charge-status') {
    const c = charges.get(String(b.reference));
    if (!c) return json(404, { error: 'unknown charge reference' });
    c.status = String(b.status);
    if (b.amount !== undefined) c.amount = Number(b.amount);
    if (b.currency !== undefined) c.currency = String(b.currency);
    if (c.status === 'success') issueAuthorization(String(b.reference));
    return json(200, { ok: true });
  }
  if (path === '/transfer-status') {
    const t = transfers.get(String(b.reference));
    if (!t) return json(404, { error: 'unknown transfer reference' });
    t.status = String(b.status);
    return json(200, { ok: true });
  }
  if (path === '/transfer-outcome') {
    const t = transfers.get(String(b.reference));
    if (!t) return json(404, { error: 'unknown transfer reference' });
    const event = String(b.event);
    const status = event.split('.')[1];
    t.status = status;
    const r = recipients.get(t.recipient);
    const data = {
      id: t.id,
      domain: 'test',
      amount: t.amount,
      currency: 'NGN',
      reference: b.reference,
      source: 'balance',
      reason: t.reason,
      status,
      transfer_code: t.transfer_code,
      transferred_at: status === 'success' ? new Date().toISOString() : null,
      recipient: {
        recipient_code: t.recipient,
        type: 'nuban',
        name: r?.name,
        details: { account_number: r?.account_number, bank_code: r?.bank_code },
      },
    };
    return json(200, { responses: await deliver(event, data, b as never) });
  }
  if (path === '/assign-outcome') {
    const a = assignments.get(String(b.email));
    if (!a) return json(404, { error: 'no assignment requested for that email' });
    const id = ++seq;
    // Paystack keys customers by email: every attempt for one email is the same customer
    const known = customers.get(String(a.email)) ?? { id, customer_code: `CUS_${id.toString(36)}` };
    customers.set(String(a.email), known);
    const customer = {
      id: known.id,
      email: a.email,
      first_name: a.first_name,
      last_name: a.last_name,
      phone: a.phone,
      customer_code: known.customer_code,
    };
    const account = {
      id,
      account_number: String(b.account_number ?? `99${String(id).padStart(8, '0')}`.slice(0, 10)),
      account_name: `ESCROW/${a.last_name} ${a.first_name}`.toUpperCase(),
      assigned: true,
      active: true,
      currency: 'NGN',
      bank: { name: 'Test Bank', id: 24, slug: 'test-bank' },
    };
    if (b.success) dedicatedAccounts.set(String(id), { ...account, customer });
    const data = b.success
      ? { customer, dedicated_account: account, identification: { status: 'success' } }
      : { customer, dedicated_account: null, identification: { status: 'failed' } };
    return json(200, {
      responses: await deliver(
        b.success ? 'dedicatedaccount.assign.success' : 'dedicatedaccount.assign.failed',
        data,
        b as never,
      ),
      customer_code: customer.customer_code,
    });
  }
  if (path === '/dva-deposit') {
    const id = ++seq;
    const data = {
      id,
      status: 'success',
      reference: `1000${id}${Date.now()}`,
      amount: Number(b.amount),
      currency: 'NGN',
      channel: 'dedicated_nuban',
      paid_at: new Date().toISOString(),
      gateway_response: 'Approved',
      metadata: { receiver_account_number: b.account_number, receiver_bank: 'Test Bank' },
      customer: { id, email: 'payer@example.com', customer_code: b.customer_code ?? `CUS_unknown${id}` },
      authorization: {
        authorization_code: `AUTH_dva${id}`,
        channel: 'dedicated_nuban',
        card_type: 'transfer',
        bank: 'Guaranty Trust Bank',
        reusable: false,
        signature: null,
        sender_bank: 'Guaranty Trust Bank',
        sender_name: 'EMEKA NWOSU',
        receiver_bank_account_number: b.account_number,
        receiver_bank: 'Test Bank',
      },
    };
    return json(200, { responses: await deliver('charge.success', data, b as never), data });
  }
  return json(404, { error: `no control route ${path}` });
}

Deno.serve(
  { hostname: '127.0.0.1', port, onListen: () => console.log(`fake paystack listening on ${port}`) },
  (req) => {
    const url = new URL(req.url);
    return url.pathname.startsWith('/_fake/') ? control(req, url) : api(req, url);
  },
);
