// A real headless browser for the tests: Chromium from the npm package @sparticuz/chromium (the
// browser ships inside the package, Brotli-compressed; nothing is downloaded at install or test
// time), driven by puppeteer-core. Both are pinned in package.json to versions whose engines admit
// Node 20 (tests/unit/engines.test.ts), puppeteer-core to the one made for that Chromium's version.
//
// The package extracts Chromium (and its fonts and graphics libraries) to the temporary folder on
// first use, under fixed names, and reuses whatever it finds there. So it extracts here into a
// staging folder of this process, which is then renamed to a folder named after the package's
// version: a folder of that name is always whole, another version's never reused, and two suites
// extracting at once each rename their own (the loser's is removed).
//
// Also here: watchPage, which records what a page does wrong (console errors, uncaught errors,
// failed requests, requests to anything but this machine), and serveStatic, a static file server on
// 127.0.0.1 for pages built as files.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

const chromiumVersion = (
  JSON.parse(readFileSync(new URL('../../node_modules/@sparticuz/chromium/package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

// Flags of @sparticuz/chromium meant for AWS Lambda that would hide what a browser refuses: the
// tests want the same-origin rules and mixed-content blocking a reader's browser applies.
const DROPPED_FLAGS = new Set(['--disable-web-security', '--allow-running-insecure-content']);

/**
 * The fonts.conf of the extracted Chromium in `at`, for the folder `dir`: the package's names
 * /tmp/fonts; this one names the fonts it extracted (Open Sans only) and then the system's, where
 * it has some: Open Sans has no naira sign (₦), which the operator console's pages show. Rewritten
 * (whole, by a rename) only when it says something else.
 */
function writeFontsConf(at: string, dir: string): void {
  const text = `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
    `  <dir>${dir}/fonts</dir>\n  <dir>/usr/share/fonts</dir>\n  <dir>/usr/local/share/fonts</dir>\n` +
    `  <cachedir>${dir}/fonts-cache</cachedir>\n</fontconfig>\n`;
  const file = join(at, 'fonts.conf');
  if (existsSync(file) && readFileSync(file, 'utf8') === text) return;
  const temporary = `${file}.${process.pid}`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/** The folder holding this version's extracted Chromium, extracting it first if needed. */
async function chromiumDir(): Promise<string> {
  const dir = join(tmpdir(), `escrow-chromium-${chromiumVersion}`);
  if (existsSync(join(dir, 'chromium'))) {
    writeFontsConf(dir, dir);
    return dir;
  }
  const staging = mkdtempSync(join(tmpdir(), `escrow-chromium-${chromiumVersion}-staging-`));
  const savedTmp = process.env.TMPDIR;
  try {
    // the package extracts into os.tmpdir(), which follows TMPDIR
    process.env.TMPDIR = staging;
    await chromium.executablePath();
  } finally {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
  }
  writeFontsConf(staging, dir);
  try {
    renameSync(staging, dir);
  } catch (err) {
    // another process renamed its own first: use that one
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(join(dir, 'chromium'))) throw err;
  }
  return dir;
}

/** Headless Chromium. Close it when done (one launch per test file: it takes a second or two). */
export async function launchBrowser(): Promise<Browser> {
  const dir = await chromiumDir();
  chromium.setGraphicsMode = false; // no WebGL: no GPU emulation to start
  const args = chromium.args.filter((a) => !DROPPED_FLAGS.has(a));
  return puppeteer.launch({
    executablePath: join(dir, 'chromium'),
    args,
    headless: 'shell',
    defaultViewport: { width: 1280, height: 900 },
    env: { ...process.env, FONTCONFIG_FILE: join(dir, 'fonts.conf') },
  });
}

export interface PageProblems {
  /** console.error messages and uncaught exceptions */
  errors: string[];
  /** requests that failed, or were answered with a status of 400 or more */
  failed: string[];
  /** requests to a host other than this machine (127.0.0.1, ::1, localhost) */
  offMachine: string[];
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Records what goes wrong on the page from now on (read the returned lists after loading). */
export function watchPage(page: Page): PageProblems {
  const problems: PageProblems = { errors: [], failed: [], offMachine: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') problems.errors.push(`console: ${m.text()} (${m.location().url ?? ''})`);
  });
  page.on('pageerror', (e) => problems.errors.push(`uncaught: ${e instanceof Error ? e.message : String(e)}`));
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.protocol === 'data:') return;
    if (!(url.protocol === 'http:' || url.protocol === 'https:') || !LOOPBACK.has(url.hostname)) {
      problems.offMachine.push(r.url());
    }
  });
  page.on('requestfailed', (r) => problems.failed.push(`${r.url()}: ${r.failure()?.errorText ?? 'failed'}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.failed.push(`${r.url()}: ${r.status()}`);
  });
  return problems;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  png: 'image/png',
  css: 'text/css; charset=utf-8',
  json: 'application/json',
  txt: 'text/plain; charset=utf-8',
};

/**
 * Serves the files of a folder and its subfolders on 127.0.0.1, a free port; `/` is index.html. No
 * name starting with a dot, no `..`. `headers` are sent with every file; `files` answers some names
 * with a text of their own instead of the file (a config pointing at the test server).
 */
export async function serveStatic(
  dir: URL,
  opts: { headers?: Record<string, string>; files?: Record<string, string> } = {},
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.slice(1)) || 'index.html';
    if (name.split('/').some((part) => part === '' || part.startsWith('.'))) {
      res.writeHead(404).end();
      return;
    }
    const type = { 'content-type': TYPES[name.split('.').pop() ?? ''] ?? 'application/octet-stream' };
    const own = opts.files?.[name];
    if (own !== undefined) {
      res.writeHead(200, { ...type, ...opts.headers }).end(own);
      return;
    }
    readFile(new URL(name, dir)).then(
      (body) => res.writeHead(200, { ...type, ...opts.headers }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
