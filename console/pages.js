// The operator's pages: the queues (admin-queue-list), search (admin-search), a user's picture
// (admin-user-get, opened with a reason) and an escrow with its timeline (admin-escrow-get).
import { useState } from './vendor/hooks.mjs';
import { call } from './api.js';
import { ActionForm, admits } from './actions.js';
import { age, lagosTime, naira, shortId, signedNaira, words } from './format.js';
import { html, Link, Loading, RefusalView, Title, useLoad } from './ui.js';

const QUEUES = {
  disputes_negotiation: ['Disputes in negotiation', 'the parties are still negotiating'],
  disputes_escalated: ['Disputes escalated', 'waiting for an operator to resolve them'],
  charges_held: ['Charges held for review', 'card charges whose figures disagreed with the provider'],
  payouts_failed: ['Failed payouts', 'withdrawals and escrow payouts whose transfer failed, not retried'],
  webhooks_failed: ['Failed webhooks', 'provider events whose processing failed'],
  identity_flags: ['Identity flags', 'a NIN or BVN bound to another account'],
  deactivations_failed: [
    'Deactivations failed',
    "deleted accounts' dedicated accounts the provider did not deactivate",
  ],
};

export function Queues() {
  const { data, error, loading, reload } = useLoad(() => call('admin-queue-list'), 'queues');
  return html`
    <section>
      <${Title}>Queues</${Title}>
      <p>What waits for an operator, and for how long the oldest item has waited.</p>
      <div class="actions"><button type="button" class="secondary" onClick=${reload}>Refresh</button></div>
      <${RefusalView} error=${error} />
      ${loading && !data ? html`<${Loading} what="the queues" />` : data && html`
        <table>
          <caption class="visually-hidden">Queues</caption>
          <thead>
            <tr>
              <th scope="col">Queue</th>
              <th scope="col" class="num">Waiting</th>
              <th scope="col">Oldest waiting for</th>
              <th scope="col">Since</th>
            </tr>
          </thead>
          <tbody>
            ${data.map((q) =>
              html`
                <tr class=${q.count > 0 ? 'busy' : ''}>
                  <th scope="row">${QUEUES[q.queue]?.[0] ?? words(q.queue)}<br />
                    <span class="hint">${QUEUES[q.queue]?.[1] ?? ''}</span></th>
                  <td class="num">${q.count}</td>
                  <td>${q.count > 0 ? age(q.oldest_age_seconds) : 'nothing waits'}</td>
                  <td>${q.count > 0 ? lagosTime(q.oldest_at) : '—'}</td>
                </tr>
              `
            )}
          </tbody>
        </table>
      `}
    </section>
  `;
}

// the latest search, kept while the tab lives so that going back to it shows its results
let lastSearch = { q: '', data: null };

export function Search() {
  const [q, setQ] = useState(lastSearch.q);
  const [data, setData] = useState(lastSearch.data);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const found = await call('admin-search', { query: { q: q.trim() } });
      lastSearch = { q, data: found };
      setData(found);
    } catch (err) {
      setError(err);
      setData(null);
    } finally {
      setBusy(false);
    }
  };
  return html`
    <section>
      <${Title}>Search</${Title}>
      <form onSubmit=${submit} class="inline">
        <label for="q">Phone, user or escrow id, or payment reference</label>
        <div class="row">
          <input id="q" name="q" type="search" required maxlength="100" value=${q} placeholder="08031234567"
            onInput=${(e) => setQ(e.currentTarget.value)} />
          <button type="submit" disabled=${busy}>Search</button>
        </div>
      </form>
      <${RefusalView} error=${error} />
      ${data && html`
        <h2>Users <span class="count">(${data.users.length})</span></h2>
        ${data.users.length === 0 ? html`<p>No user.</p>` : html`
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Phone</th>
                <th scope="col">KYC tier</th>
                <th scope="col">Account</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>${data.users.map((u) =>
              html`
                <tr>
                  <td>
                    <${Link} to=${`/user/${u.id}`} title=${u.id}>${u.first_name} ${u.last_name}</${Link}></td>
                  <td>${u.phone ?? 'erased'}</td><td>${u.kyc_tier}</td><td>${u.deleted_at
                    ? 'deleted'
                    : u.frozen
                    ? html`<strong>frozen</strong>`
                    : 'active'}</td>
                  <td>${lagosTime(u.created_at)}</td>
                </tr>
              `
            )}
            </tbody>
          </table>
        `}
        <h2>Escrows <span class="count">(${data.escrows.length})</span></h2>
        ${data.escrows.length === 0 ? html`<p>No escrow.</p>` : html`<${EscrowTable} escrows=${data.escrows} />`}
      `}
    </section>
  `;
}

