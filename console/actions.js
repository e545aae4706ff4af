// The operator's actions as forms: each one folded under its name (a <details>), with the fields it
// needs and its reason (10-500 characters, kept in the audit), the role that may perform it, and
// what the API answered: the result, the refusal (message, code, status), or, for a 202, the
// approval that waits for a second operator. A form is shown only to an operator holding one of the
// roles its endpoint admits (roles.js, written from the endpoints by `npm run gen`; the operator's
// roles as the second factor's pass answered them). The API checks them again: an operator whose
// role was taken since reads its 403 operator_role_required.
import { useState } from './vendor/hooks.mjs';
import { act, mayAct } from './api.js';
import ENDPOINTS from './roles.js';
import { lagosTime } from './format.js';
import { html, RefusalView } from './ui.js';

/** The approval of a 202, as the operator who asked reads it. */
export function Waiting({ approval }) {
  return html`
    <div class="waiting" role="status">
      <p><strong>Waiting for a second operator</strong> (${approval.roles.join(' or ')}) to approve it on${' '}
        <a href="#/approvals">the approvals page</a>, before ${lagosTime(approval.expires_at)}.</p>
      <p>Approval <code class="approval-id">${approval.id}</code></p>
    </div>
  `;
}

/** Whether the operator signed in may call `endpoint` (any operator when it names no role). */
export function admits(endpoint) {
  const needed = ENDPOINTS[endpoint]?.roles;
  return needed === null || needed === undefined || mayAct(needed);
}

/** Who may perform an action, in words: "finance; may wait for a second operator". */
function whoMay(endpoint) {
  const e = ENDPOINTS[endpoint];
  if (!e) return 'any operator';
  return `${e.roles ? e.roles.join(' or ') : 'any operator'}${e.fourEyes ? '; may wait for a second operator' : ''}`;
}

/**
 * One action's form, or nothing for an operator whose roles the endpoint does not admit. `id` prefixes the fields' ids (several forms share a page); `fields` renders
 * the action's own fields (reading and setting `values`); `body(values, reason)` makes the request;
 * `done(data)` words a 200's result; `onDone` runs after a 200 (the page reloads its record).
 * `reasonName` and `reasonMax` are for admin-dispute-resolve, whose reason is its `resolution`.
 */
export function ActionForm(
  {
    id,
    title,
    endpoint,
    fields,
    body,
    done,
    onDone,
    submit = title,
    open = false,
    reasonLabel = 'Reason',
    reasonMax = 500,
    initial = {},
  },
) {
  const [values, setValues] = useState(initial);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState(null);
  if (!admits(endpoint)) return null;
  const set = (k) => (e) => setValues((v) => ({ ...v, [k]: e.currentTarget.value }));
  const run = async (e) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setOutcome(null);
    try {
      const r = await act(endpoint, body(values, reason.trim()));
      setOutcome(r.status === 202 ? { approval: r.data.approval } : { data: r.data });
      if (r.status !== 202) {
        setReason('');
        onDone?.(r.data);
      }
    } catch (err) {
      setOutcome({ error: err });
    } finally {
      setBusy(false);
    }
  };
  return html`
    <details class="action" open=${open} id=${id}>
      <summary>${title} <span class="hint">(${whoMay(endpoint)})</span></summary>
      <form onSubmit=${run}>
        ${fields?.(values, set, setValues)}
        <label for=${`${id}-reason`}>${reasonLabel}</label>
        <p class="hint" id=${`${id}-reason-hint`}>10 to ${reasonMax} characters, kept in the audit with your name.</p>
        <textarea id=${`${id}-reason`} name="reason" rows="2" minlength="10" maxlength=${reasonMax} required
          aria-describedby=${`${id}-reason-hint`} value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} />
        <div class="actions"><button type="submit" disabled=${busy}>${submit}</button></div>
      </form>
      <div aria-live="polite">
        ${outcome?.error && html`<${RefusalView} error=${outcome.error} />`}
        ${outcome?.approval && html`<${Waiting} approval=${outcome.approval} />`}
        ${outcome?.data && html`<p class="done" role="status"><strong>Done.</strong> ${done(outcome.data)}</p>`}
      </div>
    </details>
  `;
}
