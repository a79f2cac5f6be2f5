/// <reference lib="dom" />
/** The browser half of test/integration/console.browser.test.ts: puppeteer-core is an ES module,
 * which jest's CommonJS runtime cannot load, so each scenario runs here in node (through tsx) and
 * prints what it saw as one JSON line; the jest test makes the assertions. Usage:
 * `tsx console.driver.mts <scenario>` with `{ apiUrl, key, person, shots, ... }` as JSON on stdin. */
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

interface Input { apiUrl: string; key: string; person: string; shots: string; fixtures?: string; orderId?: string; exceptionId?: number; resolve?: boolean; vendorId?: string; from?: string; to?: string; settlement?: SettlementInput; ops?: OpsPagesInput }
/** The ops and admin pages' part of the input (console.opsPages.browser.test.ts). */
interface OpsPagesInput { quarantineId?: number; search?: string; parkedOrderId?: string; path?: string }
/** The settlement scenarios' part of the input (console.settlement.browser.test.ts). */
interface SettlementInput { vendorIds?: string[]; batchId?: string; line?: string; wrongAmount?: string; utr?: string; badResponse?: string; response?: string; statement?: string }

/** What the browser reported against the Content-Security-Policy, on every page a scenario opened
 * (each scenario's result carries it: a violation means the CSP broke part of a page). */
const cspViolations: string[] = [];
async function watchCsp(page: Page): Promise<Page> {
  page.on('console', (m) => { if (/Content Security Policy|securitypolicyviolation/i.test(m.text())) cspViolations.push(`${page.url()}: ${m.text()}`); });
  await page.evaluateOnNewDocument(() => document.addEventListener('securitypolicyviolation', (e) => console.error(`securitypolicyviolation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`)));
  return page;
}