function EscrowTable({ escrows }) {
  return html`
    <table>
      <thead>
        <tr><th scope="col">Escrow</th>${escrows[0]?.role && html`<th scope="col">Role</th>`}
        <th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Created</th></tr>
      </thead>
      <tbody>${escrows.map((e) =>
        html`
          <tr>
            <td>
              <${Link} to=${`/escrow/${e.id}`} title=${e.id}>Escrow ${shortId(e.id)}</${Link}></td>
            ${e.role && html`<td>${e.role}</td>`}
            <td>${words(e.status)}</td><td class="num">${naira(e.amount)}</td><td>${lagosTime(e.created_at)}</td>
          </tr>
        `
      )}
      </tbody>
    </table>
  `;
}

/** A form asking why the operator opens a record (kept in the audit with the read). */
function ReasonForm({ what, onReason, optional, label = 'Open' }) {
  const [reason, setReason] = useState('');
  return html`
    <form class="reason" onSubmit=${(e) => (e.preventDefault(), onReason(reason.trim()))}>
      <label for="reason">Why you open ${what}${optional ? ' (optional)' : ''}</label>
      <p class="hint" id="reason-hint">10 to 500 characters, kept in the audit with your name.</p>
      <textarea id="reason" name="reason" rows="2" minlength="10" maxlength="500" required=${!optional}
        aria-describedby="reason-hint" value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} />
      <div class="actions"><button type="submit">${label}</button></div>
    </form>
  `;
}

