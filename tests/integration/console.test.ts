// The operator console (console/, served by the local server at /console/) in a real headless
// browser (support/browser.ts) against the real server: an operator signs in as every user does (the
// SMS code read from the outbox, the password), enrols the second factor on the page (its code
// computed from the otpauth URI the page shows) and passes it; reads the queues; finds a customer by
// a 0-prefixed phone; opens the customer's record with a reason, then an escrow's timeline and its
// ledger transfers. One operator does it all with the keyboard only. On every page: no console
// error, no failed request, no request leaving the machine, and axe-core finds no serious or
// critical violation. The screenshots of docs/operators.md ("The console") are taken here, at
// 1366x768: into docs/console/ when CONSOLE_SCREENSHOTS=update, else into .data/console-screenshots/
// (ignored by git), so that a test run leaves the working tree as it was.
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Browser, Page } from 'puppeteer-core';
import { launchBrowser, type PageProblems, watchPage } from '../support/browser.ts';
import { lastOtp, smsCount, testDb } from '../support/db.ts';
import { fundedDeal } from '../support/escrows.ts';
import { codeAt, grantRoles, newOperator, secretOf } from '../support/operators.ts';
import { signUp, type TestUser } from '../support/users.ts';

const AXE = readFileSync(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');
const SHOTS = new URL(
  process.env.CONSOLE_SCREENSHOTS === 'update' ? '../../docs/console/' : '../../.data/console-screenshots/',
  import.meta.url,
);
const VIEWPORT = { width: 1366, height: 768 };

let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
});

const consoleUrl = () => new URL('/console/', inject('baseUrl')).href;

/**
 * A tab of its own (sessionStorage, which holds the session, is per tab), at 1366x768, watched.
 * (The browser runs as one process, --single-process of @sparticuz/chromium: a second browser
 * context closes its connection.)
 */
async function openConsole(): Promise<{ page: Page; problems: PageProblems; close: () => Promise<void> }> {
  const page = await browser.newPage();
  await page.setViewport(VIEWPORT);
  const problems = watchPage(page);
  await page.goto(consoleUrl(), { waitUntil: 'load' });
  const close = () => page.close();
  return { page, problems, close };
}

/** axe-core's serious and critical violations on the page as it is now (none expected). */
async function axeViolations(page: Page): Promise<string[]> {
  // evaluated through the DevTools protocol, which the page's CSP does not govern
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const axe = (globalThis as any).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return (r.violations as { id: string; impact: string; nodes: { target: string[] }[] }[])
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  return found;
}

/** Checks the page as it is (axe-core) and saves its screenshot as <name>.png in SHOTS. */
async function checkAndShoot(page: Page, name: string): Promise<void> {
  expect(await axeViolations(page), `axe on ${name}`).toEqual([]);
  await page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname as `${string}.png` });
}

const heading = (page: Page, text: string) =>
  page.waitForFunction((t) => document.querySelector('h1')?.textContent?.includes(t), { timeout: 15_000 }, text);

const textOf = (page: Page) => page.evaluate(() => document.querySelector('main')?.innerText ?? '');

