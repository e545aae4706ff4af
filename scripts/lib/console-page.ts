// The operator console: a static web app in console/ (index.html, plain ES modules, a style sheet)
// that calls the operator API from the operator's browser. There is no build step: the modules are
// the files, and the two libraries it uses, preact and htm (npm packages pinned in package.json),
// are copied from node_modules into console/vendor/ with their licences by `npm run gen`
// (scripts/gen.ts), which `npm run gen -- --check` finds stale when the installed packages change.
// The only change made to a copied file: preact's hooks import preact by its package name, which a
// browser cannot resolve without an import map (an inline script, which the CSP forbids), so the
// copy imports ./preact.mjs instead.
//
// Locally, scripts/lib/server.ts serves the folder at /console/ (consoleResponse), except
// config.js, which points the console at the same server's /functions/v1. In production the
// console is hosted as static files on an origin of its own, with config.js naming the API's base
// URL, CORS_ALLOW_ORIGIN naming the console's origin, and the headers of consoleHeaders().
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

const root = new URL('../../', import.meta.url);
export const consoleDir = new URL('console/', root);
export const vendorDir = new URL('console/vendor/', root);
/** The console's address on the local server; its files are under it. */
export const LOCAL_CONSOLE_PATH = '/console';
/** The API base the local server's config.js names: the same server's functions. */
export const LOCAL_API_BASE = '/functions/v1';
/**
 * The API base the committed console/config.js names: `npm start`'s functions on their default
 * port, so the folder served by any static server on this machine works with a local service. A
 * deployment replaces the file with its API's base URL.
 */
export const STATIC_API_BASE = 'http://127.0.0.1:54321/functions/v1';

/** Files copied from node_modules: path in node_modules -> name in console/vendor/. */
const VENDORED: Record<string, string> = {
  'preact/dist/preact.mjs': 'preact.mjs',
  'preact/hooks/dist/hooks.mjs': 'hooks.mjs',
  'htm/dist/htm.mjs': 'htm.mjs',
  'preact/LICENSE': 'preact.LICENSE.txt',
  'htm/LICENSE': 'htm.LICENSE.txt',
};

/** The console's own files (not generated), served as they are; config.js is answered locally. */
export const CONSOLE_FILES: readonly string[] = [
  'index.html',
  'config.js',
  'roles.js',
  'console.css',
  'app.js',
  'api.js',
  'format.js',
  'signin.js',
  'pages.js',
  'actions.js',
  'review.js',
  'ui.js',
];

/**
 * console/roles.js, written by `npm run gen` from the operator endpoints' declarations: the roles
 * each endpoint admits (none: any operator), and whether it may answer 202 (four eyes). The
 * console shows an action's form only to an operator holding one of its roles; the endpoint
 * checks them again on every call.
 */
export function rolesModule(
  endpoints: readonly { name: string; roles: readonly string[] | null; fourEyes: boolean }[],
): string {
  const rows = [...endpoints].sort((a, b) => a.name.localeCompare(b.name)).map((e) =>
    `  '${e.name}': { roles: ${
      e.roles ? `[${e.roles.map((r) => `'${r}'`).join(', ')}]` : 'null'
    }, fourEyes: ${e.fourEyes} },`
  );
  return `// Written by \`npm run gen\` (scripts/lib/console-page.ts) from the operator endpoints: the roles
// each one admits (null: any operator) and whether it may wait for a second operator (a 202).
// The console shows an action only to an operator holding one of its roles; the API decides.
export default {
${rows.join('\n')}
};
`;
}

/**
 * The Content-Security-Policy of the console, for a host whose API is at `apiOrigin` (the local
 * server: 'self'). Scripts, styles and images from the console's own origin only (images also as
 * data: URLs: the QR code of the TOTP enrolment is shown as one), requests to the API only, no
 * framing, no plugins, no forms posted anywhere, no <base>.
 */