export function User({ id }) {
  const [reason, setReason] = useState(null);
  const { data, error, loading, reload } = useLoad(
    reason === null ? null : () => call('admin-user-get', { query: { user_id: id, reason } }),
    `${id} ${reason}`,
  );
  if (reason === null || (error && !data)) {
    return html`
      <section class="narrow">
        <${Title}>User ${shortId(id)}</${Title}>
        <p>Opening a user's record is recorded in the audit.</p>
        <${ReasonForm} what="this user's record" onReason=${setReason} />
        <${RefusalView} error=${error} />
      </section>
    `;
  }
  // a reload after an action keeps the record (and the action's answer) on the page while it loads
  if (!data || (loading && data.profile.id !== id)) return html`<${Loading} what="the user" />`;
  const p = data.profile;
  return html`
    <section>
      <${Title}>${p.first_name} ${p.last_name}</${Title}>
      ${data.frozen && html`
        <div class="banner"><strong>Frozen</strong> since ${`${
          lagosTime(data.frozen.since)
        }: ${data.frozen.reason}`}</div>
      `}
      <div class="grid">
        <dl class="facts">
          <dt>User id</dt><dd><code>${p.id}</code></dd>
          <dt>Phone</dt><dd>${p.deleted_at ? `erased (account deleted ${lagosTime(p.deleted_at)})` : p.phone}</dd>
          <dt>KYC tier</dt><dd>${p.kyc_tier}</dd>
          <dt>Since</dt><dd>${lagosTime(p.created_at)}</dd>
          <dt>Live sessions</dt><dd>${data.active_sessions}</dd>
          <dt>Operator roles</dt><dd>${data.operator_roles.length ? data.operator_roles.join(', ') : 'none'}</dd>
        </dl>
        <dl class="facts">
          <dt>Wallet balance</dt><dd>${naira(data.wallet.balance)}</dd>
          <dt>Held in escrows they pay</dt><dd>${naira(data.wallet.in_escrow)}</dd>
          <dt>Payouts not settled</dt><dd>${naira(data.wallet.pending_payouts)}</dd>
          <dt>Account</dt><dd>${data.frozen ? 'frozen' : 'active'}</dd>
        </dl>
      </div>
      <h2>KYC checks</h2>
      ${data.kyc_checks.length === 0 ? html`<p>None.</p>` : html`
        <table>
          <thead>
            <tr>
              <th scope="col">Check</th>
              <th scope="col">Status</th>
              <th scope="col">Number</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>${data.kyc_checks.map((k) =>
            html`
              <tr>
                <td>${words(k.type)}</td>
                <td>${words(k.status)}</td>
                <td>${k.id_number ?? '—'}</td>
                <td>${lagosTime(k.updated_at)}</td>
              </tr>
            `
          )}</tbody>
        </table>
      `}
      <h2>Escrows</h2>
      ${data.escrows.length === 0 ? html`<p>None.</p>` : html`<${EscrowTable} escrows=${data.escrows} />`}
      <h2>Transactions</h2>
      ${data.transactions.length === 0 ? html`<p>None.</p>` : html`
        <table>
          <thead>
            <tr>
              <th scope="col">Transaction</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col" class="num">Amount</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>${data.transactions.map((t) =>
            html`
              <tr>
                <td><code title=${t.id}>${shortId(t.id)}</code></td>
                <td>${words(t.kind)}</td>
                <td>${words(t.status)}${t.held_for_review ? ', ' : ''}${t.held_for_review &&
                  html`<strong>held for review</strong>`}</td>
                <td class="num">${naira(t.amount)}</td>
                <td>${lagosTime(t.created_at)}</td>
              </tr>
            `
          )}</tbody>
        </table>
      `}
      <h2>Open disputes</h2>
      ${data.open_disputes.length === 0 ? html`<p>None.</p>` : html`
        <ul>${data.open_disputes.map((d) =>
          html`
            <li>${words(d.status)} since ${lagosTime(d.created_at)} on
              <${Link} to=${`/escrow/${d.escrow_id}`}>escrow ${shortId(d.escrow_id)}</${Link}></li>
          `
        )}</ul>
      `}
      <h2>Payout accounts and cards</h2>
      <ul>
        ${data.payout_accounts.map((a) =>
          html`
            <li>${a.bank_name} ${a.account_number}${a.is_default ? ' (default)' : ''}${a.verified
              ? ''
              : ', not verified'}</li>
          `
        )}
        ${data.cards.map((c) => html`<li>${c.brand} card ending ${c.last4}${c.is_default ? ' (default)' : ''}</li>`)}
        ${data.payout_accounts.length + data.cards.length === 0 && html`<li>None.</li>`}
      </ul>
      ${data.merchants.length > 0 && html`
        <h2>Merchants</h2>
        <ul>${data.merchants.map((m) => html`<li>${m.name} (${m.status})</li>`)}</ul>
      `}
      <${SmsList} sms=${data.sms} reload=${reload} />
      <${UserActions} data=${data} reload=${reload} />
    </section>
  `;
}

/** A held charge's figures: what was expected and what the provider reported taking. */
const heldFigures = (t) =>
  t.review?.received_amount !== null && t.review?.received_amount !== undefined
    ? `${naira(t.review.expected_amount ?? t.amount)} expected, the provider reported ${
      naira(t.review.received_amount)
    }`
    : naira(t.amount);

/** Kinds of SMS the API never resends (it answers 409 sms_one_time_code). */
const ONE_TIME = new Set(['otp_code', 'account_exists']);

/**
 * The latest SMS to the user's phone (never their text), each with a Resend form for support
 * (admin-sms-resend: the same text again, to the same phone).
 */