/** Waits for the login SMS sent after `before` messages, and answers its code. */
async function loginCode(phone: string, before: number): Promise<string> {
  for (let i = 0; i < 100; i++) {
    if ((await smsCount(phone)) > before) return await lastOtp(phone);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no login SMS for ${phone}`);
}

/** Lets the phone ask for a new code now (the once-a-minute limit of auth-send-otp). */
async function allowCode(phone: string): Promise<void> {
  await testDb()`update private.rate_limit_events set created_at = created_at - interval '61 seconds'
                 where key = ${`otp:resend:${phone}`}`;
}

const local = (phone: string) => `0${phone.slice(4)}`;

/** A customer with a funded escrow, paying it: what the operator looks up. */
async function customerWithEscrow(): Promise<{ customer: TestUser; escrowId: string }> {
  const deal = await fundedDeal();
  return { customer: deal.payer, escrowId: deal.escrowId };
}

describe('the operator console', () => {
  it('an operator enrols TOTP and signs in, reads the queues, finds a user by phone and opens an escrow timeline', async () => {
    const operator = await signUp({ first_name: 'Ngozi', last_name: 'Eze', tier: 3 });
    await grantRoles(operator, ['support']);
    const { customer, escrowId } = await customerWithEscrow();
    const { page, problems, close } = await openConsole();
    try {
      await heading(page, 'Sign in');
      await checkAndShoot(page, 'sign-in');
      await allowCode(operator.phone);
      const before = await smsCount(operator.phone);
      await page.type('#phone', local(operator.phone));
      await page.click('button[type=submit]');
      await page.waitForSelector('#otp');
      await page.type('#otp', await loginCode(operator.phone, before));
      await page.type('#password', operator.password);
      await page.click('button[type=submit]');

      await heading(page, 'Second factor');
      await page.click('xpath///button[contains(., "Set up an authenticator")]');
      await page.waitForSelector('#otpauth-uri');
      const uri = await page.$eval('#otpauth-uri', (el) => el.textContent ?? '');
      expect(uri).toMatch(/^otpauth:\/\/totp\/.+secret=[A-Z2-7]+/);
      expect(await page.$eval('img.qr', (img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
      await checkAndShoot(page, 'enrol');
      await page.type('#totp', await codeAt(secretOf(uri)));
      await page.click('xpath///button[normalize-space()="Verify"]');

      await heading(page, 'Queues');
      await page.waitForSelector('main table tbody tr');
      const queues = await textOf(page);
      expect(queues).toContain('Disputes escalated');
      expect(queues).toContain('Charges held for review');
      await checkAndShoot(page, 'queues');

      await page.click('xpath///nav//a[normalize-space()="Search"]');
      await heading(page, 'Search');
      await page.type('#q', local(customer.phone));
      await page.click('xpath///main//button[normalize-space()="Search"]');
      await page.waitForSelector(`main a[href="#/user/${customer.id}"]`);
      expect(await textOf(page)).toContain(customer.phone);
      await checkAndShoot(page, 'search');

      await page.click(`main a[href="#/user/${customer.id}"]`);
      await page.waitForSelector('#reason');
      await page.type('#reason', 'The customer called about a funded escrow.');
      await page.click('xpath///main//button[normalize-space()="Open"]');
      await page.waitForSelector(`main a[href="#/escrow/${escrowId}"]`);
      const record = await textOf(page);
      expect(record).toContain(customer.phone);
      expect(record).toMatch(/Wallet balance\s+₦[0-9,]+\.[0-9]{2}/);
      await checkAndShoot(page, 'user');

      await page.click(`main a[href="#/escrow/${escrowId}"]`);
      await heading(page, 'Escrow:');
      await page.waitForSelector('table.transfer');
      const escrow = await textOf(page);
      expect(escrow).toContain('funded');
      expect(escrow).toMatch(/Held now\s+₦[0-9,]+\.[0-9]{2}/);
      expect(escrow).toMatch(/WAT/);
      expect(escrow).toContain('escrow event');
      await checkAndShoot(page, 'escrow');

      const audit = await testDb()<{ action: string; target_id: string | null; reason: string | null }[]>`
        select action, target_id, reason from private.admin_audit where admin_id = ${operator.id} order by id`;
      expect(audit.map((a) => a.action)).toEqual(['operator.grant', 'user.search', 'user.read', 'escrow.read']);
      expect(audit[2]).toMatchObject({ target_id: customer.id, reason: 'The customer called about a funded escrow.' });
      expect(problems).toEqual({ errors: [], failed: [], offMachine: [] });
    } finally {
      await close();
    }
  });

  it('with the keyboard only: signs in, searches, opens the user and their escrow', async () => {
    const operator = await newOperator(['finance']);
    const { customer, escrowId } = await customerWithEscrow();
    const { page, problems, close } = await openConsole();
    const k = page.keyboard;
    /** Tabs until the focused element matches `selector` (at most 40 presses); its outline must show. */
    const tabTo = async (selector: string) => {
      for (let i = 0; i < 40; i++) {
        await k.press('Tab');
        const hit = await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector);
        if (hit) {
          const outline = await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle);
          expect(outline, `focus ring on ${selector}`).not.toBe('none');
          return;
        }
      }
      throw new Error(`Tab never reached ${selector}`);
    };
    try {
      await heading(page, 'Sign in');
      await allowCode(operator.phone);
      const before = await smsCount(operator.phone);
      await tabTo('#phone');
      await k.type(operator.phone);
      await k.press('Enter');
      await page.waitForSelector('#otp');
      await tabTo('#otp');
      await k.type(await loginCode(operator.phone, before));
      await tabTo('#password');
      await k.type(operator.password);
      await k.press('Enter');
      await heading(page, 'Second factor');
      await tabTo('#totp');
      // the pass of newOperator used this step's code: the next step's is accepted (one step of drift)
      await k.type(await codeAt(operator.secret, 1));
      await k.press('Enter');
      await heading(page, 'Queues');

      await tabTo('nav a[href="#/search"]');
      await k.press('Enter');
      await heading(page, 'Search');
      await tabTo('#q');
      await k.type(customer.phone);
      await k.press('Enter');
      await page.waitForSelector(`main a[href="#/user/${customer.id}"]`);
      await tabTo(`main a[href="#/user/${customer.id}"]`);
      await k.press('Enter');
      await page.waitForSelector('#reason');
      await tabTo('#reason');
      await k.type('A keyboard check of the customer record.');
      await tabTo('main button[type=submit]');
      await k.press('Enter');
      await page.waitForSelector(`main a[href="#/escrow/${escrowId}"]`);
      await tabTo(`main a[href="#/escrow/${escrowId}"]`);
      await k.press('Enter');
      await heading(page, 'Escrow:');
      await page.waitForSelector('table.transfer');
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual({ errors: [], failed: [], offMachine: [] });
    } finally {
      await close();
    }
  });

  it('shows a refusal with its message, code and status', async () => {
    const operator = await signUp({ first_name: 'Bola', last_name: 'Ade', tier: 3 });
    await grantRoles(operator, ['support']);
    const { page, problems, close } = await openConsole();
    try {
      await heading(page, 'Sign in');
      await allowCode(operator.phone);
      const before = await smsCount(operator.phone);
      await page.type('#phone', operator.phone);
      await page.click('button[type=submit]');
      await page.waitForSelector('#otp');
      await page.type('#otp', await loginCode(operator.phone, before));
      await page.type('#password', 'not the password at all');
      await page.click('button[type=submit]');
      await page.waitForSelector('.refusal');
      const shown = await page.$eval('.refusal', (el) => (el as HTMLElement).innerText);
      expect(shown).toMatch(/code login_failed, HTTP 401/);
      expect(await axeViolations(page)).toEqual([]);
      // the refused request is the only one that failed
      expect(problems.failed.map((f) => new URL(f.split(': ')[0] as string).pathname)).toEqual([
        '/functions/v1/auth-verify',
      ]);
      expect([problems.errors.filter((e) => !/401/.test(e)), problems.offMachine]).toEqual([[], []]);
    } finally {
      await close();
    }
  });
});
