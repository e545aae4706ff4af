// The API reference page (scripts/lib/api-page.ts) in a real headless browser (support/browser.ts):
// the static folder docs/api/ as production hosts it (served here from its files on 127.0.0.1), and
// the page the local server serves at /functions/v1/docs, which renders the running service's
// /functions/v1/openapi. Each must show every operation of docs/api/openapi.json (its method, path
// and operationId visible), with no console error, no failed request and no request leaving the
// machine, also once an operation with a body is opened (its schemas and examples rendered).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Browser } from 'puppeteer-core';
import { launchBrowser, serveStatic, watchPage } from '../support/browser.ts';
import { apiPageDir } from '../../scripts/lib/api-page.ts';

interface Operation {
  method: string;
  path: string;
  operationId: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const openapi = JSON.parse(readFileSync(new URL('openapi.json', apiPageDir), 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string; requestBody?: unknown }>>;
};
const byPath = (a: Operation, b: Operation) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`);
const operations: Operation[] = Object.entries(openapi.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => METHODS.includes(method))
    .map(([method, op]) => ({ method: method.toUpperCase(), path, operationId: op.operationId ?? '' }))
).sort(byPath);
// one operation with a request body, opened on each page: the most the renderer draws for one
const withBody = Object.values(openapi.paths).flatMap((item) => Object.values(item)).find((op) => op.requestBody)
  ?.operationId;

let browser: Browser;
let site: Awaited<ReturnType<typeof serveStatic>>;

beforeAll(async () => {
  [browser, site] = await Promise.all([launchBrowser(), serveStatic(apiPageDir)]);
});

afterAll(async () => {
  await Promise.all([browser?.close(), site?.close()]);
});

/** Loads the page, reads the operations it shows, and opens the operation `withBody`. */
async function render(url: string) {
  const page = await browser.newPage();
  const problems = watchPage(page);
  const requested: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  try {
    await page.goto(url, { waitUntil: 'load' });
    const landed = page.url();
    // on a timeout the comparisons below say what is missing, and `problems` why
    await page.waitForFunction(
      (n) => document.querySelectorAll('#swagger-ui .opblock').length >= n,
      { timeout: 20_000 },
      operations.length,
    ).catch(() => undefined);
    const shown = (await page.$$eval('#swagger-ui .opblock', (blocks) =>
      blocks.map((b) => {
        const text = (sel: string) => {
          const el = b.querySelector<HTMLElement>(sel);
          return el?.checkVisibility() ? el.innerText.replace(/\u200b/g, '').trim() : '';
        };
        return {
          method: text('.opblock-summary-method'),
          path: text('.opblock-summary-path'),
          operationId: text('.opblock-summary-operation-id'),
        };
      }))).sort(byPath);
    let opened = false;
    if (withBody) {
      const block = `#swagger-ui .opblock[id$="-${withBody}"]`;
      await page.click(`${block} .opblock-summary-control`);
      opened = await page.waitForSelector(`${block} .body-param, ${block} .responses-wrapper`, { timeout: 10_000 })
        .then(() => true, () => false);
    }
    return { landed, shown, opened, problems, requested };
  } finally {
    await page.close();
  }
}

describe('API reference page', () => {
  it('docs/api/openapi.json has operations, each with an operationId', () => {
    expect(operations.length).toBeGreaterThan(0);
    expect(operations.filter((o) => !o.operationId)).toEqual([]);
    expect(withBody).toBeDefined();
  });

  it('the static folder docs/api/ shows every operation, from its own files only', async () => {
    const r = await render(site.url);
    expect(r.problems).toEqual({ errors: [], failed: [], offMachine: [] });
    expect(r.requested).toContain(`${site.url}openapi.json`);
    expect(r.shown).toEqual(operations);
    expect(r.opened, `opening ${withBody} showed no request body or responses`).toBe(true);
  });

  describe('openapi', () => {
    it("GET /functions/v1/docs on the local server shows the running service's /functions/v1/openapi", async () => {
      const base = inject('baseUrl');
      const r = await render(`${base}/docs`);
      expect(r.landed).toBe(`${base}/docs/`);
      expect(r.problems).toEqual({ errors: [], failed: [], offMachine: [] });
      expect(r.requested).toContain(`${base}/openapi`);
      expect(r.shown).toEqual(operations);
      expect(r.opened, `opening ${withBody} showed no request body or responses`).toBe(true);
    });
  });
});