async function signedIn(browser: Browser, input: Input): Promise<{ page: Page; landed: string }> {
  const page = await watchCsp(await (await browser.createBrowserContext()).newPage());
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
// Chromium applies `autofocus` at its next rendering update, which may come after the load event
// that ends a navigation: give it a moment, then answer what has focus (a page without autofocus
// still answers '' or 'body').
const focusedAfterLoad = async (page: Page, expected: string) => {
  await page.waitForFunction((id) => document.activeElement?.id === id, { timeout: 3_000 }, expected).catch(() => undefined);
  return page.evaluate(() => document.activeElement?.id);
};

/** Tells the test (on stdout, one line) that the page is where the test should act now. */
const tellTest = (event: string) => process.stdout.write(`${JSON.stringify({ event })}\n`);
const rowsOf = (page: Page, selector: string) => page.$$eval(selector, (rows) => rows.map((r) => Array.from(r.querySelectorAll('td'), (td) => td.innerText.replace(/\s+/g, ' ').trim())));
/** Polls a selector's text (through reloads htmx asks for) until it matches, or gives up. */
async function textUntil(page: Page, selector: string, wanted: RegExp, ms = 30_000): Promise<string> {
  let last = '';
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    last = await text(page, selector).catch(() => last);
    if (wanted.test(last)) return last;
  }
  throw new Error(`${selector} never matched ${wanted}: last "${last}"`);
}

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
    const totals = await text(page, '[data-testid=exception-totals]');
    const fits = await fitsLaptop(page);
    await shot(input, page, 'console-exceptions');
    const href = await page.$eval('#export-csv', (a) => (a as HTMLAnchorElement).href);
    const csv = await page.evaluate((u) => fetch(u).then((r) => r.text()), href);
    if (!input.resolve) return { row, rowCount, totals, fits, href, csv };
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
    return { landed, row, webUi, switchState: await text(page, '[data-testid=switch-state]'), backlogEta: await text(page, '[data-testid=backlog-eta]'), balanceWall: await text(page, '[data-testid=balance-wall]'), fits };
  },

  async retry(browser, input) {
    const { page } = await signedIn(browser, input);
    await submit(page, `a[aria-label="Retry: ${input.orderId}"]`);
    const focused = await focusedAfterLoad(page, 'reason');
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

  /** A batch's own payout page lists its orders; a member order's page links back to the batch. */
  async batch(browser, input) {
    const { page } = await signedIn(browser, input);
    await page.goto(`${input.apiUrl}/console/payouts/${input.orderId}`);
    const status = await text(page, '[data-testid=payout-status]');
    const orders = await page.$$eval('table[aria-label="Orders in the batch"] tbody tr', (rows) => rows.map((r) => Array.from(r.querySelectorAll('td'), (td) => td.textContent ?? '')));
    const fits = await fitsLaptop(page);
    await shot(input, page, 'console-payout-batch');
    await submit(page, 'table[aria-label="Orders in the batch"] tbody tr a');
    const member = { path: new URL(page.url()).pathname, status: await text(page, '[data-testid=payout-status]'), section: await page.$eval('main', (m) => m.textContent ?? '') };
    return { status, orders, fits, member };
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

  async settlementRun(browser, input) {
    const { page } = await signedIn(browser, input);
    const nav = await page.$$eval('header nav a', (as) => as.map((a) => a.textContent));
    await submit(page, 'header nav a[href="/console/settlement"]');
    const period = { from: await page.$eval('#run-from', (i) => (i as HTMLInputElement).value), to: await page.$eval('#run-to', (i) => (i as HTMLInputElement).value) };
    const owed = await page.$$eval('[data-testid=owed] tbody tr[data-vendor-id]', (trs) => trs.map((tr) => [tr.getAttribute('data-vendor-id'), tr.textContent]));
    const unlabeled = async () => page.$$eval('input:not([type=hidden]), select, textarea', (els) => els.filter((e) => !e.id || !document.querySelector(`label[for="${e.id}"]`)).map((e) => e.outerHTML));
    const unlabeledOnRuns = await unlabeled();
    for (const vendorId of input.settlement!.vendorIds!) await page.click(`#vendor-${vendorId}`);
    await submit(page, 'form[aria-label="Start a settlement run"] button[type=submit]');
    const watching = new URL(page.url()).searchParams.get('watch');
    await page.waitForSelector('#run-progress a[data-batch-id]', { timeout: 30_000 });
    const progress = await text(page, '#run-progress');
    await shot(input, page, 'console-settlement-run');
    await submit(page, '#run-progress a[data-batch-id]');
    const lines = await page.$$eval('[data-testid=lines] tbody tr[data-reference]', (trs) => trs.map((tr) => ({ reference: tr.getAttribute('data-reference'), cells: Array.from(tr.querySelectorAll('td'), (td) => td.textContent) })));
    const carried = await page.$$eval('[data-testid=carried] tbody tr[data-vendor-id]', (trs) => trs.map((tr) => ({ vendorId: tr.getAttribute('data-vendor-id'), reason: tr.getAttribute('data-reason'), text: tr.textContent })));
    const totals = await page.$$eval('[data-testid=totals] td', (tds) => tds.map((td) => td.textContent));
    const unlabeledFields = [...unlabeledOnRuns, ...await unlabeled()];
    const fits = await fitsLaptop(page);
    await page.screenshot({ path: path.join(input.shots, 'console-settlement-batch.png'), fullPage: true });
    const href = await page.$eval('#bank-file', (a) => (a as HTMLAnchorElement).href);
    const bankFile = await page.evaluate((u) => fetch(u).then(async (r) => ({ status: r.status, type: r.headers.get('content-type'), disposition: r.headers.get('content-disposition'), csv: await r.text() })), href);
    return { nav, period, owed, watching, progress, url: page.url(), lines, carried, totals, unlabeledFields, fits, href, bankFile, html: await page.content() };
  },

  async settlementDecide(browser, input) {
    const s = input.settlement!;
    const { page } = await signedIn(browser, input);
    await page.goto(`${input.apiUrl}/console/settlement/batches/${s.batchId}`);
    const status = async () => (await page.$eval('#refused', (e) => e.getAttribute('data-code')).catch(() => null));
    // An amount that is not the line's: refused in the API's words, the typed values kept.
    await page.type(`#utr-${s.line}`, s.utr!);
    await page.type(`#amount-${s.line}`, s.wrongAmount!);
    const [wrong] = await Promise.all([page.waitForNavigation(), page.click(`form[aria-label="Record ${s.line} paid"] button`)]);
    const wrongAmount = { status: wrong?.status(), code: await status(), text: await text(page, '#refused'), line: await text(page, '[data-testid=refused-line]'), field: await text(page, '[data-testid=refused-field]'), keptUtr: await page.$eval(`#utr-${s.line}`, (i) => (i as HTMLInputElement).value) };
    await shot(input, page, 'console-settlement-refused');
    await page.$eval(`#amount-${s.line}`, (i) => { (i as HTMLInputElement).value = ''; });
    await submit(page, `form[aria-label="Record ${s.line} paid"] button`);
    const paid = { notice: await text(page, '#done'), row: await text(page, `tr[data-reference="${s.line}"]`), progress: await text(page, '#run-progress'), totals: await page.$$eval('[data-testid=totals] td', (tds) => tds.map((td) => td.textContent)) };
    const respond = async (csv: string) => {
      await page.$eval('#response-csv', (t, v) => { (t as HTMLTextAreaElement).value = v; }, csv);
      return (await Promise.all([page.waitForNavigation(), page.click('form[aria-label="Import the bank\'s response"] button')]))[0];
    };
    const bad = await respond(s.badResponse!);
    const badResponse = { status: bad?.status(), code: await status(), text: await text(page, '#refused'), line: await text(page, '[data-testid=refused-line]'), field: await text(page, '[data-testid=refused-field]') };
    await page.goto(`${input.apiUrl}/console/settlement/batches/${s.batchId}`);
    await respond(s.response!);
    const imported = await text(page, '#done');
    // The run closes once every line is decided: the fragment polls until Temporal says so.
    await page.waitForFunction(() => document.querySelector('#run-progress')?.getAttribute('data-state') === 'done', { timeout: 30_000 });
    const closed = { batchStatus: await text(page, '[data-testid=batch-status]'), phase: await text(page, '[data-testid=run-phase]'), statuses: await page.$$eval('[data-testid=lines] tr[data-reference]', (trs) => trs.map((tr) => [tr.getAttribute('data-reference'), tr.getAttribute('data-status')])), forms: (await page.$$('form[aria-label^="Record"]')).length, bankFile: await page.$('#bank-file') !== null };
    await page.screenshot({ path: path.join(input.shots, 'console-settlement-closed.png'), fullPage: true });
    return { wrongAmount, paid, badResponse, imported, closed };
  },

  async settlementRecon(browser, input) {
    const { page } = await signedIn(browser, input);
    await page.goto(`${input.apiUrl}/console/bank-statements`);
    await page.$eval('#csv', (t, v) => { (t as HTMLTextAreaElement).value = v; }, input.settlement!.statement!);
    await submit(page, 'form[aria-label="Upload a bank statement"] button');
    const statement = await text(page, '#bank-result');
    await page.goto(`${input.apiUrl}/console/recon`);
    for (const [id, value] of [['#from', input.from!], ['#to', input.to!]] as const) await page.$eval(id, (i, v) => { (i as HTMLInputElement).value = v; }, value);
    await submit(page, 'form[aria-label="Start a run"] button');
    await page.waitForFunction(() => document.querySelector('#progress')?.getAttribute('data-state') === 'done', { timeout: 60_000 });
    const run = await text(page, '#progress');
    await page.goto(`${input.apiUrl}/console/exceptions?status=open&from=${input.from}&to=${input.to}`);
    const open = await page.$$eval('tbody tr[data-exception-id]', (trs) => trs.map((tr) => tr.querySelectorAll('td')[4]?.textContent ?? ''));
    await page.screenshot({ path: path.join(input.shots, 'console-settlement-recon.png'), fullPage: true });
    return { statement, run, open };
  },

  /** The webhook quarantine: totals, the reason and the effect in words, the body behind a click,
   * then an acknowledgement with a note. */
  async quarantine(browser, input) {
    const { page } = await signedIn(browser, input);
    await page.goto(`${input.apiUrl}/console/webhooks/quarantine`);
    const totals = await text(page, '[data-testid=quarantine-totals]');
    const rows = await page.$$eval('tr[data-quarantine-id]', (trs) => trs.map((r) => ({
      id: Number(r.getAttribute('data-quarantine-id')), recovery: r.querySelector('[data-recovery]')?.getAttribute('data-recovery'), text: (r.textContent ?? '').replace(/\s+/g, ' ').trim(),
    })));
    const row = `tr[data-quarantine-id="${input.ops!.quarantineId}"]`;
    const bodyRow = `tr[data-body-of="${input.ops!.quarantineId}"]`;
    const bodyHiddenFirst = await page.$eval(`${bodyRow} details`, (d) => !(d as HTMLDetailsElement).open);
    await page.click(`${bodyRow} details summary`);
    const body = await page.$eval(`${bodyRow} details pre`, (p) => ({ text: p.textContent ?? '', visible: (p as HTMLElement).offsetHeight > 0 }));
    const fits = await fitsLaptop(page);
    await shot(input, page, 'console-webhook-quarantine');
    const html = await page.content();
    await page.type(`${row} input[name=note]`, 'demo clock ahead; the settlement is fetched by recon');
    await submit(page, `${row} button`);
    const notice = await text(page, '.notice');
    const after = { totals: await text(page, '[data-testid=quarantine-totals]'), stillListed: await page.$(row) !== null };
    await page.goto(`${input.apiUrl}/console/webhooks/quarantine?show=acknowledged`);
    const acknowledged = await text(page, row);
    return { totals, rows, bodyHiddenFirst, body, fits, html, notice, after, acknowledged };
  },

  /** Payout batches found by pair and day, with totals; a batch links to its own payout page. */
  async batches(browser, input) {
    const { page } = await signedIn(browser, input);
    await page.goto(`${input.apiUrl}/console/batches`);
    await page.type('#vendorId', input.vendorId!);
    await submit(page, 'form[aria-label="Filter batches"] button');
    const filtered = new URL(page.url()).search;
    const totals = await text(page, '[data-testid=batch-totals]');
    const rows = await rowsOf(page, 'tr[data-batch-id]');
    const fits = await fitsLaptop(page);
    await shot(input, page, 'console-batches');
    await submit(page, 'tr[data-batch-id] a');
    return { filtered, totals, rows, fits, opened: { path: new URL(page.url()).pathname, status: await text(page, '[data-testid=batch-status]'), orders: await rowsOf(page, 'table[aria-label="Orders in the batch"] tbody tr'), closeForm: await page.$('form[action$="/close"]') !== null, trace: await text(page, '#trace + p') } };
  },

  /** Vendors' bank details, masked, and one vendor's change history. */
  async bankDetails(browser, input) {
    const { page, landed } = await signedIn(browser, input);
    const nav = await page.$$eval('header nav a', (as) => as.map((a) => a.textContent));
    const opened = await page.goto(`${input.apiUrl}/console/vendors/bank-details?search=${encodeURIComponent(input.ops!.search ?? '')}`);
    if (opened?.status() !== 200) return { landed, nav, status: opened?.status(), body: await text(page, 'main') };
    const totals = await text(page, '[data-testid=bank-details-totals]');
    const rows = await rowsOf(page, 'tr[data-vendor-id]');
    await submit(page, `tr[data-vendor-id="${input.vendorId}"] a`);
    const history = await rowsOf(page, 'table[aria-label="Bank detail changes"] tbody tr');
    const fits = await fitsLaptop(page);
    await shot(input, page, 'console-bank-details');
    return { landed, nav, status: 200, totals, rows, history, fits, html: await page.content() };
  },

  /** The queue page left open: a payout parked elsewhere appears without a reload, the totals move,
   * and a pause made through the API shows on the switch. */
  async liveQueue(browser, input) {
    const { page } = await signedIn(browser, input);
    await page.evaluate(() => { (window as unknown as { sameLoad: boolean }).sameLoad = true; });
    const before = { totals: await text(page, '[data-testid=queue-totals]'), listed: await page.$(`tr[data-order-id="${input.ops!.parkedOrderId}"]`) !== null };
    tellTest('page-open');
    const row = await textUntil(page, `#queue`, new RegExp(input.ops!.parkedOrderId!));
    const totals = await text(page, '[data-testid=queue-totals]');
    const sameLoad = await page.evaluate(() => (window as unknown as { sameLoad?: boolean }).sameLoad === true);
    await shot(input, page, 'console-payout-queue-live');
    const api = (action: string, reason: string) => fetch(`${input.apiUrl}/ops/transfers/${action}`, {
      method: 'POST', headers: { authorization: `Bearer ${input.key}`, 'x-actor': 'Ravi', 'content-type': 'application/json' }, body: JSON.stringify({ reason }),
    }).then((r) => r.status);
    const paused = await api('pause', 'bank incident, paused from the API');
    const switchState = await textUntil(page, '[data-testid=switch-state]', /PAUSED/);
    const form = await page.$eval('#switch-live ~ form', (f) => f.getAttribute('action'));
    const resumed = await api('resume', 'incident over');
    const switchAfter = await textUntil(page, '[data-testid=switch-state]', /running/);
    return { before, row: row.includes(input.ops!.parkedOrderId!), totals, sameLoad, paused, switchState, form, resumed, switchAfter };
  },

  /** A payout's page draws its trace from the trace store. */
  async trace(browser, input) {
    const { page } = await signedIn(browser, input);
    await page.goto(`${input.apiUrl}/console/payouts/${input.orderId}`);
    const traceIds = await page.$$eval('table[data-trace-id]', (ts) => ts.map((t) => t.getAttribute('data-trace-id')));
    const spans = await page.$$eval('tr[data-span]', (rows) => rows.map((r) => r.getAttribute('data-span')));
    await page.$eval('#trace', (h) => h.scrollIntoView());
    await shot(input, page, 'console-payout-trace');
    return { traceIds, spans, fits: await fitsLaptop(page) };
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
    const signIn = await watchCsp(await (await browser.createBrowserContext()).newPage());
    await signIn.goto(`${input.apiUrl}/console/sign-in`);
    const focusedOnLoad = await focusedAfterLoad(signIn, 'key');
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
    const result = await scenario(browser, JSON.parse(stdin) as Input) as Record<string, unknown>;
    process.stdout.write(`${JSON.stringify({ result: { ...result, cspViolations } })}\n`);
  } finally {
    await browser.close();
  }
}

main().catch((err: unknown) => {
  const csp = cspViolations.length ? `\nthe CSP blocked part of a page:\n${cspViolations.join('\n')}` : '';
  process.stdout.write(`${JSON.stringify({ error: `${String((err as Error)?.stack ?? err)}${csp}` })}\n`);
  process.exit(1);
});