function SmsList({ sms, reload }) {
  const resend = admits('admin-sms-resend');
  return html`
    <h2>SMS to their phone <span class="count">(the ${sms.length} latest)</span></h2>
    ${sms.length === 0 ? html`<p>None.</p>` : html`
      <table class="sms">
        <thead>
          <tr>
            <th scope="col">SMS</th>
            <th scope="col">About</th>
            <th scope="col">Status</th>
            <th scope="col">Queued</th>
            <th scope="col">Sent</th>
            <th scope="col" class="num">Resends</th>
            ${resend && html`<th scope="col">Send again</th>`}
          </tr>
        </thead>
        <tbody>${sms.map((m) =>
          html`
            <tr key=${m.id} data-sms=${m.id}>
              <td><code>${m.id}</code>${m.resend_of !== null &&
                html`<br /><span class="hint">resends ${m.resend_of}</span>`}</td>
              <td>${words(m.kind)}</td>
              <td>${words(m.status)}${m.withheld ? html`<br /><span class="hint">${words(m.withheld)}</span>` : ''}</td>
              <td>${lagosTime(m.created_at)}</td>
              <td>${lagosTime(m.sent_at)}</td>
              <td class="num">${m.resends} of 3</td>
              ${resend && html`
                <td class="resend">
                  <${ActionForm} id=${`sms-${m.id}`} title="Resend" endpoint="admin-sms-resend" submit="Resend"
                    body=${(_v, reason) => ({ sms_id: m.id, reason })}
                    done=${(r) =>
                      html`Queued again as SMS <code class="new-sms">${r.sms_id}</code> (resend ${r.resends} of 3).`}
                    onDone=${reload} />
                  ${ONE_TIME.has(m.kind) && html`<span class="hint">One-time codes are not resent.</span>`}
                </td>
              `}
            </tr>
          `
        )}</tbody>
      </table>
    `}
  `;
}

/** The transactions an operator can act on: charges held for review, failed payouts. */
const PAYOUT_KINDS = new Set(['withdrawal', 'escrow_payout']);

