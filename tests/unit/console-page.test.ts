// The operator console's static folder, console/ (scripts/lib/console-page.ts): the vendored
// preact and htm are what `npm run gen` copies from the installed packages, the console's own files
// name nothing outside the folder but the API that config.js names, and the local server's
// /console/ route serves exactly these files with the console's headers (the console in a real
// browser: tests/integration/console.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  buildVendor,
  configModule,
  CONSOLE_FILES,
  consoleCsp,
  consoleDir,
  consoleHeaders,
  consoleResponse,
  LOCAL_API_BASE,
  LOCAL_CONSOLE_PATH,
  STATIC_API_BASE,
  VENDOR_FILES,
  vendorDir,
} from '../../scripts/lib/console-page.ts';

const own = (name: string) => readFileSync(new URL(name, consoleDir), 'utf8');

describe('console/, the operator console', () => {
  it('vendors what `npm run gen` copies from node_modules, and nothing else', () => {
    const built = buildVendor();
    expect(readdirSync(vendorDir).sort()).toEqual([...built.keys()].sort());
    expect([...built.keys()].sort()).toEqual([...VENDOR_FILES].sort());
    for (const [name, text] of built) expect(readFileSync(new URL(name, vendorDir), 'utf8'), name).toBe(text);
    // every import of a module is a relative file: a browser resolves no package name
    for (const name of VENDOR_FILES.filter((n) => n.endsWith('.mjs'))) {
      const specifiers = [...(built.get(name) as string).matchAll(/from\s*"([^"]+)"/g)].map((m) => m[1]);
      expect(specifiers.every((s) => s?.startsWith('./')), `${name}: ${specifiers}`).toBe(true);
    }
  });

  it('has its own files and the vendored ones only', () => {
    const files = readdirSync(consoleDir).filter((n) => n !== 'vendor').sort();
    expect(files).toEqual([...CONSOLE_FILES].sort());
  });

  it('names no other site: no URL in its files but the API base of config.js', () => {
    for (const name of CONSOLE_FILES.filter((n) => n !== 'config.js')) {
      expect(own(name), name).not.toMatch(/\b(https?:)?\/\/[a-z0-9]/i);
    }
    expect(own('config.js')).toBe(configModule(STATIC_API_BASE));
    expect(own('console.css')).not.toMatch(/@import|@font-face|url\(/);
    expect(own('index.html')).toMatch(
      /<meta http-equiv="Content-Security-Policy"\s+content="script-src 'self'; style-src 'self';/,
    );
    expect(own('index.html')).not.toMatch(/<script(?![^>]*\bsrc=)/);
  });
});

describe(`the local server's ${LOCAL_CONSOLE_PATH}/`, () => {
  const at = (path: string, method = 'GET') => consoleResponse(new Request(`http://127.0.0.1${path}`, { method }));

  it('redirects the bare path to the folder', async () => {
    const r = await at(LOCAL_CONSOLE_PATH);
    expect([r?.status, r?.headers.get('location')]).toEqual([308, `${LOCAL_CONSOLE_PATH}/`]);
  });

  it("serves the page, its modules and the vendored ones, with the console's CSP, nosniff and no framing", async () => {
    const page = await at(`${LOCAL_CONSOLE_PATH}/`);
    expect(page?.status).toBe(200);
    expect(page?.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page?.text()).toBe(own('index.html'));
    expect(page?.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(page?.headers.get('x-content-type-options')).toBe('nosniff');
    const hooks = await at(`${LOCAL_CONSOLE_PATH}/vendor/hooks.mjs`);
    expect([hooks?.status, hooks?.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
  });

  it("points the console at the same server's functions", async () => {
    expect(await (await at(`${LOCAL_CONSOLE_PATH}/config.js`))?.text()).toBe(configModule(LOCAL_API_BASE));
  });

  it('answers nothing else', async () => {
    for (const path of ['nope.js', 'vendor/preact.mjs.map', '..%2Fpackage.json', 'vendor/../app.js.map', '.git']) {
      expect((await at(`${LOCAL_CONSOLE_PATH}/${path}`))?.status, path).toBe(404);
    }
    expect((await at(`${LOCAL_CONSOLE_PATH}/`, 'POST'))?.status).toBe(405);
    expect(await at('/consoles')).toBeUndefined();
    expect(await at('/functions/v1/admin-search')).toBeUndefined();
  });
});

describe('docs/operators.md, "The console"', () => {
  const docs = readFileSync(new URL('../../docs/operators.md', import.meta.url), 'utf8');
  const shotsDir = new URL('../../docs/console/', import.meta.url);
  const suite = readFileSync(new URL('../integration/console.test.ts', import.meta.url), 'utf8');
  /** The screenshots the browser suite takes: checkAndShoot(<page>, '<name>'). */
  const taken = [...suite.matchAll(/checkAndShoot\([a-z.]*page, '([a-z0-9-]+)'\)/gi)].map((m) => m[1]!);
  /** Every page of the console, and an action form: each must have its picture in the doc. */
  const PAGES = ['sign-in', 'enrol', 'queues', 'search', 'user', 'escrow', 'approvals', 'audit', 'charge-waiting'];

  /** The width and height of a PNG file (its IHDR chunk). */
  const pngSize = (bytes: Uint8Array) => {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    expect([...bytes.subarray(1, 4)].map((b) => String.fromCharCode(b)).join('')).toBe('PNG');
    return [view.getUint32(16), view.getUint32(20)];
  };

  it('shows a screenshot of every page, taken by the browser suite at 1366x768', () => {
    for (const page of PAGES) expect(taken, `console.test.ts takes no screenshot named ${page}`).toContain(page);
    for (const name of taken) {
      const file = new URL(`${name}.png`, shotsDir);
      let bytes: Uint8Array;
      try {
        bytes = readFileSync(file);
      } catch {
        throw new Error(
          `docs/console/${name}.png is missing: CONSOLE_SCREENSHOTS=update npx vitest run tests/integration/console.test.ts`,
        );
      }
      expect(pngSize(bytes), `docs/console/${name}.png`).toEqual([1366, 768]);
      expect(docs, `docs/operators.md does not show console/${name}.png`).toMatch(
        new RegExp(`!\\[[^\\]]+\\]\\(console/${name}\\.png\\)`),
      );
    }
  });

  it('shows no picture the suite does not take, and every picture it names exists', () => {
    const files = readdirSync(shotsDir).filter((n) => n.endsWith('.png')).map((n) => n.slice(0, -4));
    expect(files.filter((f) => !taken.includes(f)), 'pictures in docs/console/ no test takes').toEqual([]);
    const named = [...docs.matchAll(/\]\(console\/([a-z0-9-]+)\.png\)/g)].map((m) => m[1]!);
    expect(named.filter((n) => !files.includes(n)), 'pictures docs/operators.md names that do not exist').toEqual([]);
  });

  it("names CORS_ALLOW_ORIGIN and the headers the console's host must send, as the local server sends them", () => {
    const hosting = docs.slice(docs.indexOf('### Hosting the console'));
    expect(hosting).toContain('`CORS_ALLOW_ORIGIN`');
    const api = 'https://<project>.supabase.co';
    const headers = consoleHeaders(api);
    expect(hosting).toContain(`\`Content-Security-Policy: ${consoleCsp(api)}\``);
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(hosting).toContain(`\`X-Content-Type-Options: ${headers['x-content-type-options']}\``);
    expect(hosting).toContain(`\`Referrer-Policy: ${headers['referrer-policy']}\``);
  });
});
