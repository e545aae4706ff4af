// The pages that look back at operators' work: the approvals waiting for a second operator
// (admin-approval-list; approve or reject with a reason through admin-approval-decide, which
// performs the action when it approves) and the audit log (admin-audit-list, admins only).
import { useState } from './vendor/hooks.mjs';
import { act, call } from './api.js';
import { lagosTime, naira, shortId, words } from './format.js';
import { html, Link, Loading, RefusalView, Title, useLoad } from './ui.js';

const target = (type, id) =>
  type === 'user'
    ? html`<${Link} to=${`/user/${id}`} title=${id}>user ${shortId(id)}</${Link}>`
    : html`${words(type)} <code title=${id}>${shortId(id)}</code>`;

/** One approval, with the second operator's decision when it is pending. */
function Approval({ a }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState(null);
  const decide = (decision) => async (e) => {
    e.preventDefault();
    // Approve submits the form (checked by the browser); Reject is a plain button: checked here
    const form = e.currentTarget.form ?? e.currentTarget;
    if (busy || !form.reportValidity()) return;
    setBusy(true);
    setOutcome(null);
    try {
      const r = await act('admin-approval-decide', { approval_id: a.id, decision, reason: reason.trim() });
      setOutcome({ data: r.data });
    } catch (err) {
      setOutcome({ error: err });
    } finally {
      setBusy(false);
    }
  };
  const id = `approval-${a.id}`;
  return html`
    <article class="approval" aria-labelledby=${`${id}-title`} data-approval=${a.id}>
      <h2 id=${`${id}-title`}>${a.action}${a.amount !== null ? `, ${naira(a.amount)}` : ''}${' '}
        <span class="hint">${words(a.status)}</span></h2>
      <dl class="facts">
        <dt>On</dt><dd>${target(a.target_type, a.target_id)}</dd>
        <dt>Who may approve</dt><dd>${a.roles.join(' or ')}, not the operator who asked</dd>
        <dt>Asked by</dt><dd><code title=${a.requested_by}>${shortId(a.requested_by)}</code>, ${lagosTime(
          a.requested_at,
        )}</dd>
        <dt>Their reason</dt><dd>${a.reason}</dd>
        ${a.status === 'pending'
          ? html`
            <dt>Expires</dt>
            <dd>${lagosTime(a.expires_at)}</dd>
          `
          : html`
            <dt>Decided</dt>
            <dd>${a.decided_at ? lagosTime(a.decided_at) : '—'}${a.decision_reason ? `: ${a.decision_reason}` : ''}</dd>
          `}
        <dt>Approval id</dt><dd><code>${a.id}</code></dd>
      </dl>
      ${a.status === 'pending' && !outcome?.data && html`
        <form onSubmit=${decide('approve')}>
          <label for=${`${id}-reason`}>Your reason</label>
          <p class="hint" id=${`${id}-hint`}>10 to 500 characters, kept in the audit with your name.</p>
          <textarea id=${`${id}-reason`} name="reason" rows="2" minlength="10" maxlength="500" required
            aria-describedby=${`${id}-hint`} value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} />
          <div class="actions">
            <button type="submit" disabled=${busy}>Approve</button>
            <button type="button" class="secondary" disabled=${busy} onClick=${decide('reject')}>Reject</button>
          </div>
        </form>
      `}
      <div aria-live="polite">
        ${outcome?.error && html`<${RefusalView} error=${outcome.error} />`}
        ${outcome?.data && html`
          <p class="done" role="status"><strong>${outcome.data.status === 'approved'
            ? 'Approved and performed.'
            : `${words(outcome.data.status)}.`}</strong></p>
        `}
      </div>
    </article>
  `;
}

/** Approvals asked for per page (the API's largest page). */
const PAGE = 50;

