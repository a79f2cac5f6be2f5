/// <reference lib="dom" />
/** The browser half of test/integration/console.browser.test.ts: puppeteer-core is an ES module,
 * which jest's CommonJS runtime cannot load, so each scenario runs here in node (through tsx) and
 * prints what it saw as one JSON line; the jest test makes the assertions. Usage:
 * `tsx console.driver.mts <scenario>` with `{ apiUrl, key, person, shots, ... }` as JSON on stdin. */
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

interface Input { apiUrl: string; key: string; person: string; shots: string; fixtures?: string; orderId?: string; exceptionId?: number; resolve?: boolean; vendorId?: string; from?: string; to?: string }

async function signedIn(browser: Browser, input: Input): Promise<{ page: Page; landed: string }> {
  const page = await (await browser.createBrowserContext()).newPage();
  await page.goto(`${input.apiUrl}/console`);
  if (new URL(page.url()).pathname !== '/console/sign-in') throw new Error(`not sent to sign in: ${page.url()}`);
  await page.type('#key', input.key);
  await page.type('#person', input.person);
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  return { page, landed: new URL(page.url()).pathname };
}
const shot = (input: Input, page: Page, name: string) => page.screenshot({ path: path.join(input.shots, `${name}.png`) });
const fitsLaptop = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= 1366);
const text = (page: Page, selector: string) => page.$eval(selector, (e) => e.textContent ?? '');
const cookieHeader = async (page: Page) => (await page.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
const submit = (page: Page, selector: string) => Promise.all([page.waitForNavigation(), page.click(selector)]);

const SCENARIOS: Record<string, (browser: Browser, input: Input) => Promise<unknown>> = {
  async session(browser, input) {
    const { page, landed } = await signedIn(browser, input);
    const [cookie] = await page.cookies();
    const nav = await page.$$eval('header nav a', (as) => as.map((a) => a.textContent));
    const csrf = await page.$eval('input[name=_csrf]', (i) => (i as HTMLInputElement).value);
    return { landed, cookie: cookie && { name: cookie.name, httpOnly: cookie.httpOnly, sameSite: cookie.sameSite, path: cookie.path }, nav, csrf, cookieHeader: await cookieHeader(page) };
  },

  async reconRun(browser, input) {
    const { page } = await signedIn(browser, input);
    await page.type('#from', '08012026');
    await page.type('#to', '08022026');
    await submit(page, 'form[aria-label="Start a run"] button');
    const watch = new URL(page.url()).searchParams.get('watch');
    const seen: number[] = [];
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      const state = await page.$eval('#progress', (s) => [s.getAttribute('data-state'), (s.querySelector('progress') as HTMLProgressElement).value] as const);
      seen.push(state[1]);
      if (state[0] === 'done') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const final = { value: await page.$eval('#progress progress', (p) => (p as HTMLProgressElement).value), state: await text(page, '[data-testid=run-state]') };
    await page.reload();
    const runs = await text(page, 'table tbody');
    await shot(input, page, 'console-recon-runs');
    return { watch, seen, final, runs, fits: await fitsLaptop(page) };
  },

  async exceptions(browser, input) {
    const { page } = await signedIn(browser, input);
    await page.goto(`${input.apiUrl}/console/exceptions`);
    await page.select('#f-status', 'open');
    await page.select('#f-reason', 'amount-mismatch');
    await page.select('#f-severity', 'high');
    await submit(page, 'form[aria-label="Filter exceptions"] button');
    const row = await text(page, `tr[data-exception-id="${input.exceptionId}"]`);
    const rowCount = await page.$$eval('tbody tr[data-exception-id]', (trs) => trs.length);
    const fits = await fitsLaptop(page);
    await shot(input, page, 'console-exceptions');
    const href = await page.$eval('#export-csv', (a) => (a as HTMLAnchorElement).href);
    const csv = await page.evaluate((u) => fetch(u).then((r) => r.text()), href);
    if (!input.resolve) return { row, rowCount, fits, href, csv };
    await page.type(`#note-${input.exceptionId}`, 'gateway amount confirmed with Razorpay');
    await submit(page, `tr[data-exception-id="${input.exceptionId}"] button`);
    return { notice: await text(page, '.notice') };
  },

  async bank(browser, input) {
    const { page } = await signedIn(browser, input);
    const upload = async (file: string) => {
      await page.goto(`${input.apiUrl}/console/bank-statements`);
      const field = await page.$('input[type=file]');
      await (field as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(path.join(input.fixtures!, file));
      await page.waitForFunction(() => (document.getElementById('csv') as HTMLTextAreaElement).value.length > 0);
      await submit(page, 'form[aria-label="Upload a bank statement"] button');
    };
    await upload('bank-malformed.csv');
    const problems = await page.$$eval('#bank-errors tr[data-line]', (trs) => trs.map((tr) => [tr.getAttribute('data-line'), tr.textContent]));
    await shot(input, page, 'console-bank-statements-errors');
    await upload('bank-good.csv');
    const first = await text(page, '#bank-result');
    await upload('bank-good.csv');
    return { problems, first, second: await text(page, '#bank-result') };
  },

  async queue(browser, input) {
    const { page, landed } = await signedIn(browser, input);
    const row = await text(page, `tr[data-order-id="${input.orderId}"]`);
    const webUi = await page.$eval(`tr[data-order-id="${input.orderId}"] a[target=_blank]`, (a) => (a as HTMLAnchorElement).href);
    const fits = await fitsLaptop(page);
    await shot(input, page, 'console-payout-queue');
    return { landed, row, webUi, switchState: await text(page, '[data-testid=switch-state]'), fits };
  },

  async retry(browser, input) {
    const { page } = await signedIn(browser, input);
    await submit(page, `a[aria-label="Retry: ${input.orderId}"]`);
    const focused = await page.evaluate(() => document.activeElement?.id);
    await page.keyboard.type('account re-activated by the vendor');
    await shot(input, page, 'console-payout-confirm');
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    const notice = await text(page, '.notice');
    let status = '';
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
      await page.reload();
      status = await text(page, '[data-testid=payout-status]');
      if (status === 'settled') break;
    }
    const page_ = await page.content();
    await shot(input, page, 'console-payout');
    return { focused, notice, status, hasProviderCode: page_.includes('BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT'), hasWebUi: page_.includes(`/workflows/payout-${input.orderId}`) };
  },

  async killSwitch(browser, input) {
    const { page } = await signedIn(browser, input);
    await page.type('#switch-reason', 'bank maintenance window');
    await submit(page, 'form[action="/console/transfers/pause"] button');
    const paused = await text(page, '[data-testid=switch-state]');
    const pauseNotice = await text(page, '.notice');
    const inFlight = await text(page, '[data-testid=in-flight]');
    await page.type('#switch-reason', 'maintenance over');
    await submit(page, 'form[action="/console/transfers/resume"] button');
    return { paused, pauseNotice, inFlight, resumed: await text(page, '[data-testid=switch-state]'), inFlightAfterResume: await page.$('[data-testid=in-flight]') !== null };
  },

  async statement(browser, input) {
    const { page } = await signedIn(browser, input);
    await page.goto(`${input.apiUrl}/console/statements?from=${input.from}&to=${input.to}`);
    const vendorRow = await text(page, `tr[data-vendor-id="${input.vendorId}"]`);
    await page.select('#s-vendor', input.vendorId!);
    await submit(page, 'form[aria-label="Choose a statement"] button');
    const lines = await page.$$eval('[data-testid=statement-lines] tbody tr[data-order-id]', (trs) => trs.map((tr) => ({
      orderId: tr.getAttribute('data-order-id'), kind: tr.getAttribute('data-kind'), rail: tr.getAttribute('data-rail'), text: tr.textContent,
    })));
    const totals = await page.$$eval('[data-testid=statement-totals] tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent)));
    const balance = await text(page, '[data-testid=balance]');
    const fits = await fitsLaptop(page);
    await page.screenshot({ path: path.join(input.shots, 'console-vendor-statement.png'), fullPage: true });
    const href = await page.$eval('#statement-csv', (a) => (a as HTMLAnchorElement).href);
    const csv = await page.evaluate((u) => fetch(u).then((r) => r.text()), href);
    return { url: page.url(), vendorRow, lines, totals, balance, fits, href, csv };
  },

  async financeOnQueue(browser, input) {
    const { page } = await signedIn(browser, input);
    const opened = await page.goto(`${input.apiUrl}/console/payouts`);
    return { status: opened?.status(), decideLinks: (await page.$$('a[href*="/decide/"]')).length, body: await text(page, 'main') };
  },

  async keyboard(browser, input) {
    const { page } = await signedIn(browser, input);
    await page.keyboard.press('Tab');
    const first = await page.evaluate(() => document.activeElement?.textContent);
    await page.keyboard.press('Tab');
    const second = await page.evaluate(() => { const el = document.activeElement as HTMLElement; return [el.tagName, getComputedStyle(el).outlineStyle]; });
    const unlabeled: string[] = [];
    for (const where of ['/console/payouts', `/console/payouts/${input.orderId}/decide/mark-paid-externally`]) {
      await page.goto(`${input.apiUrl}${where}`);
      unlabeled.push(...await page.$$eval('input:not([type=hidden]), select, textarea', (els) => els.filter((e) => !e.id || !document.querySelector(`label[for="${e.id}"]`)).map((e) => e.outerHTML)));
    }
    await shot(input, page, 'console-mark-paid-confirm');
    const signIn = await (await browser.createBrowserContext()).newPage();
    await signIn.goto(`${input.apiUrl}/console/sign-in`);
    const focusedOnLoad = await signIn.evaluate(() => document.activeElement?.id);
    await shot(input, signIn, 'console-sign-in');
    return { first, second, unlabeled, focusedOnLoad };
  },
};

async function main(): Promise<void> {
  const scenario = SCENARIOS[process.argv[2] ?? ''];
  if (!scenario) throw new Error(`no scenario ${process.argv[2]}; one of ${Object.keys(SCENARIOS).join(', ')}`);
  let stdin = '';
  for await (const chunk of process.stdin) stdin += chunk;
  const browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--headless=new'], defaultViewport: { width: 1366, height: 768 } });
  try {
    process.stdout.write(`${JSON.stringify({ result: await scenario(browser, JSON.parse(stdin) as Input) })}\n`);
  } finally {
    await browser.close();
  }
}

main().catch((err: unknown) => {
  process.stdout.write(`${JSON.stringify({ error: String((err as Error)?.stack ?? err) })}\n`);
  process.exit(1);
});
