/** Issue 20 item 6, the console's settlement runs, in a real headless Chromium (Debian's chromium,
 * driven by puppeteer-core through console.driver.mts) against the real stack: a finance user settles
 * a week of offline lines for three vendors (one owes commission back and is carried forward),
 * downloads the bank file, records one line paid with the bank's UTR, imports the bank's response
 * for another, imports the bank statement with the debits and runs recon for the week: no offline-rail
 * exception is left open. Refused decisions show the API's words naming the line and field and change
 * nothing; the pages are finance only. Screenshots go to .data/screenshots/. */
import fs from 'node:fs';
import path from 'node:path';
import { addDays, istDateOf } from '../../src/domain/calendar';
import { eventually } from './payoutSeed';
import { inBrowser, keyOf, SHOTS } from './consoleBrowser';
import { startPayoutStack, type PayoutStack } from './payoutStack';
import { call, cashOrder, fundedEmployer, offlineVendor, subsidisedOrder, type OfflineVendor } from './offlineOrders';

const OFFLINE_RAIL = ['offline-payment-without-debit', 'unexplained-bank-debit', 'offline-debit-amount-differs'];

describe('the console: settlement runs', () => {
  let stack: PayoutStack;
  const today = istDateOf(new Date());
  const week = { from: addDays(today, -6), to: today };
  let a: OfflineVendor; let b: OfflineVendor; let c: OfflineVendor;
  let employerId: string;
  let batchId: string;
  let lineA: string; let lineB: string;
  const UTR_A = 'HDFCN2026120700001';
  const UTR_B = 'HDFCN2026120700002';

  const finance = (settlement: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({ apiUrl: stack.apiUrl, key: keyOf(stack.keys.finance), person: 'Fiona', settlement, ...extra });
  /** Everything a refused decision must leave as it was. */
  const snapshot = async () => ({
    lines: (await stack.db.query('SELECT id, status, utr, paid_on, failure_reason FROM settlement_lines ORDER BY id')).rows,
    members: (await stack.db.query('SELECT line_id, ledger_id, active FROM settlement_line_members ORDER BY line_id, ledger_id')).rows,
    batches: (await stack.db.query('SELECT id, status FROM settlement_batches ORDER BY id')).rows,
    actions: (await stack.db.query('SELECT count(*)::int AS n FROM settlement_actions')).rows[0].n,
  });
  const openOfflineRail = async () => (await stack.db.query<{ reason: string; class: string; entity_id: string | null }>(
    `SELECT reason, class, entity_id FROM recon_exceptions WHERE status = 'open' AND reason = ANY($1) ORDER BY reason, entity_id`, [OFFLINE_RAIL])).rows;

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    stack = await startPayoutStack({ name: 'console-settlement' });
    employerId = await fundedEmployer(stack, 20_000_000);
    a = await offlineVendor(stack, employerId, { name: 'Anand Bhavan' });
    b = await offlineVendor(stack, employerId, { name: 'Bombay Canteen' });
    c = await offlineVendor(stack, employerId, { name: 'Chai Point' });
    await subsidisedOrder(stack, employerId, a.vendorId, 6_000_000); // net ₹54,000 (10% commission)
    await subsidisedOrder(stack, employerId, a.vendorId, 6_000_000); // net ₹54,000
    await cashOrder(stack, employerId, b.vendorId, 10_000, 8_000); // ₹80 subsidy − ₹10 commission: owed ₹70
    await subsidisedOrder(stack, employerId, b.vendorId, 15_000); // net ₹135
    await cashOrder(stack, employerId, c.vendorId, 50_000, 2_000); // ₹20 subsidy − ₹50 commission: owes ₹30 back
  });

  afterAll(async () => {
    await stack?.close();
  });

  test('when finance starts a run for the week for three vendors, then the batch has a line per vendor owed (masked accounts, ₹ with Indian grouping), the vendor that owes back is carried forward, and the bank file is the API\'s', async () => {
    const seen = await inBrowser('settlementRun', finance({ vendorIds: [a.vendorId, b.vendorId, c.vendorId] }));
    expect(seen.nav).toContain('Settlement runs');
    expect(seen.period).toEqual(week);
    // Before the run: who a run would pay, and who it would carry forward.
    const owed = Object.fromEntries(seen.owed as Array<[string, string]>);
    expect(owed[a.vendorId]).toContain('pay ₹1,08,000.00');
    expect(owed[b.vendorId]).toContain('pay ₹205.00');
    expect(owed[c.vendorId]).toContain('owes ₹30.00 back');
    expect(seen.watching).toMatch(/^settlement-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}-v[0-9a-f]{12}$/);
    expect(seen.progress).toMatch(/batch stb_\w{14}/);

    batchId = new URL(seen.url).pathname.split('/').pop()!;
    const api = (await call(stack, stack.keys.finance, 'GET', `/finance/settlement/batches/${batchId}`)).body;
    expect(api.workflowId).toBe(seen.watching);
    lineA = api.lines.find((l: { vendorId: string }) => l.vendorId === a.vendorId).reference;
    lineB = api.lines.find((l: { vendorId: string }) => l.vendorId === b.vendorId).reference;
    const rows = Object.fromEntries((seen.lines as Array<{ reference: string; cells: string[] }>).map((l) => [l.reference, l.cells]));
    expect(Object.keys(rows).sort()).toEqual([lineA, lineB].sort());
    // reference, vendor, beneficiary, account, IFSC, amount, orders, status, UTR, paid on
    expect(rows[lineA]!.slice(2, 10)).toEqual(['Anand Bhavan', `XXXXXX${a.accountNumber!.slice(-4)}`, 'HDFC0001234', '₹1,08,000.00', '2', 'open', '—', '—']);
    expect(rows[lineB]!.slice(2, 10)).toEqual(['Bombay Canteen', `XXXXXX${b.accountNumber!.slice(-4)}`, 'HDFC0001234', '₹205.00', '2', 'open', '—', '—']);
    expect(seen.carried).toEqual([{ vendorId: c.vendorId, reason: 'net_not_positive', text: expect.stringContaining('owes ₹30.00 back') }]);
    expect(seen.carried[0].text).toContain('-₹30.00');
    // lines, open, paid, failed, cancelled, amount, paid, still open
    expect(seen.totals).toEqual(['2', '2', '0', '0', '0', '₹1,08,205.00', '₹0.00', '₹1,08,205.00']);
    expect(seen.html).not.toContain(a.accountNumber);
    expect(seen.fits).toBe(true);
    expect(seen.unlabeledFields).toEqual([]);

    expect(seen.bankFile).toMatchObject({ status: 200, type: expect.stringContaining('text/csv'), disposition: `attachment; filename="${batchId}-bank-file.csv"` });
    expect(seen.bankFile.csv).toContain(`${lineA},Anand Bhavan,${a.accountNumber},HDFC0001234,108000.00,10800000,PAYOUTS ${lineA}`);
    const apiFile = await call(stack, stack.keys.finance, 'GET', `/finance/settlement/batches/${batchId}/bank-file`);
    expect(seen.bankFile.csv).toBe(apiFile.body);

    const audit = (await stack.db.query<{ action: string; actor: string }>('SELECT action, actor FROM settlement_actions WHERE batch_id = $1 ORDER BY id', [batchId])).rows;
    expect(audit.slice(0, 2)).toEqual([{ action: 'start', actor: 'key:test-finance (Fiona)' }, { action: 'bank_file', actor: 'key:test-finance (Fiona)' }]);
  });

  test('when finance records one line paid with its UTR and imports the bank\'s response for the other, then refusals name the line and field and change nothing, and the batch and its run close', async () => {
    const before = await snapshot();
    const seen = await inBrowser('settlementDecide', finance({
      batchId, line: lineA, utr: UTR_A, wrongAmount: '100000.00',
      // B's row reuses A's UTR: the whole file is refused, naming its line and the field.
      badResponse: `reference,status,utr,value_date,amount,reason\n${lineB},paid,${UTR_A},${today},205.00,\n`,
      response: `reference,status,utr,value_date,amount,reason\n${lineB},paid,${UTR_B},${today},205.00,\n`,
    }));
    expect(seen.wrongAmount).toMatchObject({ status: 409, code: 'settlement_amount_differs', line: lineA, field: 'amount', keptUtr: UTR_A });
    expect(seen.wrongAmount.text).toContain(`line ${lineA} is for ₹1,08,000.00, not ₹1,00,000.00`);
    expect(seen.paid.notice).toContain(`Line ${lineA} recorded paid`);
    expect(seen.paid.row).toContain(UTR_A);
    // Right after the decision the page says one thing: the totals table counts the line paid, and
    // the run's line above it repeats no count of its own (it said "paid 0" while the run caught up).
    expect(seen.paid.totals.slice(0, 3)).toEqual(['2', '1', '1']);
    expect(seen.paid.progress).not.toMatch(/paid \d/);
    expect(seen.badResponse).toMatchObject({ status: 409, code: 'utr_already_used', line: lineB, field: 'utr' });
    expect(seen.badResponse.text).toContain(`file line 2: UTR ${UTR_A} already pays line ${lineA}; nothing was imported`);
    expect(seen.imported).toContain('1 row recorded');
    expect(seen.closed).toEqual({ batchStatus: 'closed', phase: 'completed: closed', statuses: [[lineA, 'paid'], [lineB, 'paid']].sort(), forms: 0, bankFile: false });

    // Only the two good decisions changed anything: the refusals left no trace.
    const after = await snapshot();
    expect(after.actions).toBe(before.actions + 3); // paid, paid (by the import), import
    const lines = (await stack.db.query('SELECT reference, status, utr, to_char(paid_on, \'YYYY-MM-DD\') AS paid_on, decided_by FROM settlement_lines WHERE batch_id = $1 ORDER BY reference', [batchId])).rows;
    expect(lines).toEqual([
      { reference: lineA, status: 'paid', utr: UTR_A, paid_on: today, decided_by: 'key:test-finance (Fiona)' },
      { reference: lineB, status: 'paid', utr: UTR_B, paid_on: today, decided_by: 'key:test-finance (Fiona)' },
    ].sort((x, y) => x.reference.localeCompare(y.reference)));
    // C owes back: still in the open ledger, in no batch, for the next run to net.
    const carried = (await stack.db.query('SELECT amount_paise, batch_line_id FROM offline_ledger_open WHERE vendor_id = $1', [c.vendorId])).rows;
    expect(carried).toEqual([{ amount_paise: -3_000, batch_line_id: null }]);
  });

  test('when finance imports the bank statement with the two debits and runs recon for the week, then no offline-rail exception is left open (before the statement, both paid lines were raised)', async () => {
    // Without the debits, recon raises each paid line (the control: recon does look at the offline rail).
    const started = await call(stack, stack.keys.finance, 'POST', '/finance/recon/runs', week);
    expect(started.status).toBe(202);
    await stack.temporal.client.workflow.getHandle(started.body.workflowId).result();
    expect((await openOfflineRail()).map((e) => [e.reason, e.entity_id])).toEqual([['offline-payment-without-debit', lineA], ['offline-payment-without-debit', lineB]].sort());

    const statement = ['utr,amount,value_date,narration,type', `${UTR_A},108000.00,${today},NEFT ANAND BHAVAN ${lineA},DR`, `${UTR_B},205.00,${today},NEFT BOMBAY CANTEEN ${lineB},DR`].join('\n');
    const seen = await inBrowser('settlementRecon', finance({ statement }, week));
    expect(seen.statement).toMatch(/2 of 2 lines added/);
    expect(seen.run).toContain('completed');
    expect(seen.open.filter((reason: string) => OFFLINE_RAIL.includes(reason))).toEqual([]);
    expect(await openOfflineRail()).toEqual([]);
  });

  test('when someone without finance opens or posts to the settlement pages, then 403 (401 or sign-in without a session); a finance form without its CSRF token is refused; a bad form changes nothing', async () => {
    const [fin, ops] = await Promise.all([inBrowser('session', finance()), inBrowser('session', { ...finance(), key: keyOf(stack.keys.ops), person: 'Asha' })]);
    const get = (url: string, cookie: string) => fetch(`${stack.apiUrl}${url}`, { headers: { cookie, accept: 'text/html' }, redirect: 'manual' });
    const post = (url: string, cookie: string, form: Record<string, string>) => fetch(`${stack.apiUrl}${url}`, {
      method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString(),
    });
    const opsPage = await get('/console/settlement', ops.cookieHeader);
    expect(opsPage.status).toBe(403);
    expect(await opsPage.text()).toContain('needs the role finance');
    expect((await get(`/console/settlement/batches/${batchId}/bank-file`, ops.cookieHeader)).status).toBe(403);
    const opsRun = await post('/console/settlement/runs', ops.cookieHeader, { _csrf: ops.csrf, ...week });
    expect([opsRun.status, ((await opsRun.json()) as { error: { code: string } }).error.code]).toEqual([403, 'forbidden']);
    expect((await get('/console/settlement', '')).headers.get('location')).toBe('/console/sign-in');
    expect((await post('/console/settlement/runs', '', week)).status).toBe(401);
    const before = await snapshot();
    const forged = await post('/console/settlement/runs', fin.cookieHeader, { _csrf: ops.csrf, ...week });
    expect([forged.status, ((await forged.json()) as { error: { code: string } }).error.code]).toEqual([403, 'csrf_token_invalid']);
    const backwards = await post('/console/settlement/runs', fin.cookieHeader, { _csrf: fin.csrf, from: today, to: week.from });
    expect([backwards.status, ((await backwards.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_request']);
    expect(await snapshot()).toEqual(before);
    expect((await get('/console/settlement', fin.cookieHeader)).status).toBe(200);
  });

  test('when finance cancels a batch from its page, then a reason is required (refused, nothing changed), and once given the batch is cancelled and its line owed again', async () => {
    await subsidisedOrder(stack, employerId, b.vendorId, 20_000); // owed ₹180
    const fin = await inBrowser('session', finance());
    const form = (url: string, fields: Record<string, string>) => fetch(`${stack.apiUrl}${url}`, {
      method: 'POST', redirect: 'manual', headers: { cookie: fin.cookieHeader, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: fin.csrf, ...fields }).toString(),
    });
    const started = await form('/console/settlement/runs', { from: today, to: today, vendorIds: b.vendorId });
    expect(started.status).toBe(303);
    const workflowId = new URL(started.headers.get('location')!, stack.apiUrl).searchParams.get('watch')!;
    const batch = await eventually(() => stack.db.query<{ id: string }>(`SELECT id FROM settlement_batches WHERE workflow_id = $1 AND status = 'open'`, [workflowId]), (r) => r.rows.length === 1, 20_000);
    const id = batch.rows[0]!.id;

    const before = await snapshot();
    const short = await form(`/console/settlement/batches/${id}/cancel`, { reason: 'no' });
    expect(short.status).toBe(400);
    const page = await short.text();
    expect(page).toContain('Refused, nothing was changed:');
    expect(page).toContain('reason: a reason is required');
    expect(page).toContain('<button type="submit" class="danger">Cancel batch</button>');
    expect(await snapshot()).toEqual(before);

    const cancelled = await form(`/console/settlement/batches/${id}/cancel`, { reason: 'paying B with next week instead' });
    expect([cancelled.status, cancelled.headers.get('location')]).toEqual([303, `/console/settlement/batches/${id}?done=cancelled`]);
    expect((await stack.db.query('SELECT status, cancel_reason, cancelled_by FROM settlement_batches WHERE id = $1', [id])).rows[0])
      .toEqual({ status: 'cancelled', cancel_reason: 'paying B with next week instead', cancelled_by: 'key:test-finance (Fiona)' });
    expect((await stack.db.query('SELECT amount_paise, batch_line_id FROM offline_ledger_open WHERE vendor_id = $1', [b.vendorId])).rows).toEqual([{ amount_paise: 18_000, batch_line_id: null }]);
    expect((await stack.temporal.client.workflow.getHandle(workflowId).result())).toMatchObject({ phase: 'cancelled' });

    for (const name of ['console-settlement-run', 'console-settlement-batch', 'console-settlement-refused', 'console-settlement-closed', 'console-settlement-recon']) {
      expect(fs.existsSync(path.join(SHOTS, `${name}.png`)) ? name : `${name} missing`).toBe(name);
    }
  });
});