export function Approvals() {
  const [status, setStatus] = useState('pending');
  const [pages, setPages] = useState([]);
  const [more, setMore] = useState({ error: null, busy: false, done: false });
  const query = (after) => ({ status: status || undefined, limit: PAGE, after });
  const { data, error, loading, reload } = useLoad(() => call('admin-approval-list', { query: query() }), status);
  const rows = [...(data ?? []), ...pages.flat()];
  const lastPage = pages.length ? pages[pages.length - 1] : data;
  const restart = (fn) => () => (setPages([]), setMore({ error: null, busy: false, done: false }), fn());
  const next = async () => {
    setMore({ error: null, busy: true, done: false });
    try {
      const page = await call('admin-approval-list', { query: query(rows[rows.length - 1]?.id) });
      setPages((p) => [...p, page]);
      setMore({ error: null, busy: false, done: page.length < PAGE });
    } catch (err) {
      setMore({ error: err, busy: false, done: false });
    }
  };
  return html`
    <section>
      <${Title}>Approvals</${Title}>
      <p>Actions that wait for a second operator: one holding a role the action needs, with 24 hours of tenure, who did
        not ask for it. Approving performs the action. Pending ones first, oldest first.</p>
      <div class="actions">
        <label for="approval-status" class="inline">Show</label>
        <select id="approval-status" value=${status} onChange=${(
          e,
        ) => (setPages([]), setMore({ error: null, busy: false, done: false }), setStatus(e.currentTarget.value))}>
          <option value="pending">pending</option>
          <option value="approved">approved</option>
          <option value="rejected">rejected</option>
          <option value="expired">expired</option>
          <option value="">all</option>
        </select>
        <button type="button" class="secondary" onClick=${restart(reload)}>Refresh</button>
      </div>
      <${RefusalView} error=${error} />
      ${loading && !data
        ? html`<${Loading} what="the approvals" />`
        : data && (rows.length === 0 ? html`<p>None.</p>` : rows.map((a) => html`<${Approval} key=${a.id} a=${a} />`))}
      <${RefusalView} error=${more.error} />
      ${data && !loading && lastPage?.length === PAGE && !more.done && html`
        <div class="actions"><button type="button" class="secondary more" disabled=${more.busy} onClick=${next}>
          More (${rows.length} shown)</button></div>
      `}
    </section>
  `;
}

const facts = (f) =>
  Object.entries(f).map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join(', ');

export function Audit() {
  const [filter, setFilter] = useState({});
  const [form, setForm] = useState({ operator_id: '', target_id: '', action: '' });
  const [pages, setPages] = useState([]);
  const [more, setMore] = useState({ error: null, busy: false });
  const query = (after) => ({ ...filter, limit: 50, after });
  const { data, error, loading } = useLoad(() => call('admin-audit-list', { query: query() }), JSON.stringify(filter));
  const rows = [...(data ?? []), ...pages.flat()];
  const set = (k) => (e) => setForm((f) => ({ ...f, [k]: e.currentTarget.value }));
  const apply = (e) => {
    e.preventDefault();
    setPages([]);
    setFilter(Object.fromEntries(Object.entries(form).map(([k, v]) => [k, v.trim()]).filter(([, v]) => v)));
  };
  const older = async () => {
    setMore({ error: null, busy: true });
    try {
      const next = await call('admin-audit-list', { query: query(rows[rows.length - 1]?.id) });
      setPages((p) => [...p, next]);
      setMore({ error: null, busy: false, done: next.length < 50 });
    } catch (err) {
      setMore({ error: err, busy: false });
    }
  };
  return html`
    <section>
      <${Title}>Audit log</${Title}>
      <p>What operators did and opened, newest first, with their reasons. Only admins read it.</p>
      <form class="filters" onSubmit=${apply}>
        <div><label for="audit-operator">Operator id</label>
          <input id="audit-operator" value=${form.operator_id} onInput=${set('operator_id')} /></div>
        <div><label for="audit-target">Target id</label>
          <input id="audit-target" value=${form.target_id} onInput=${set('target_id')} /></div>
        <div><label for="audit-action">Action</label>
          <input id="audit-action" value=${form.action} placeholder="role.grant" onInput=${set('action')} /></div>
        <div class="actions"><button type="submit">Filter</button></div>
      </form>
      <${RefusalView} error=${error} />
      ${loading && !data ? html`<${Loading} what="the audit" />` : data && html`
        <table class="audit">
          <thead>
            <tr>
              <th scope="col">When (Lagos)</th>
              <th scope="col">Operator</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Reason</th>
              <th scope="col">Facts</th>
            </tr>
          </thead>
          <tbody>${rows.map((r) =>
            html`
              <tr>
                <td>${lagosTime(r.created_at)}</td>
                <td>
                  <${Link} to=${`/user/${r.operator_id}`} title=${r.operator_id}>${shortId(
                    r.operator_id,
                  )}</${Link}></td>
                <td><code>${r.action}</code></td>
                <td>${r.target_id ? target(r.target_type, r.target_id) : '—'}</td>
                <td>${r.reason ?? '—'}</td>
                <td class="facts">${facts(r.facts)}</td>
              </tr>
            `
          )}</tbody>
        </table>
        ${rows.length === 0 && html`<p>No row.</p>`}
        <${RefusalView} error=${more.error} />
        ${rows.length > 0 && rows.length % 50 === 0 && !more.done && html`
          <div class="actions"><button type="button" class="secondary" disabled=${more.busy} onClick=${older}>
            Older rows</button></div>
        `}
      `}
    </section>
  `;
}
