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
import { launchBrowser, type PageProblems, serveStatic, watchPage } from '../support/browser.ts';
import { configModule, consoleDir, consoleHeaders } from '../../scripts/lib/console-page.ts';
import { expectOk as ok, get, post } from '../support/api.ts';
import { fundWallet } from '../support/escrows.ts';
import { addPayout } from '../support/payouts.ts';
import adminUserFreeze from '../../supabase/functions/admin-user-freeze/handler.ts';
import adminUserUnfreeze from '../../supabase/functions/admin-user-unfreeze/handler.ts';
import profileGet from '../../supabase/functions/profile-get/handler.ts';
import walletWithdraw from '../../supabase/functions/wallet-withdraw/handler.ts';
import { expectLedgerInvariants, lastOtp, smsCount, testDb } from '../support/db.ts';
import { raise } from '../support/disputes.ts';
import { fundedDeal } from '../support/escrows.ts';
import { holdKobo, walletKobo } from '../support/ledger.ts';
import { codeAt, grantRoles, newOperator, secretOf, type TestOperator } from '../support/operators.ts';
import { paystack } from '../support/paystack.ts';
import { signUp, type TestUser } from '../support/users.ts';
import walletTopup from '../../supabase/functions/wallet-topup/handler.ts';
import messageSend from '../../supabase/functions/message-send/handler.ts';

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
async function openConsole(
  inBrowser: Browser = browser,
): Promise<{ page: Page; problems: PageProblems; close: () => Promise<void> }> {
  const page = await inBrowser.newPage();
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

/**
 * Signs `op` in on the page (phone, SMS code, password, authenticator code) and waits for the
 * queues. newOperator's own pass used this step's code: the next step's is accepted once.
 */
async function signInAs(page: Page, op: TestOperator): Promise<void> {
  await heading(page, 'Sign in');
  await allowCode(op.phone);
  const before = await smsCount(op.phone);
  await page.type('#phone', op.phone);
  await page.click('button[type=submit]');
  await page.waitForSelector('#otp');
  await page.type('#otp', await loginCode(op.phone, before));
  await page.type('#password', op.password);
  await page.click('button[type=submit]');
  await heading(page, 'Second factor');
  await page.type('#totp', await codeAt(op.secret, 1));
  await page.click('xpath///button[normalize-space()="Verify"]');
  await heading(page, 'Queues');
}

const go = (page: Page, hash: string) => page.evaluate((h) => (location.hash = h), hash);

/** Opens a user's record on the page with a reason. */
async function openUser(page: Page, userId: string): Promise<void> {
  await go(page, `#/user/${userId}`);
  await page.waitForSelector('#reason');
  await page.type('#reason', 'Checking the account for the console test.');
  await page.click('xpath///main//button[normalize-space()="Open"]');
  await page.waitForSelector('xpath///main//h2[normalize-space()="Actions"]');
}

/** Opens the action folded under `summary` (its start), types the reason, submits with `button`. */
async function perform(page: Page, formId: string, reason: string, button: string): Promise<void> {
  const open = await page.$eval(`details#${formId}`, (d) => (d as HTMLDetailsElement).open);
  if (!open) await page.click(`details#${formId} summary`);
  await page.type(`#${formId}-reason`, reason);
  await page.click(`xpath///details[@id="${formId}"]//button[normalize-space()="${button}"]`);
}

const okProblems = { errors: [], failed: [], offMachine: [] };

/** The failed requests of a page, by path and status (the server's origin dropped). */
const failedPaths = (problems: PageProblems) => problems.failed.map((f) => f.replace(/^https?:\/\/[^/]+/, ''));

/** Tabs until the focused element matches `selector` (at most `max` presses); its focus ring must show. */
async function tabTo(page: Page, selector: string, max = 80): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const hit = await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector);
    if (hit) {
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle);
      expect(outline, `focus ring on ${selector}`).not.toBe('none');
      return;
    }
  }
  throw new Error(`Tab never reached ${selector}`);
}

/** The session the console keeps in the tab's sessionStorage. */
const storedSession = (page: Page) =>
  page.evaluate(() => JSON.parse(sessionStorage.getItem('escrow-console.session') ?? 'null')) as Promise<
    { access_token: string; refresh_token: string; expires_at: number; roles: string[] } | null
  >;

/** Two admins: the second has held the role for 25 hours, so may approve the first's requests. */
async function twoAdmins(): Promise<[TestOperator, TestOperator]> {
  const [first, second] = await Promise.all([newOperator(['admin']), newOperator(['admin'])]);
  await testDb()`update private.operators set granted_at = now() - interval '25 hours' where user_id = ${second.id}`;
  return [first, second];
}

/** Waits until the page shows no "Loading" (a page shows it from its first render until its read answers). */
const loaded = (page: Page) =>
  page.waitForFunction(() => document.querySelector('main h1') && !document.querySelector('main .loading'), {
    timeout: 15_000,
  });

