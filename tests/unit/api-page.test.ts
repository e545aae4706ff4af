// The API reference page's static folder, docs/api/ (scripts/lib/api-page.ts): the committed files
// are what `npm run docs:api` builds from the installed swagger-ui-dist, none of them loads
// anything from elsewhere, and the local server's route serves them (the page in a real browser:
// tests/integration/api-reference.test.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  API_PAGE_FILES,
  apiPageDir,
  apiPageResponse,
  buildApiPage,
  configScript,
  DOCUMENT_FILE,
  LOCAL_DOCUMENT_URL,
  LOCAL_PAGE_PATH,
} from '../../scripts/lib/api-page.ts';

const built = buildApiPage();
const committed = (name: string) => readFileSync(new URL(name, apiPageDir), 'utf8');

describe('docs/api/, the API reference page', () => {
  it('is what `npm run docs:api` builds (run it after changing scripts/lib/api-page.ts or swagger-ui-dist)', () => {
    const missing = [...built.keys()].filter((name) => !existsSync(new URL(name, apiPageDir)));
    const stale = [...built].filter(([name, text]) => !missing.includes(name) && committed(name) !== text)
      .map(([name]) => name);
    const extra = readdirSync(apiPageDir).filter((name) => name !== DOCUMENT_FILE && !built.has(name));
    expect({ missing, stale, extra }).toEqual({ missing: [], stale: [], extra: [] });
    expect([...built.keys()].sort()).toEqual([...API_PAGE_FILES].sort());
  });

  it('reads ./openapi.json next to it', () => {
    expect(built.get('config.js')).toBe(configScript('./openapi.json'));
    expect(built.get('index.html')).toContain('<script src="./config.js"></script>');
  });

  it('names nothing outside its folder: no URL in its own files, system fonts and data: images only in the style', () => {
    for (const name of ['index.html', 'config.js', 'reference.js', 'index.css']) {
      expect(built.get(name), name).not.toMatch(/\b(https?:)?\/\/[a-z0-9]/i);
    }
    const css = built.get('swagger-ui.css') as string;
    expect(css).not.toMatch(/@import|@font-face/);
    expect([...css.matchAll(/url\(\s*["']?([^"')]*)/g)].map((m) => m[1]).filter((u) => !u?.startsWith('data:')))
      .toEqual([]);
    expect(built.get('reference.js')).toContain('validatorUrl: null');
    expect(built.get('reference.js')).toContain('queryConfigEnabled: false');
    expect(built.get('index.html')).toMatch(
      /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self'; style-src 'self';/,
    );
  });
});

describe(`the local server's ${LOCAL_PAGE_PATH}`, () => {
  const at = (path: string, method = 'GET') => apiPageResponse(new Request(`http://127.0.0.1${path}`, { method }));

  it('redirects the bare path to the folder, so the relative URLs resolve under it', async () => {
    const r = await at(LOCAL_PAGE_PATH);
    expect(r?.status).toBe(308);
    expect(r?.headers.get('location')).toBe(`${LOCAL_PAGE_PATH}/`);
  });

  it('answers the page and its files from docs/api/ with their types', async () => {
    const page = await at(`${LOCAL_PAGE_PATH}/`);
    expect(page?.status).toBe(200);
    expect(page?.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page?.text()).toBe(committed('index.html'));
    const css = await at(`${LOCAL_PAGE_PATH}/swagger-ui.css`);
    expect(css?.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await css?.text()).toBe(committed('swagger-ui.css'));
    const head = await at(`${LOCAL_PAGE_PATH}/reference.js`, 'HEAD');
    expect([head?.status, head?.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
  });

  it("points the page at the service's own document, /functions/v1/openapi", async () => {
    const r = await at(`${LOCAL_PAGE_PATH}/config.js`);
    expect(await r?.text()).toBe(configScript(LOCAL_DOCUMENT_URL));
    expect(new URL(LOCAL_DOCUMENT_URL, `http://h${LOCAL_PAGE_PATH}/`).pathname).toBe('/functions/v1/openapi');
  });

  it('answers nothing else: other names, the folder document, other folders, other methods', async () => {
    for (const path of ['openapi.json', 'nope.js', '..%2Fopenapi.json', 'sub/index.html', '.gitignore']) {
      expect((await at(`${LOCAL_PAGE_PATH}/${path}`))?.status, path).toBe(404);
    }
    expect((await at(`${LOCAL_PAGE_PATH}/`, 'POST'))?.status).toBe(405);
    expect(await at('/functions/v1/docsx')).toBeUndefined();
    expect(await at('/functions/v1/profile-get')).toBeUndefined();
  });
});