export function consoleCsp(apiOrigin: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${apiOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The headers every file of the console is served with, by the local server and by a static host. */
export function consoleHeaders(apiOrigin: string): Record<string, string> {
  return {
    'content-security-policy': consoleCsp(apiOrigin),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-cache',
  };
}

function vendorSource(path: string): string {
  return readFileSync(new URL(`node_modules/${path}`, root), 'utf8');
}

/** The installed versions of the vendored packages (package.json pins them exactly). */
export function vendoredVersions(): { preact: string; htm: string } {
  const version = (name: string) => (JSON.parse(vendorSource(`${name}/package.json`)) as { version: string }).version;
  return { preact: version('preact'), htm: version('htm') };
}

/** A copied module without its source-map comment (the maps are not copied). */
function withoutSourceMap(text: string): string {
  return text.replace(/\n?\/[/*]# sourceMappingURL=[^\n]*\s*$/, '\n');
}

/** console/vendor/ as `npm run gen` writes it: file name -> text. */
export function buildVendor(): Map<string, string> {
  const out = new Map<string, string>();
  for (const [from, to] of Object.entries(VENDORED)) {
    let text = vendorSource(from);
    if (to.endsWith('.mjs')) {
      text = withoutSourceMap(text);
      // the one bare specifier in these files: preact, imported by its hooks
      text = text.replace(/from\s*"preact"/g, 'from"./preact.mjs"');
      if (/from\s*"[^./]/.test(text)) throw new Error(`${from} imports a package by name: the browser cannot load it`);
    }
    out.set(to, text);
  }
  return out;
}

/** The names buildVendor() writes, without reading the packages (what the local server may serve). */
export const VENDOR_FILES: readonly string[] = Object.values(VENDORED);

/** config.js: where the console finds the API (a URL, absolute or relative to the console's page). */
export function configModule(apiBase: string): string {
  return `// Where the operator console finds the operator API: the base URL of the functions, absolute, or
// relative to the console's page. A deployment replaces this file with its API's URL (docs/operators.md,
// "The console"); the local server (npm start) answers its own, naming ${LOCAL_API_BASE}.
export default { apiBase: '${apiBase.replace(/[\\']/g, (c) => `\\${c}`)}' };
`;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
};

/**
 * The local server's answer for the console and its files under LOCAL_CONSOLE_PATH, read from
 * console/ at each request; undefined for any other path. GET /console redirects to /console/ so
 * that the page's relative URLs resolve under it. Only the console's files and the vendored ones
 * are served.
 */
export async function consoleResponse(req: Request): Promise<Response | undefined> {
  const url = new URL(req.url);
  if (url.pathname !== LOCAL_CONSOLE_PATH && !url.pathname.startsWith(`${LOCAL_CONSOLE_PATH}/`)) return undefined;
  const headers = consoleHeaders("'self'");
  const text = (status: number, body: string, more: Record<string, string> = {}) =>
    new Response(body, { status, headers: { 'content-type': TYPES.txt as string, ...headers, ...more } });
  if (req.method !== 'GET' && req.method !== 'HEAD') return text(405, 'method not allowed\n', { allow: 'GET, HEAD' });
  if (url.pathname === LOCAL_CONSOLE_PATH) {
    return new Response(null, {
      status: 308,
      headers: { location: `${LOCAL_CONSOLE_PATH}/${url.search}`, ...headers },
    });
  }
  const name = url.pathname.slice(LOCAL_CONSOLE_PATH.length + 1) || 'index.html';
  const vendored = name.startsWith('vendor/') && VENDOR_FILES.includes(name.slice('vendor/'.length));
  if (!vendored && !CONSOLE_FILES.includes(name)) return text(404, 'not found\n');
  let body: string;
  try {
    body = name === 'config.js' ? configModule(LOCAL_API_BASE) : await readFile(new URL(name, consoleDir), 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOENT') throw err;
    return text(404, `console/${name} is missing${vendored ? ': run `npm run gen`' : ''}\n`);
  }
  const type = TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? TYPES.txt as string;
  return new Response(req.method === 'HEAD' ? null : body, { headers: { 'content-type': type, ...headers } });
}
