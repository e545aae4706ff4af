// What every page of the console shares: html (htm bound to preact's h), a refusal shown with its
// message, code and status, the page heading that takes the focus when a page opens (so a keyboard
// or screen-reader user starts at its top), and a loader hook for a page's API read.
import { h } from './vendor/preact.mjs';
import { useEffect, useLayoutEffect, useRef, useState } from './vendor/hooks.mjs';
import htm from './vendor/htm.mjs';
import { Refusal } from './api.js';

export const html = htm.bind(h);

/** A refusal (or any error) as the API worded it: the message, then the code and the status. */
export function RefusalView({ error }) {
  if (!error) return null;
  const r = error instanceof Refusal ? error : new Refusal(0, 'console_error', String(error?.message ?? error));
  return html`
    <div class="refusal" role="alert">
      <p><strong>${r.message}</strong></p>
      <p class="code">code <code>${r.code}</code>${r.status ? html`, HTTP ${r.status}` : ''}</p>
      ${r.details.length > 0 && html`
        <ul>${r.details.map((d) =>
          html`<li><code>${d.field}</code>: ${d.message}${d.code ? ` (${d.code})` : ''}</li>`
        )}</ul>
      `}
    </div>
  `;
}

/**
 * The page's h1, focused when the page opens: in the commit that shows it (a layout effect), so
 * that nothing typed after the page appears lands anywhere but where it was typed.
 */
export function Title({ children }) {
  const ref = useRef(null);
  useLayoutEffect(() => ref.current?.focus(), []);
  return html`<h1 tabindex="-1" ref=${ref}>${children}</h1>`;
}

/**
 * Runs `load` (an async function) when `key` changes: {data, error, loading, reload}. An answer
 * that arrives after the key changed again is dropped.
 */
export function useLoad(load, key) {
  const [state, setState] = useState({ data: null, error: null, loading: load !== null });
  const [round, setRound] = useState(0);
  useEffect(() => {
    if (load === null) return;
    let live = true;
    setState((s) => ({ ...s, error: null, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error) => live && setState({ data: null, error, loading: false }),
    );
    return () => (live = false);
  }, [key, round]);
  return { ...state, reload: () => setRound((n) => n + 1) };
}

/** A link to another page of the console (hash routes, so any static host serves them). */
export const Link = ({ to, children, title }) => html`<a href=${`#${to}`} title=${title}>${children}</a>`;

export const Loading = ({ what }) => html`<p class="loading" role="status">Loading ${what}…</p>`;