/** Opens the approvals page of `page` and waits for the approval `id` (pressing More while it is not shown). */
async function approvalShown(page: Page, id: string): Promise<string> {
  await go(page, '#/approvals');
  await heading(page, 'Approvals');
  const row = `article[data-approval="${id}"]`;
  await loaded(page);
  for (let i = 0; i < 20 && !(await page.$(row)); i++) {
    const more = await page.$('button.more');
    if (!more) break;
    const n = (await page.$$('main article')).length;
    await more.click();
    await page.waitForFunction((k) => document.querySelectorAll('main article').length > k, {}, n);
  }
  await page.waitForSelector(row);
  return row;
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

  it('resolves an escalated dispute with a split; the escrow page then shows the ledger transfers', async () => {
    const operator = await newOperator(['disputes']);
    const deal = await fundedDeal({ amount: 50_000 });
    const dispute = ok(await raise(deal, 'payer'), 201);
    // escalated, as the job does at the negotiation's deadline
    await testDb()`update public.disputes set status = 'escalated', escalated_at = now() where id = ${dispute.id}`;
    const held = await holdKobo(deal.escrowId);
    const { page, problems, close } = await openConsole();
    try {
      await signInAs(page, operator);
      await go(page, `#/escrow/${deal.escrowId}`);
      await heading(page, 'Escrow:');
      await page.waitForSelector('details#resolve[open]');
      const transfersBefore = (await page.$$('table.transfer')).length;
      expect(await page.$eval('input[name=outcome][value=split]', (i) => (i as HTMLInputElement).checked)).toBe(true);
      await page.type('#resolve-amount', '20000');
      await page.type('#resolve-reason', 'Half the order arrived; the payee is paid for what arrived.');
      await checkAndShoot(page, 'dispute-resolve');
      await page.click('xpath///details[@id="resolve"]//button[normalize-space()="Resolve"]');
      await page.waitForFunction(() => !document.querySelector('details#resolve'), { timeout: 15_000 });
      await page.waitForFunction(
        (n) => document.querySelectorAll('table.transfer').length > n,
        { timeout: 15_000 },
        transfersBefore,
      );
      const text = await textOf(page);
      expect(text).toMatch(/Outcome\s+split, ₦20,000\.00 to the payee/);
      expect(text).toContain('dispute resolved');
      const captions = await page.$$eval('table.transfer caption', (cs) => cs.map((c) => c.textContent ?? ''));
      expect(captions.length).toBeGreaterThan(transfersBefore);
      // the hold emptied: the last transfers took out everything it held
      expect(await holdKobo(deal.escrowId)).toBe(0);
      expect(held).toBeGreaterThan(0);
      expect(await page.$eval('main', (m) => m.textContent ?? '')).toMatch(/Held now\s*₦0\.00/);
      await expectLedgerInvariants();
      await page.$eval('xpath///main//h2[normalize-space()="Ledger transfers"]', (h) => h.scrollIntoView());
      await checkAndShoot(page, 'dispute-resolved');
      expect(problems).toEqual(okProblems);
    } finally {
      await close();
    }
  });

  it(
    'a NGN 2,000,000 held charge waits; a second operator approves it in another browser; the money moves once',
    async () => {
      const first = await newOperator(['finance']);
      const second = await newOperator(['finance']);
      await testDb()`update private.operators set granted_at = now() - interval '25 hours' where user_id = ${second.id}`;
      const user = await signUp({ tier: 3 });
      // a top-up of NGN 5,000 whose charge brought NGN 2,000,000, which verify confirms: held for review
      const reference = ok(await post(walletTopup, { amount: 5_000 }, { token: user.accessToken })).reference;
      await paystack.chargeStatus(reference, 'success', 200_000_000);
      expect((await paystack.chargeSuccess(reference, { amount: 200_000_000 })).responses[0]?.status).toBe(200);

      const a = await openConsole();
      const other = await launchBrowser();
      try {
        await signInAs(a.page, first);
        await openUser(a.page, user.id);
        expect(await textOf(a.page)).toContain('held for review');
        const formId = `charge-${reference}`;
        // the form names both figures: what the top-up expected and what the provider reported
        expect(await a.page.$eval(`details#${formId} summary`, (x) => x.textContent ?? '')).toMatch(
          /₦5,[0-9]{3}\.[0-9]{2} expected, the provider reported ₦2,000,000\.00/,
        );
        await perform(a.page, formId, 'The provider confirmed NGN 2,000,000 arrived.', 'Resolve the charge');
        await a.page.waitForSelector(`details#${formId} .waiting, details#${formId} .refusal`);
        const approvalId = await a.page.$eval(`details#${formId} .approval-id`, (c) => c.textContent ?? '');
        expect(approvalId).toMatch(/^[0-9a-f-]{36}$/);
        expect(await a.page.$eval(`details#${formId} .waiting`, (w) => (w as HTMLElement).innerText))
          .toContain('Waiting for a second operator');
        await a.page.$eval(`details#${formId}`, (d) => d.scrollIntoView({ block: 'center' }));
        await checkAndShoot(a.page, 'charge-waiting');
        expect(await walletKobo(user.id)).toBe(0);

        // the operator who asked cannot approve it: the refusal is shown
        await go(a.page, '#/approvals');
        await heading(a.page, 'Approvals');
        const mine = `article[data-approval="${approvalId}"]`;
        await a.page.waitForSelector(mine);
        await a.page.type(`#approval-${approvalId}-reason`, 'Approving my own request, which must fail.');
        await a.page.click(`${mine} button[type=submit]`);
        await a.page.waitForSelector(`${mine} .refusal, ${mine} p.done`);
        expect(await a.page.$eval(`${mine} .refusal`, (r) => (r as HTMLElement).innerText))
          .toMatch(/code approval_own_action, HTTP 409/);
        expect(await walletKobo(user.id)).toBe(0);

        const b = await openConsole(other);
        await signInAs(b.page, second);
        await go(b.page, '#/approvals');
        await heading(b.page, 'Approvals');
        await b.page.waitForSelector(mine);
        expect(await b.page.$eval(mine, (r) => (r as HTMLElement).innerText)).toMatch(
          /charge\.resolve, ₦2,000,000\.00/,
        );
        await b.page.type(`#approval-${approvalId}-reason`, 'Checked the provider dashboard: it arrived.');
        await checkAndShoot(b.page, 'approvals');
        await b.page.click(`${mine} button[type=submit]`);
        await b.page.waitForSelector(`${mine} p.done, ${mine} .refusal`);
        expect(await b.page.$eval(`${mine} p.done`, (p) => p.textContent ?? '')).toContain('Approved and performed');
        expect(await axeViolations(b.page)).toEqual([]);

        expect(await walletKobo(user.id)).toBe(200_000_000);
        const [transfers] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from private.ledger_transfers where transaction_id = ${reference}`;
        expect(transfers?.n).toBe(1);
        const [row] = await testDb()<{ status: string }[]>`
        select status::text as status from public.transactions where id = ${reference}`;
        expect(row?.status).toBe('succeeded');
        await expectLedgerInvariants();
        expect(b.problems).toEqual(okProblems);
        await b.close();
        // the first tab: its only failed request is the refused approval of its own action
        expect(a.problems.failed.map((f) => f.replace(/^https?:\/\/[^/]+/, ''))).toEqual([
          '/functions/v1/admin-approval-decide: 409',
        ]);
        expect([a.problems.errors.filter((e) => !/409/.test(e)), a.problems.offMachine]).toEqual([[], []]);
      } finally {
        await a.close();
        await other.close();
      }
    },
    120_000,
  );

  it('freezing an account shows on its page; the audit log lists it', async () => {
    const operator = await newOperator(['finance', 'admin']);
    const customer = await signUp({ tier: 2 });
    const { page, problems, close } = await openConsole();
    try {
      await signInAs(page, operator);
      await openUser(page, customer.id);
      expect(await textOf(page)).toMatch(/Account\s+active/);
      const reason = 'The customer reported the phone stolen.';
      await perform(page, 'freeze', reason, 'Freeze');
      await page.waitForSelector('.banner');
      const shown = await textOf(page);
      expect(shown).toMatch(/Frozen since .+ WAT: The customer reported the phone stolen\./);
      expect(shown).toMatch(/Account\s+frozen/);
      // the form is now the unfreeze
      await page.waitForSelector('details#unfreeze');
      await page.evaluate(() => scrollTo(0, 0));
      await checkAndShoot(page, 'user-frozen');

      await page.click('xpath///nav//a[normalize-space()="Audit log"]');
      await heading(page, 'Audit log');
      await page.waitForSelector('table.audit tbody tr');
      await page.type('#audit-target', customer.id);
      await page.click('xpath///form[contains(@class,"filters")]//button[normalize-space()="Filter"]');
      // the record's reads (opened, then read again after the freeze) and the freeze: nothing else
      await page.waitForFunction(
        () => document.querySelectorAll('table.audit tbody tr').length === 3,
        { timeout: 15_000 },
      );
      expect(await page.$$eval('table.audit tbody tr td:nth-child(3)', (tds) => tds.map((td) => td.textContent)))
        .toEqual(['user.read', 'user.freeze', 'user.read']);
      const audit = await page.$eval('table.audit', (t) => (t as HTMLElement).innerText);
      expect(audit).toContain('user.freeze');
      expect(audit).toContain(reason);
      await checkAndShoot(page, 'audit');
      expect(problems).toEqual(okProblems);
    } finally {
      await close();
    }
  });

  it("shows only the forms the operator's roles admit; a role taken after sign-in: the API's 403 is shown", async () => {
    const support = await newOperator(['support']);
    const customer = await signUp({ tier: 2 });
    const { page, problems, close } = await openConsole();
    try {
      await signInAs(page, support);
      expect(await page.$eval('header .roles', (r) => r.textContent)).toBe('(support)');
      // no audit log (admins only) in the navigation
      expect(await page.$$eval('nav a', (as) => as.map((a) => a.textContent?.trim()))).toEqual([
        'Queues',
        'Search',
        'Approvals',
      ]);
      await openUser(page, customer.id);
      expect(await page.$('details#sessions')).not.toBeNull();
      for (const form of ['freeze', 'unfreeze', 'grant', 'revoke', 'reset']) {
        expect(await page.$(`details#${form}`), form).toBeNull();
      }
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual(okProblems);
    } finally {
      await close();
    }

    // finance is taken from an operator already signed in: the page still shows the freeze form
    // (the roles of the pass), and the API refuses it
    const both = await newOperator(['finance', 'support']);
    const second = await openConsole();
    try {
      await signInAs(second.page, both);
      expect(await second.page.$eval('header .roles', (r) => r.textContent)).toBe('(finance, support)');
      await testDb()`delete from private.operators where user_id = ${both.id} and role = 'finance'`;
      await openUser(second.page, customer.id);
      await perform(second.page, 'freeze', 'A support operator tries to freeze.', 'Freeze');
      await second.page.waitForSelector('details#freeze .refusal');
      expect(await second.page.$eval('details#freeze .refusal', (r) => (r as HTMLElement).innerText))
        .toMatch(/code operator_role_required, HTTP 403/);
      expect(await axeViolations(second.page)).toEqual([]);
      expect(second.problems.failed.map((f) => f.replace(/^https?:\/\/[^/]+/, ''))).toEqual([
        '/functions/v1/admin-user-freeze: 403',
      ]);
      const [row] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from private.admin_audit where action = 'user.freeze' and target_id = ${customer.id}`;
      expect(row?.n).toBe(0);
    } finally {
      await second.close();
    }
  });

  it("lists the user's SMS; support resends one, the page shows the new message; a one-time code is refused", async () => {
    const support = await newOperator(['support']);
    const customer = await signUp({ tier: 2 });
    const [notice] = await testDb()<{ id: string }[]>`
      insert into private.sms_outbox (phone, message, body, sent_at)
      values (${customer.phone}, '{"kind":"kyc_tier_changed","tier":2,"raised":true}'::jsonb,
              'Your account is now at tier 2.', now())
      returning id::text`;
    const [otp] = await testDb()<{ id: string }[]>`
      select id::text from private.sms_outbox where phone = ${customer.phone} and message ->> 'kind' = 'otp_code'
       order by id desc limit 1`;
    const { page, problems, close } = await openConsole();
    try {
      await signInAs(page, support);
      await openUser(page, customer.id);
      const row = (id: string) => `table.sms tr[data-sms="${id}"]`;
      await page.waitForSelector(row(notice!.id));
      expect(await page.$eval(row(notice!.id), (r) => (r as HTMLElement).innerText)).toMatch(
        /kyc tier changed\s+sent\s+.+WAT\s+.+WAT\s+0 of 3/,
      );
      await perform(page, `sms-${notice!.id}`, 'The customer says the tier message never arrived.', 'Resend');
      const done = `details#sms-${notice!.id} p.done`;
      await page.waitForSelector(`${done}, details#sms-${notice!.id} .refusal`, { timeout: 15_000 });
      const newId = await page.$eval(`${done} .new-sms`, (c) => c.textContent ?? '');
      expect(newId).toMatch(/^[0-9]+$/);
      // the outbox holds the copy: the same phone and text, sent, naming the first message
      const [copy] = await testDb()<{ phone: string; body: string; resend_of: string; sent: boolean }[]>`
        select phone, body, resend_of::text, sent_at is not null as sent from private.sms_outbox where id = ${newId}`;
      expect(copy).toEqual({
        phone: customer.phone,
        body: 'Your account is now at tier 2.',
        resend_of: notice!.id,
        sent: true,
      });
      // the page read the record again: the new message is listed, the first one counts its resend
      await page.waitForSelector(row(newId));
      expect(await page.$eval(row(newId), (r) => (r as HTMLElement).innerText)).toContain(`resends ${notice!.id}`);
      expect(await page.$eval(row(notice!.id), (r) => (r as HTMLElement).innerText)).toMatch(/1 of 3/);
      expect(await page.$eval(done, (p) => (p as HTMLElement).innerText)).toContain(`Queued again as SMS ${newId}`);
      await page.$eval(row(notice!.id), (r) => r.scrollIntoView({ block: 'center' }));
      await checkAndShoot(page, 'user-sms');

      await perform(page, `sms-${otp!.id}`, 'The customer says the code never arrived.', 'Resend');
      await page.waitForSelector(`details#sms-${otp!.id} .refusal`, { timeout: 15_000 });
      const refusal = await page.$eval(`details#sms-${otp!.id} .refusal`, (r) => (r as HTMLElement).innerText);
      expect(refusal).toContain('One-time codes are not resent; the user asks for a new one');
      expect(refusal).toMatch(/code sms_one_time_code, HTTP 409/);
      const [resent] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from private.sms_outbox where resend_of = ${otp!.id}`;
      expect(resent?.n).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems.failed.map((f) => f.replace(/^https?:\/\/[^/]+/, ''))).toEqual([
        '/functions/v1/admin-sms-resend: 409',
      ]);
      expect([problems.errors.filter((e) => !/409/.test(e)), problems.offMachine]).toEqual([[], []]);
    } finally {
      await close();
    }
  });

  it(
    'an unfreeze waits for a second operator, who approves it in another browser; the banner then goes',
    async () => {
      const first = await newOperator(['finance']);
      const second = await newOperator(['finance']);
      await testDb()`update private.operators set granted_at = now() - interval '25 hours' where user_id = ${second.id}`;
      const customer = await signUp({ tier: 2 });
      ok(
        await post(adminUserFreeze, { user_id: customer.id, reason: 'The customer reported the phone stolen.' }, {
          token: first.accessToken,
        }),
      );
      const a = await openConsole();
      const other = await launchBrowser();
      try {
        await signInAs(a.page, first);
        await openUser(a.page, customer.id);
        await a.page.waitForSelector('.banner');
        await perform(a.page, 'unfreeze', 'The customer has the phone back and called from it.', 'Unfreeze');
        await a.page.waitForSelector('details#unfreeze .waiting, details#unfreeze .refusal');
        const approvalId = await a.page.$eval('details#unfreeze .approval-id', (c) => c.textContent ?? '');
        expect(approvalId).toMatch(/^[0-9a-f-]{36}$/);
        expect(await a.page.$eval('details#unfreeze .waiting', (w) => (w as HTMLElement).innerText))
          .toContain('Waiting for a second operator');
        expect(await axeViolations(a.page)).toEqual([]);
        // still frozen until the second operator approves
        const [frozen] = await testDb()<{ n: number }[]>`
          select count(*)::int as n from private.admin_audit where action = 'user.unfreeze' and target_id = ${customer.id}`;
        expect(frozen?.n).toBe(0);

        const b = await openConsole(other);
        await signInAs(b.page, second);
        await go(b.page, '#/approvals');
        await heading(b.page, 'Approvals');
        const row = `article[data-approval="${approvalId}"]`;
        await b.page.waitForSelector(row);
        expect(await b.page.$eval(row, (r) => (r as HTMLElement).innerText)).toContain('user.unfreeze');
        await b.page.type(`#approval-${approvalId}-reason`, 'Spoke to the customer on the phone: it is theirs.');
        await b.page.click(`${row} button[type=submit]`);
        await b.page.waitForSelector(`${row} p.done, ${row} .refusal`);
        expect(await b.page.$eval(`${row} p.done`, (p) => p.textContent ?? '')).toContain('Approved and performed');
        expect(await axeViolations(b.page)).toEqual([]);
        expect(b.problems).toEqual(okProblems);
        await b.close();

        // the first operator opens the record again: no banner, the freeze form is back
        await go(a.page, '#/queues');
        await heading(a.page, 'Queues');
        await openUser(a.page, customer.id);
        await a.page.waitForSelector('details#freeze');
        expect(await a.page.$('.banner')).toBeNull();
        expect(await textOf(a.page)).toMatch(/Account\s+active/);
        expect(await axeViolations(a.page)).toEqual([]);
        expect(a.problems).toEqual(okProblems);
      } finally {
        await a.close();
        await other.close();
      }
    },
    120_000,
  );

  it('retries a failed payout from the user page: one new transfer is sent, and the result is shown', async () => {
    const operator = await newOperator(['finance']);
    const customer = await signUp({ tier: 1 });
    await fundWallet(customer, 5_000);
    await addPayout(customer);
    const w = ok(await post(walletWithdraw, { amount: 2_000 }, { token: customer.accessToken }));
    // the provider says the old transfer failed: the money is back in the wallet
    await paystack.transferOutcome(w.id, 'transfer.failed');
    const [old] = await testDb()<{ status: string }[]>`
      select status::text as status from public.transactions where id = ${w.id}`;
    expect(old?.status).toBe('failed');
    const { page, problems, close } = await openConsole();
    try {
      await signInAs(page, operator);
      await openUser(page, customer.id);
      const formId = `payout-${w.id}`;
      await perform(page, formId, 'The customer fixed the bank account; sending it again.', 'Retry the payout');
      await page.waitForSelector(`details#${formId} p.done, details#${formId} .refusal`, { timeout: 15_000 });
      expect(await page.$eval(`details#${formId} p.done`, (p) => (p as HTMLElement).innerText))
        .toMatch(/A new payout .+ of ₦2,000\.00: pending\./);
      const retries = await testDb()<{ id: string }[]>`
        select id from public.transactions where metadata ->> 'retry_of' = ${w.id}`;
      expect(retries).toHaveLength(1);
      const sent = (await paystack.requests('/transfer')).filter(
        (r) => r.method === 'POST' && [w.id, retries[0]?.id].includes(r.body.reference),
      );
      expect(sent.map((r) => r.body.reference)).toEqual([w.id, retries[0]?.id]);
      expect(await walletKobo(customer.id)).toBe(300_000);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual(okProblems);
    } finally {
      await close();
    }
  });

  it('with the keyboard only: freezes an account from its page; the banner shows', async () => {
    const operator = await newOperator(['finance']);
    const customer = await signUp({ tier: 2 });
    const { page, problems, close } = await openConsole();
    const k = page.keyboard;
    const tabTo = async (selector: string) => {
      for (let i = 0; i < 80; i++) {
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
      await signInAs(page, operator);
      await go(page, `#/user/${customer.id}`);
      await page.waitForSelector('#reason');
      await tabTo('#reason');
      await k.type('A keyboard check of the freeze form.');
      await tabTo('main button[type=submit]');
      await k.press('Enter');
      await page.waitForSelector('details#freeze');
      await tabTo('details#freeze summary');
      await k.press('Enter');
      await page.waitForSelector('details#freeze[open]');
      await tabTo('#freeze-reason');
      await k.type('The customer reported the phone stolen.');
      await tabTo('details#freeze button[type=submit]');
      await k.press('Enter');
      await page.waitForSelector('.banner', { timeout: 15_000 });
      expect(await textOf(page)).toMatch(/Frozen since .+ WAT: The customer reported the phone stolen\./);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual(okProblems);
    } finally {
      await close();
    }
  });

  it(
    'grants a role: 202 waiting; a second admin approves it in another browser; the role exists after',
    async () => {
      const [first, second] = await twoAdmins();
      const target = await signUp({ first_name: 'Tunde', last_name: 'Bello', tier: 3 });
      await grantRoles(target, []); // tier 3 with a NIN and a BVN bound: eligible
      const a = await openConsole();
      const other = await launchBrowser();
      try {
        await signInAs(a.page, first);
        await openUser(a.page, target.id);
        expect(await textOf(a.page)).toMatch(/Operator roles\s+none/);
        await a.page.click('details#grant summary');
        await a.page.select('#grant-role', 'support');
        await perform(a.page, 'grant', 'The new support hire starts on Monday.', 'Grant');
        await a.page.waitForSelector('details#grant .waiting, details#grant .refusal', { timeout: 15_000 });
        const approvalId = await a.page.$eval('details#grant .approval-id', (c) => c.textContent ?? '');
        expect(await a.page.$eval('details#grant .waiting', (w) => (w as HTMLElement).innerText))
          .toMatch(/Waiting for a second operator \(admin\)/);
        await a.page.$eval('details#grant', (d) => d.scrollIntoView({ block: 'center' }));
        await checkAndShoot(a.page, 'grant-waiting');
        const roles = () =>
          testDb()<{ role: string }[]>`select role from private.operators where user_id = ${target.id}`;
        expect(await roles()).toEqual([]);

        const b = await openConsole(other);
        await signInAs(b.page, second);
        const row = await approvalShown(b.page, approvalId);
        expect(await b.page.$eval(row, (r) => (r as HTMLElement).innerText)).toContain('role.grant');
        await b.page.type(`#approval-${approvalId}-reason`, 'HR confirmed the hire: support it is.');
        await b.page.click(`${row} button[type=submit]`);
        await b.page.waitForSelector(`${row} p.done, ${row} .refusal`, { timeout: 15_000 });
        expect(await b.page.$eval(`${row} p.done`, (p) => p.textContent ?? '')).toContain('Approved and performed');
        expect(await axeViolations(b.page)).toEqual([]);
        expect(b.problems).toEqual(okProblems);
        await b.close();
        expect(await roles()).toEqual([{ role: 'support' }]);

        // the first admin reads the record again: the role is there
        await go(a.page, '#/queues');
        await heading(a.page, 'Queues');
        await openUser(a.page, target.id);
        expect(await textOf(a.page)).toMatch(/Operator roles\s+support/);
        expect(await axeViolations(a.page)).toEqual([]);
        expect(a.problems).toEqual(okProblems);
      } finally {
        await a.close();
        await other.close();
      }
    },
    120_000,
  );

  it('revokes a role at once, and the answer stays shown; resetting a factor waits for a second admin (202)', async () => {
    const admin = await newOperator(['admin']);
    const target = await newOperator(['support']);
    const { page, problems, close } = await openConsole();
    try {
      await signInAs(page, admin);
      await openUser(page, target.id);
      expect(await textOf(page)).toMatch(/Operator roles\s+support/);

      // the reset first: it waits, and the factor stays as it is
      await perform(page, 'reset', 'The operator lost the phone with the authenticator.', 'Reset the factor');
      await page.waitForSelector('details#reset .waiting, details#reset .refusal', { timeout: 15_000 });
      const approvalId = await page.$eval('details#reset .approval-id', (c) => c.textContent ?? '');
      const [approval] = await testDb()<{ action: string; status: string; target_id: string }[]>`
        select action, status, target_id::text from private.approvals where id = ${approvalId}`;
      expect(approval).toEqual({ action: expect.stringMatching(/reset/), status: 'pending', target_id: target.id });
      const [factor] = await testDb()<{ status: string }[]>`
        select status from private.operator_factors where user_id = ${target.id}`;
      expect(factor?.status).toBe('active');

      await page.click('details#revoke summary');
      await page.select('#revoke-role', 'support');
      await perform(page, 'revoke', 'The operator moved to another team.', 'Revoke');
      await page.waitForSelector('details#revoke p.done, details#revoke .refusal', { timeout: 15_000 });
      expect(await page.$eval('details#revoke p.done', (p) => (p as HTMLElement).innerText))
        .toContain('Revoked support; roles left: none.');
      const roles = await testDb()<{ role: string }[]>`select role from private.operators where user_id = ${target.id}`;
      expect(roles).toEqual([]);
      // the record read again shows no role, and the answer is still on the page
      await page.waitForFunction(() => /Operator roles\s+none/.test(document.querySelector('main')?.innerText ?? ''));
      expect(await page.$eval('details#revoke p.done', (p) => p.textContent ?? '')).toContain('Revoked support');
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual(okProblems);
    } finally {
      await close();
    }
  });

  it('signs out: back to the sign-in, the session forgotten, its old token refused by the API', async () => {
    const operator = await newOperator(['support']);
    const { page, problems, close } = await openConsole();
    try {
      await signInAs(page, operator);
      const before = await storedSession(page);
      expect(before?.roles).toEqual(['support']);
      const token = before!.access_token;
      ok(await get(profileGet, { token }));
      await page.click('xpath///header//button[normalize-space()="Sign out"]');
      await heading(page, 'Sign in');
      expect(await storedSession(page)).toBeNull();
      expect(await page.$('header nav')).toBeNull();
      // the session ended at the server: its token is refused (operator endpoints: the 404 of a missing function)
      const profile = await get(profileGet, { token });
      expect(profile.status).toBe(401);
      const queues = await get('admin-queue-list', { token });
      expect([queues.status, queues.body.code]).toEqual([404, 'function_not_found']);
      // an address of the console shows the sign-in, not the page
      await go(page, '#/approvals');
      await heading(page, 'Sign in');
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual(okProblems);
    } finally {
      await close();
    }
  });

  it('refreshes the session: an expired access token before the call, an invalid one after its 404; the page loads', async () => {
    const operator = await newOperator(['support']);
    const { page, problems, close } = await openConsole();
    const refreshes: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/auth-refresh') && r.method() === 'POST') refreshes.push(r.url());
    });
    try {
      await signInAs(page, operator);
      const first = await storedSession(page);

      // the access token's expiry passed (as the clock would make it): refreshed before the call
      await page.evaluate(() => {
        const key = 'escrow-console.session';
        const s = JSON.parse(sessionStorage.getItem(key)!);
        sessionStorage.setItem(key, JSON.stringify({ ...s, expires_at: Date.now() - 1000 }));
      });
      await go(page, '#/approvals');
      await heading(page, 'Approvals');
      await loaded(page);
      expect(refreshes).toHaveLength(1);
      const second = await storedSession(page);
      expect(second!.refresh_token).not.toBe(first!.refresh_token);
      expect(second!.expires_at).toBeGreaterThan(Date.now());
      expect(second!.roles).toEqual(['support']);

      // a token the server does not take (ended, or not one): the 404 of a missing function, then a refresh
      await page.evaluate(() => {
        const key = 'escrow-console.session';
        const s = JSON.parse(sessionStorage.getItem(key)!);
        sessionStorage.setItem(key, JSON.stringify({ ...s, access_token: 'not.a.token' }));
      });
      await go(page, '#/queues');
      await heading(page, 'Queues');
      await page.waitForSelector('main table tbody tr');
      expect(await textOf(page)).toContain('Disputes escalated');
      expect(refreshes).toHaveLength(2);
      expect((await storedSession(page))!.access_token).not.toBe('not.a.token');
      expect(failedPaths(problems)).toEqual(['/functions/v1/admin-queue-list: 404']);
      expect([problems.errors.filter((e) => !/404/.test(e)), problems.offMachine]).toEqual([[], []]);
    } finally {
      await close();
    }
  });

  it('with the keyboard only: approves an unfreeze on the approvals page', async () => {
    const [first, second] = await Promise.all([newOperator(['finance']), newOperator(['finance'])]);
    await testDb()`update private.operators set granted_at = now() - interval '25 hours' where user_id = ${second.id}`;
    const customer = await signUp({ tier: 2 });
    ok(
      await post(adminUserFreeze, { user_id: customer.id, reason: 'The customer reported the phone stolen.' }, {
        token: first.accessToken,
      }),
    );
    const asked = await post(adminUserUnfreeze, { user_id: customer.id, reason: 'The phone is back with its owner.' }, {
      token: first.accessToken,
    });
    expect(asked.status).toBe(202);
    const approvalId = (asked.body as { data: { approval: { id: string } } }).data.approval.id;
    const { page, problems, close } = await openConsole();
    const k = page.keyboard;
    try {
      await signInAs(page, second);
      await tabTo(page, 'nav a[href="#/approvals"]');
      await k.press('Enter');
      await heading(page, 'Approvals');
      const row = `article[data-approval="${approvalId}"]`;
      await loaded(page);
      // More, with the keyboard, while the approval is on a later page
      for (let i = 0; i < 20 && !(await page.$(row)); i++) {
        const n = (await page.$$('main article')).length;
        await tabTo(page, 'button.more', 400);
        await k.press('Enter');
        await page.waitForFunction((c) => document.querySelectorAll('main article').length > c, {}, n);
      }
      await tabTo(page, `#approval-${approvalId}-reason`, 400);
      await k.type('Spoke to the customer on the phone: it is theirs.');
      await tabTo(page, `${row} button[type=submit]`);
      await k.press('Enter');
      await page.waitForSelector(`${row} p.done, ${row} .refusal`, { timeout: 15_000 });
      expect(await page.$eval(`${row} p.done`, (p) => p.textContent ?? '')).toContain('Approved and performed');
      const [freeze] = await testDb()<{ n: number }[]>`
        select count(*)::int as n from private.account_freezes where user_id = ${customer.id} and unfrozen_at is null`;
      expect(freeze?.n).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual(okProblems);
    } finally {
      await close();
    }
  });

  it("shows an escrow's messages only once the operator states why; the audit keeps the reason", async () => {
    const operator = await newOperator(['support']);
    const deal = await fundedDeal();
    const content = 'Meet me at the gate at noon.';
    ok(
      await post(messageSend, { conversation_id: deal.conversationId, content }, { token: deal.payer.accessToken }),
      201,
    );
    const { page, problems, close } = await openConsole();
    try {
      await signInAs(page, operator);
      await go(page, `#/escrow/${deal.escrowId}`);
      await heading(page, 'Escrow:');
      await page.waitForSelector('#reason');
      const hidden = await textOf(page);
      expect(hidden).toMatch(/1 message\(s\) in the conversation/);
      expect(hidden).not.toContain(content);
      await page.type('#reason', 'The payer says the seller threatened them in the chat.');
      await page.click('xpath///main//button[normalize-space()="Show the messages"]');
      await page.waitForSelector('ul.messages li');
      expect(await page.$eval('ul.messages', (u) => (u as HTMLElement).innerText)).toContain(content);
      const audit = await testDb()<{ reason: string | null; details: { content_shown?: boolean } }[]>`
        select reason, details from private.admin_audit
         where admin_id = ${operator.id} and action = 'escrow.read' order by id`;
      expect(audit.map((a) => [a.reason, a.details.content_shown])).toEqual([
        [null, false],
        ['The payer says the seller threatened them in the chat.', true],
      ]);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual(okProblems);
    } finally {
      await close();
    }
  });

  it("hosted as static files on an origin of its own, with the documented headers, it works against the API's origin", async () => {
    const operator = await newOperator(['support']);
    const api = new URL(inject('baseUrl')).origin;
    // the folder as a static host serves it: config.js naming the API, every file with consoleHeaders
    const site = await serveStatic(consoleDir, {
      headers: consoleHeaders(api),
      files: { 'config.js': configModule(inject('baseUrl')) },
    });
    const page = await browser.newPage();
    await page.setViewport(VIEWPORT);
    const problems = watchPage(page);
    const origins: { url: string; allow: string | undefined }[] = [];
    page.on('response', (r) => {
      if (new URL(r.url()).origin === api && r.request().method() !== 'OPTIONS') {
        origins.push({ url: new URL(r.url()).pathname, allow: r.headers()['access-control-allow-origin'] });
      }
    });
    try {
      const answer = await page.goto(site.url, { waitUntil: 'load' });
      expect(new URL(site.url).origin).not.toBe(api);
      expect(answer?.headers()['content-security-policy']).toContain(`connect-src ${api};`);
      expect(answer?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(answer?.headers()['x-content-type-options']).toBe('nosniff');
      await signInAs(page, operator);
      await loaded(page);
      expect(await textOf(page)).toContain('Disputes escalated');
      // every call went to the API's origin, whose answers the browser let the page read (CORS)
      expect(origins.map((o) => o.url)).toEqual(expect.arrayContaining([
        '/functions/v1/auth-verify',
        '/functions/v1/admin-totp-verify',
        '/functions/v1/admin-queue-list',
      ]));
      expect(origins.every((o) => o.allow === '*' || o.allow === new URL(site.url).origin)).toBe(true);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual(okProblems);
    } finally {
      await page.close();
      await site.close();
    }
  });
});