function UserActions({ data, reload }) {
  const p = data.profile;
  // an operator when the page opened: the revoke form stays (with its answer) after the last role goes
  const [wasOperator] = useState(data.operator_roles.length > 0);
  const held = data.transactions.filter((t) => t.held_for_review);
  const failed = data.transactions.filter((t) => PAYOUT_KINDS.has(t.kind) && t.status === 'failed');
  const user = (_values, reason) => ({ user_id: p.id, reason });
  const roleSelect = (id, roles) => (values, set) =>
    html`
      <label for=${`${id}-role`}>Role</label>
      <select id=${`${id}-role`} name="role" required value=${values.role ?? ''} onChange=${set('role')}>
        <option value="" disabled>Choose a role</option>
        ${roles.map((r) => html`<option value=${r}>${r}</option>`)}
      </select>
    `;
  return html`
    <h2>Actions</h2>
    <p class="hint">The actions your roles admit, each with who may perform it; the API checks your roles again.</p>
    ${held.length + failed.length > 0 && (admits('admin-charge-resolve') || admits('admin-payout-retry')) && html`
      <h3>Held charges and failed payouts</h3>
      ${held.map((t) =>
        html`
          <${ActionForm} id=${`charge-${t.id}`} title=${`Resolve the held charge ${shortId(t.id)} (${
            heldFigures(t)
          })`} endpoint="admin-charge-resolve" submit="Resolve the charge"
            body=${(_v, reason) => ({ transaction_id: t.id, reason })}
            done=${(r) =>
              `The provider says ${r.provider_status}, ${naira(r.verified_amount)} of ${
                naira(r.expected_amount)
              } expected: ${words(r.outcome)}.`}
            onDone=${reload} />
        `
      )}
      ${failed.map((t) =>
        html`
          <${ActionForm} id=${`payout-${t.id}`} title=${`Retry the failed payout ${shortId(t.id)} (${
            naira(t.amount)
          })`} endpoint="admin-payout-retry" submit="Retry the payout"
            body=${(_v, reason) => ({ transaction_id: t.id, reason })}
            done=${(r) => `A new payout ${shortId(r.transaction_id)} of ${naira(r.amount)}: ${words(r.status)}.`}
            onDone=${reload} />
        `
      )}
    `}
    ${(admits('admin-user-freeze') || admits('admin-session-revoke')) && html`<h3>The account</h3>`}
    ${data.frozen
      ? html`
        <${ActionForm} id="unfreeze" title="Unfreeze the account"
          endpoint="admin-user-unfreeze" submit="Unfreeze" body=${user}
          done=${(r) => `Unfrozen at ${lagosTime(r.unfrozen_at)}.`} onDone=${reload} />
      `
      : html`
        <${ActionForm} id="freeze" title="Freeze the account" endpoint="admin-user-freeze" submit="Freeze"
          body=${user} done=${(r) => `Frozen since ${lagosTime(r.frozen_at)}.`} onDone=${reload} />
      `}
    <${ActionForm} id="sessions" title="End the user's sessions" endpoint="admin-session-revoke"
      submit="End the sessions" body=${user} done=${(r) => `${r.sessions_ended} session(s) ended.`} onDone=${reload} />
    ${admits('admin-role-grant') && html`<h3>Operator roles and second factor</h3>`}
    <${ActionForm} id="grant" title="Grant a role" endpoint="admin-role-grant"
      submit="Grant" fields=${roleSelect('grant', ['support', 'finance', 'disputes', 'admin'])}
      body=${(v, reason) => ({ user_id: p.id, role: v.role, reason })} done=${() => 'Granted.'} onDone=${reload} />
    ${(data.operator_roles.length > 0 || wasOperator) && html`
      <${ActionForm} id="revoke" title="Revoke a role" endpoint="admin-role-revoke" submit="Revoke"
        fields=${roleSelect('revoke', data.operator_roles)}
        body=${(v, reason) => ({ user_id: p.id, role: v.role, reason })}
        done=${(r) => `Revoked ${r.role}; roles left: ${r.roles.length ? r.roles.join(', ') : 'none'}.`}
        onDone=${reload} />
      <${ActionForm} id="reset" title="Reset the second factor"
        endpoint="admin-totp-reset" submit="Reset the factor" body=${user} done=${() => 'Reset.'} onDone=${reload} />
    `}
  `;
}

const party = (
  p,
) => (p
  ? html`<${Link} to=${`/user/${p.id}`} title=${p.id}>${p.first_name} ${p.last_name}</${Link}>`
  : 'no account yet');

