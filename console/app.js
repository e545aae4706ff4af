// The operator console's shell: the header with its navigation and the operator's phone, and the
// page of the address's hash (#/queues, #/search, #/user/<id>, #/escrow/<id>, #/approvals, #/audit). Hash addresses
// work on any static host. Without a session holding a second-factor pass, every address shows
// the sign-in.
import { render } from './vendor/preact.mjs';
import { useEffect, useState } from './vendor/hooks.mjs';
import { onSession, passed, roles, session, signOut } from './api.js';
import { html } from './ui.js';
import { admits } from './actions.js';
import { SignIn } from './signin.js';
import { Escrow, Queues, Search, User } from './pages.js';
import { Approvals, Audit } from './review.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

function route(hash) {
  const path = hash.replace(/^#/, '') || '/queues';
  let m;
  if (path === '/queues') return { page: 'queues' };
  if (path === '/search') return { page: 'search' };
  if (path === '/approvals') return { page: 'approvals' };
  if (path === '/audit') return { page: 'audit' };
  if ((m = new RegExp(`^/user/(${UUID})$`, 'i').exec(path))) return { page: 'user', id: m[1] };
  if ((m = new RegExp(`^/escrow/(${UUID})$`, 'i').exec(path))) return { page: 'escrow', id: m[1] };
  return { page: 'missing', path };
}

function App() {
  const [hash, setHash] = useState(location.hash);
  const [, setSession] = useState(session());
  useEffect(() => {
    const onHash = () => setHash(location.hash);
    addEventListener('hashchange', onHash);
    const off = onSession(setSession);
    return () => (removeEventListener('hashchange', onHash), off());
  }, []);
  const s = session();
  const signedIn = passed(s);
  const r = route(hash);
  document.title = `${
    signedIn
      ? {
        queues: 'Queues',
        search: 'Search',
        user: 'User',
        escrow: 'Escrow',
        approvals: 'Approvals',
        audit: 'Audit log',
      }[r.page] ?? 'Not found'
      : 'Sign in'
  } · Escrow console`;

  const nav = (to, label, page) =>
    html`<a href=${`#${to}`} aria-current=${r.page === page ? 'page' : undefined}>${label}</a>`;
  return html`
    <a class="skip" href="#main" onClick=${(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
      Skip to the page</a>
    <header>
      <span class="brand">Escrow console</span>
      ${signedIn && html`
        <nav aria-label="Pages">${nav('/queues', 'Queues', 'queues')} ${nav('/search', 'Search', 'search')}
          ${nav('/approvals', 'Approvals', 'approvals')} ${admits('admin-audit-list') &&
            nav('/audit', 'Audit log', 'audit')}</nav>
        <span class="who">${s.user.phone} <span class="roles" title="Your operator roles">(${roles(s).join(
          ', ',
        )})</span>
          <button type="button" class="secondary" onClick=${() => signOut().then(() => (location.hash = '#/queues'))}>
            Sign out</button></span>
      `}
    </header>
    <main id="main" tabindex="-1">
      ${!signedIn
        ? html`<${SignIn} onPassed=${() => setHash(location.hash)} />`
        : r.page === 'queues'
        ? html`<${Queues} />`
        : r.page === 'search'
        ? html`<${Search} />`
        : r.page === 'user'
        ? html`<${User} key=${r.id} id=${r.id} />`
        : r.page === 'escrow'
        ? html`<${Escrow} key=${r.id} id=${r.id} />`
        : r.page === 'approvals'
        ? html`<${Approvals} />`
        : r.page === 'audit'
        ? html`<${Audit} />`
        : html`
          <section>
            <h1>Not found</h1>
            <p>No page at ${r.path}. <a href="#/queues">The queues</a>.</p>
          </section>
        `}
    </main>
  `;
}

render(html`<${App} />`, document.getElementById('app'));