describe('admin-approval-list', () => {
  it("the approvals page shows 50, and More loads the next page by the API's cursor", async () => {
    const operator = await newOperator(['support']);
    // 55 decided approvals older than any other: the first of the rejected ones, in this order
    const ids = await testDb()<{ id: string }[]>`
      insert into private.approvals (action, target_type, target_id, roles, reason, requested_by, requested_at,
                                     expires_at, status, decided_by, decided_at, decision_reason)
      select 'user.unfreeze', 'user', gen_random_uuid(), array['finance'], 'A paging test: approval ' || i,
             ${operator.id}, timestamptz '2000-01-01 00:00:00+00' + i * interval '1 second',
             timestamptz '2000-01-02 00:00:00+00', 'rejected', ${operator.id},
             timestamptz '2000-01-01 12:00:00+00', 'Rejected for the paging test.'
        from generate_series(0, 54) i
      returning id::text`;
    const { page, problems, close } = await openConsole();
    try {
      await signInAs(page, operator);
      await go(page, '#/approvals');
      await heading(page, 'Approvals');
      await page.select('#approval-status', 'rejected');
      const shown = () => page.$$eval('main article', (as) => as.map((a) => a.getAttribute('data-approval')));
      await page.waitForFunction(() =>
        document.querySelectorAll('main article').length === 50 &&
        document.querySelector('main article h2')?.textContent?.includes('rejected')
      );
      expect(await shown()).toEqual(ids.slice(0, 50).map((r) => r.id));
      expect(await page.$eval('button.more', (b) => b.textContent?.trim())).toBe('More (50 shown)');
      await page.click('button.more');
      await page.waitForFunction(() => document.querySelectorAll('main article').length > 50);
      expect((await shown()).slice(0, 55)).toEqual(ids.map((r) => r.id));
      expect(await axeViolations(page)).toEqual([]);
      expect(problems).toEqual(okProblems);
    } finally {
      await close();
    }
  });
});