/** The escrow's events, transfers, payouts and dispute steps in one list, oldest first. */
function timeline(data) {
  const rows = [];
  for (const e of data.events) {
    rows.push({ at: e.occurred_at, what: `${e.kind} event`, detail: e.status ? words(e.status) : '' });
  }
  for (const t of data.transfers) {
    rows.push({ at: t.created_at, what: `ledger: ${words(t.kind)}`, detail: `hold ${signedNaira(t.hold_change)}` });
  }
  for (const p of data.payouts) {
    rows.push({ at: p.created_at, what: 'payout started', detail: `${naira(p.amount)}, ${words(p.status)}` });
  }
  const d = data.dispute;
  if (d) {
    rows.push({ at: d.created_at, what: 'dispute raised', detail: words(d.reason_code) });
    for (const p of d.proposals) {
      rows.push({
        at: p.created_at,
        what: 'dispute proposal',
        detail: `${words(p.outcome)}${p.payee_amount !== null ? ` ${naira(p.payee_amount)} to the payee` : ''}, ${
          words(p.status)
        }`,
      });
    }
    if (d.escalated_at) rows.push({ at: d.escalated_at, what: 'dispute escalated', detail: '' });
    if (d.resolved_at) rows.push({ at: d.resolved_at, what: 'dispute resolved', detail: words(d.outcome) });
  }
  return rows.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

const OUTCOMES = [
  ['release', 'Release: everything held goes to the payee'],
  ['refund', 'Refund: everything held goes back to the payer'],
  ['split', 'Split: the payee gets the amount below, the payer the rest'],
];

/** admin-dispute-resolve: the outcome, a split's amount for the payee, the resolution (the reason). */
function ResolveDispute({ dispute, held, onDone }) {
  return html`
    <${ActionForm} id="resolve" title="Resolve the dispute" endpoint="admin-dispute-resolve"
      submit="Resolve" open=${dispute.status === 'escalated'} initial=${{ outcome: 'split' }}
      reasonLabel="Resolution (the parties are told it)" reasonMax=${2000}
      fields=${(v, set) =>
        html`
          <fieldset>
            <legend>Outcome</legend>
            ${OUTCOMES.map(([value, label]) =>
              html`
                <label class="choice"><input type="radio" name="outcome" value=${value} checked=${v.outcome === value}
                  onChange=${set('outcome')} /> ${label}</label>
              `
            )}
          </fieldset>
          ${v.outcome === 'split' && html`
            <label for="resolve-amount">The payee's share, naira</label>
            <p class="hint" id="resolve-amount-hint">Up to 2 decimals; less than the ${naira(held)} held.</p>
            <input id="resolve-amount" name="payee_amount" type="number" min="0.01" step="0.01" required class="amount"
              aria-describedby="resolve-amount-hint" value=${v.payee_amount ?? ''} onInput=${set('payee_amount')} />
          `}
        `}
      body=${(v, resolution) => ({
        dispute_id: dispute.id,
        outcome: v.outcome,
        ...(v.outcome === 'split' ? { payee_amount: Number(v.payee_amount) } : {}),
        resolution,
      })}
      done=${(r) => `Resolved: ${words(r.outcome ?? r.status)}.`}
      onDone=${onDone} />
  `;
}

export function Escrow({ id }) {
  const [reason, setReason] = useState('');
  const { data, error, loading, reload } = useLoad(
    () => call('admin-escrow-get', { query: { escrow_id: id, reason: reason || undefined } }),
    `${id} ${reason}`,
  );
  if (loading && !data) return html`<${Loading} what="the escrow" />`;
  if (!data) {
    return html`
      <section>
        <${Title}>Escrow ${shortId(id)}</${Title}><${RefusalView} error=${error} /></section>
    `;
  }
  const e = data.escrow;
  return html`
    <section>
      <${Title}>Escrow: ${e.title}</${Title}>
      <${RefusalView} error=${error} />
      <div class="grid">
        <dl class="facts">
          <dt>Escrow id</dt><dd><code>${e.id}</code></dd>
          <dt>Status</dt><dd><strong>${words(e.status)}</strong></dd>
          <dt>Category</dt><dd>${words(e.category)}</dd>
          <dt>Payer</dt><dd>${party(data.payer)}</dd>
          <dt>Payee</dt><dd>${party(data.payee)}</dd>
          <dt>Created</dt><dd>${lagosTime(e.created_at)}</dd>
        </dl>
        <dl class="facts">
          <dt>Amount</dt><dd>${naira(e.amount)}</dd>
          <dt>Payer's fee and VAT</dt><dd>${naira(e.payer_fee)} + ${naira(e.vat)}</dd>
          <dt>Total charged</dt><dd>${naira(e.total_charge)}</dd>
          <dt>Seller's fee</dt><dd>${naira(e.seller_fee)}</dd>
          <dt>Released</dt><dd>${naira(e.released_amount)}</dd>
          <dt>Held now</dt><dd><strong>${naira(e.held)}</strong></dd>
        </dl>
      </div>
      ${data.milestones.length > 0 && html`
        <h2>Milestones</h2>
        <table>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Title</th>
              <th scope="col" class="num">Amount</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>${data.milestones.map((m) =>
            html`
              <tr>
                <td>${m.index}</td>
                <td>${m.title}</td>
                <td class="num">${naira(m.amount)}</td>
                <td>${words(m.status)}</td>
              </tr>
            `
          )}
          </tbody>
        </table>
      `}
      <h2>Timeline</h2>
      <table class="timeline">
        <thead><tr><th scope="col">When (Lagos)</th><th scope="col">What</th><th scope="col">Detail</th></tr></thead>
        <tbody>${timeline(data).map((r) =>
          html`
            <tr>
              <td>${lagosTime(r.at)}</td>
              <td>${r.what}</td>
              <td>${r.detail}</td>
            </tr>
          `
        )}
        </tbody>
      </table>
      <h2>Ledger transfers</h2>
      ${data.transfers.length === 0
        ? html`<p>None: no money has entered the escrow's hold.</p>`
        : data.transfers.map((t) =>
          html`
            <table class="transfer">
              <caption>${words(t.kind)}, ${lagosTime(t.created_at)}: hold ${signedNaira(t.hold_change)}</caption>
              <thead>
                <tr>
                  <th scope="col">Account</th>
                  <th scope="col">Owner</th>
                  <th scope="col" class="num">Amount</th>
                </tr>
              </thead>
              <tbody>${t.entries.map((en) =>
                html`
                  <tr>
                    <td>${words(en.account)}</td>
                    <td>${en.owner_id ? html`<code title=${en.owner_id}>${shortId(en.owner_id)}</code>` : '—'}</td>
                    <td class="num">${signedNaira(en.amount)}</td>
                  </tr>
                `
              )}</tbody>
            </table>
          `
        )}
      ${data.payouts.length > 0 && html`
        <h2>Payouts</h2>
        <table>
          <thead>
            <tr>
              <th scope="col">Payout</th>
              <th scope="col">Status</th>
              <th scope="col" class="num">Amount</th>
              <th scope="col">Started</th>
              <th scope="col">Completed</th>
            </tr>
          </thead>
          <tbody>${data.payouts.map((p) =>
            html`
              <tr>
                <td><code title=${p.id}>${shortId(p.id)}</code></td>
                <td>${words(p.status)}</td>
                <td class="num">${naira(p.amount)}</td>
                <td>${lagosTime(p.created_at)}</td>
                <td>${lagosTime(p.completed_at)}</td>
              </tr>
            `
          )}</tbody>
        </table>
      `}
      ${data.dispute && html`
        <h2>Dispute</h2>
        <dl class="facts">
          <dt>Status</dt>
          <dd>${words(data.dispute.status)}</dd>
          <dt>Reason</dt>
          <dd>${words(data.dispute.reason_code)}${data.dispute.reason ? `: ${data.dispute.reason}` : ''}</dd>
          <dt>Outcome</dt>
          <dd>${data.dispute.outcome ? words(data.dispute.outcome) : 'not resolved'}${data.dispute.payee_amount !== null
            ? `, ${naira(data.dispute.payee_amount)} to the payee`
            : ''}</dd>
        </dl>
        ${(data.dispute.status === 'negotiation' || data.dispute.status === 'escalated') && html`
          <${ResolveDispute} dispute=${data.dispute} held=${e.held} onDone=${reload} />
        `}
      `}
      <h2>Messages</h2>
      ${data.messages.content_shown
        ? html`<ul class="messages">${
          data.messages.items.map((m) =>
            html`
              <li><span class="hint">${lagosTime(m.created_at)}, ${shortId(m.sender_id)}:</span> ${m.content}</li>
            `
          )
        }
            ${data.messages.count === 0 && html`<li>None.</li>`}</ul>`
        : html`
          <p>${data.messages.count} message(s) in the conversation. They are shown while a dispute is open, or
            when you state why you read them.</p>
          <${ReasonForm} what="the conversation" label="Show the messages" onReason=${setReason} />
        `}
    </section>
  `;
}
