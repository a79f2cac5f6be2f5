/** The console in a real headless Chromium (Debian's chromium, driven by puppeteer-core) against the
 * real stack: finance runs recon and watches it finish, filters, resolves and exports exceptions,
 * uploads bank statements; ops retry a parked payout and watch it settle, pause and resume
 * transfers; a finance session sees no payout action and is refused one posted directly. The
 * browser runs in a node child (console.driver.mts: puppeteer-core is an ES module jest cannot
 * load); screenshots of each page at 1366×768 go to .data/screenshots/. */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { mintKey } from '../support/apiKeys';
import { revokeApiKey } from '../../src/auth/apiKeys';
import { createGateway } from '../../src/gateway';
import { EXCEPTION_CSV_HEADER } from '../../src/reports/exceptionsCsv';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { eventually, payoutRow, seedPaidOrder } from './payoutSeed';
import { inBrowser, keyOf, SHOTS } from './consoleBrowser';
import { startPayoutStack, type PayoutStack } from './payoutStack';
import { twoOrdersInADailyBatch } from './batchSeed';


describe('the console in a browser', () => {
  let stack: PayoutStack;
  let parked: { orderId: string; account: string };
  let exceptionId: number;
  const as = (role: 'finance' | 'ops', extra: Record<string, unknown> = {}) => ({
    apiUrl: stack.apiUrl, key: keyOf(stack.keys[role]), person: role === 'finance' ? 'Fiona' : 'Asha', orderId: parked.orderId, exceptionId, ...extra,
  });

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    stack = await startPayoutStack({ name: 'console', env: { PAYOUT_HUMAN_RECHECK_MS: '60000' } });
    const { rows } = await stack.db.query(
      `INSERT INTO recon_exceptions (key, class, reason, severity, next_action, day, entity_id, settlement_id, order_id, expected_paise, actual_paise, details, first_run_id, last_run_id)
       VALUES ('amount-mismatch|pay_CONSOLE1', 'mismatched', 'amount-mismatch', 'high', 'Compare the gateway amount with our record.', '2026-07-15', 'pay_CONSOLE1', 'setl_CONSOLE1', 'ord_console1',
               12345678, 12345600, '{"utr":"UTRCONSOLE0001"}', 'run-x', 'run-x') RETURNING id`);
    exceptionId = rows[0].id as number;
    const account = await stack.sandbox.control.createLinkedAccount({ status: 'suspended' });
    const o = await seedPaidOrder(stack.db, { linkedAccountId: account });
    await temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue, stack.db).startPayout(o.orderId);
    await eventually(() => payoutRow(stack.db, o.orderId), (r) => r?.status === 'parked', 30_000);
    parked = { orderId: o.orderId, account };
  });

  afterAll(async () => {
    await stack?.close();
  });

  test('when finance signs in, then the cookie is HttpOnly, SameSite=Strict on /console, and the nav has only the finance pages', async () => {
    const seen = await inBrowser('session', as('finance'));
    expect(seen.landed).toBe('/console/recon');
    expect(seen.cookie).toEqual({ name: 'payouts_console', httpOnly: true, sameSite: 'Strict', path: '/console' });
    expect(seen.nav).toEqual(['Recon runs', 'Exceptions', 'Bank statements', 'Vendor statements', 'Settlement runs', 'Bank details']);
  });

  test('when finance starts a run for a window, then the progress bar polls until the run has ended at 100%, and the run is listed', async () => {
    const seen = await inBrowser('reconRun', as('finance'));
    expect(seen.watch).toBe('recon-2026-08-01-2026-08-02');
    expect(seen.final).toEqual({ value: 100, state: 'completed' });
    expect(seen.runs).toContain('2026-08-01 → 2026-08-02');
    expect(seen.fits).toBe(true);
  });

  test('when finance filters exceptions, then the row has its references and rupees with Indian grouping; the CSV is the API\'s file; the resolution is audited', async () => {
    const seen = await inBrowser('exceptions', as('finance'));
    expect(seen.rowCount).toBe(1);
    expect(seen.totals).toBe('1 exception · expected ₹1,23,456.78, actual ₹1,23,456.00, difference -₹0.78.');
    for (const t of ['pay_CONSOLE1', 'setl_CONSOLE1', 'ord_console1', 'UTRCONSOLE0001', '₹1,23,456.78', '₹1,23,456.00', '-₹0.78', 'Compare the gateway amount']) expect(seen.row).toContain(t);
    expect(seen.fits).toBe(true);
    const api = await fetch(`${stack.apiUrl}/finance/recon/exceptions.csv?${new URL(seen.href).searchParams}`, { headers: stack.keys.finance });
    expect(seen.csv).toBe(await api.text());
    const lines = (seen.csv as string).trimEnd().split('\r\n');
    expect(lines[0]!.split(',')).toEqual(EXCEPTION_CSV_HEADER);
    const cells = lines[1]!.match(/("([^"]|"")*"|[^,]*)(,|$)/g)!.map((c) => c.replace(/,$/, ''));
    const row = Object.fromEntries(EXCEPTION_CSV_HEADER.map((h, i) => [h, cells[i]]));
    expect(row).toMatchObject({ id: String(exceptionId), status: 'open', utr: 'UTRCONSOLE0001', expected_rupees: '"1,23,456.78"', expected_paise: '12345678', payment_id: 'pay_CONSOLE1' });
    const resolved = await inBrowser('exceptions', as('finance', { resolve: true }));
    expect(resolved.notice).toContain(`Exception ${exceptionId} resolved`);
    const audit = await stack.db.query('SELECT actor, note FROM recon_exception_actions WHERE exception_id = $1', [exceptionId]);
    expect(audit.rows).toEqual([{ actor: 'key:test-finance (Fiona)', note: 'gateway amount confirmed with Razorpay' }]);
  });

  test('when finance uploads a malformed statement, then each bad line is listed by its number; a good file uploaded again adds nothing', async () => {
    // The file is read into the form by the console's inline script: the CSP admits it by its hash
    // (inBrowser fails a scenario whose pages reported a CSP violation).
    const seen = await inBrowser('bank', as('finance'));
    expect(seen.cspViolations).toEqual([]);
    const lines = (seen.problems as Array<[string, string]>).map(([line]) => line);
    expect(lines).toEqual(expect.arrayContaining(['3', '4', '5']));
    expect(seen.problems.find(([line]: [string]) => line === '3')[1]).toContain('2026-09-31');
    expect(seen.first).toMatch(/lines added/);
    expect(seen.second).toContain('it added nothing');
  });

  test('when ops open the queue, then the parked payout shows its reason, amount, age and Web UI link, and the kill switch its state', async () => {
    const seen = await inBrowser('queue', as('ops'));
    expect(seen.landed).toBe('/console/payouts');
    expect(seen.row).toContain("the vendor's linked account is suspended at Razorpay");
    expect(seen.row).toContain('₹81.00');
    expect(seen.webUi).toBe(`${stack.config.TEMPORAL_UI_URL}/namespaces/default/workflows/payout-${parked.orderId}`);
    expect(seen.switchState).toContain('running');
    // The provider backlog: nothing left to send once the payout parked, at the configured budget.
    expect(seen.backlogEta).toContain(`No transfer waits to be sent at ${stack.config.RAZORPAY_WRITE_RPS} transfers a second`);
    expect(seen.balanceWall).toContain('No balance wall');
    expect(seen.fits).toBe(true);
  });

  test('when ops retry the parked payout after the account is fixed, then it settles; the decision is audited with the person', async () => {
    await stack.sandbox.control.setLinkedAccountStatus(parked.account, 'activated');
    const seen = await inBrowser('retry', as('ops'));
    expect(seen.focused).toBe('reason');
    expect(seen.notice).toContain('Retry: done');
    expect(seen.status).toBe('settled');
    expect(seen.hasProviderCode).toBe(true);
    expect(seen.hasWebUi).toBe(true);
    expect((await payoutRow(stack.db, parked.orderId))!.status).toBe('settled');
    const audit = await stack.db.query('SELECT r.actor, r.action, r.reason FROM review_actions r JOIN payouts p ON p.id = r.payout_id WHERE p.order_id = $1', [parked.orderId]);
    expect(audit.rows).toEqual([{ actor: 'key:test-ops (Asha)', action: 'retry', reason: 'account re-activated by the vendor' }]);
  });

  test('when ops pause and resume direct transfers with a reason, then the switch shows who set it and why', async () => {
    const seen = await inBrowser('killSwitch', as('ops'));
    expect(seen.paused).toMatch(/PAUSED — set by key:test-ops \(Asha\).*bank maintenance window/);
    expect(seen.pauseNotice).toContain('No new request leaves, and none was past the gate at that moment.');
    expect(seen.inFlight).toContain('No request past the gate is waiting for an answer');
    expect(seen.resumed).toContain('running');
    expect(seen.inFlightAfterResume).toBe(false);
  });

  test('when ops pause from the console while a request is past the gate, then the page says how many were in flight at that moment and lists the one still unanswered', async () => {
    const account = await stack.sandbox.control.createLinkedAccount();
    const o = await seedPaidOrder(stack.db, { linkedAccountId: account });
    await stack.db.query(`UPDATE payouts SET status = 'processing', attempts = 1, claimed_at = now(), request_sent_at = now() WHERE id = $1`, [o.payoutId]);
    const ops = await inBrowser('session', as('ops'));
    const form = (path: string, reason: string) => fetch(`${stack.apiUrl}${path}`, {
      method: 'POST', redirect: 'manual', headers: { cookie: ops.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: ops.csrf, reason }).toString(),
    });
    try {
      const paused = await form('/console/transfers/pause', 'bank incident');
      expect([paused.status, paused.headers.get('location')]).toEqual([303, '/console/payouts?switched=paused&inFlight=1']);
      const page = await (await fetch(`${stack.apiUrl}${paused.headers.get('location')}`, { headers: { cookie: ops.cookieHeader, accept: 'text/html' } })).text();
      expect(page).toContain('1 request was already past the gate at that moment and may still land.');
      expect(page).toContain('1 request past the gate still has no answer and may land');
      expect(page).toContain(`<a href="/console/payouts/${o.orderId}">${o.orderId}</a></td><td class="num">₹81.00</td><td><code>${account}</code>`);
    } finally {
      // No run owns the seeded row: out of the way before the resume's sweep looks.
      await stack.db.query(`UPDATE payouts SET status = 'cancelled' WHERE id = $1`, [o.payoutId]);
      await form('/console/transfers/resume', 'incident over');
    }
  });

  test('when a finance session opens the queue or posts an ops action directly, then 403 (the envelope for a direct POST); a token from another session is refused', async () => {
    const onQueue = await inBrowser('financeOnQueue', as('finance'));
    expect([onQueue.status, onQueue.decideLinks]).toEqual([403, 0]);
    expect(onQueue.body).toContain('needs the role ops');
    const finance = await inBrowser('session', as('finance'));
    const post = (url: string, cookie: string, body: string) => fetch(`${stack.apiUrl}${url}`, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body, redirect: 'manual' });
    const refused = await post(`/console/payouts/${parked.orderId}/decide/cancel`, finance.cookieHeader, `_csrf=${encodeURIComponent(finance.csrf)}&reason=not+mine+to+cancel`);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: { code: 'forbidden', message: expect.stringContaining('needs the role ops') } });
    const ops = await inBrowser('session', as('ops'));
    const forged = await post('/console/transfers/pause', ops.cookieHeader, `_csrf=${encodeURIComponent(finance.csrf)}&reason=forged+pause`);
    expect([forged.status, ((await forged.json()) as { error: { code: string } }).error.code]).toEqual([403, 'csrf_token_invalid']);
    const anonymous = await post('/console/transfers/pause', '', 'reason=anonymous');
    expect(anonymous.status).toBe(401);
    expect((await stack.db.query('SELECT paused FROM transfer_switch')).rows[0].paused).toBe(false);
  });

  test('when ops mark a review payout paid with the Razorpay transfer from the console form, then the API\'s check applies: a transfer of another amount is refused and changes nothing, the payout\'s own is recorded as its transfer', async () => {
    const account = await stack.sandbox.control.createLinkedAccount();
    const o = await seedPaidOrder(stack.db, { linkedAccountId: account });
    await stack.db.query(`UPDATE payouts SET status = 'review', attempts = 1, last_code = 'IDEMPOTENCY_KEY_EXPIRED' WHERE id = $1`, [o.payoutId]);
    const gateway = createGateway(stack.config);
    const send = async (amountPaise: number) => {
      const made = await gateway.createDirectTransfer({ account, amountPaise, idempotencyKey: randomUUID(), notes: { transaction_id: o.payoutId!, order_id: o.orderId } });
      if (made.type !== 'accepted') throw new Error(JSON.stringify(made));
      return made.entity.id;
    };
    const [wrong, right] = [await send(o.vendorNetPaise - 100), await send(o.vendorNetPaise)];
    const ops = await inBrowser('session', as('ops'));
    const decide = (transferId: string) => fetch(`${stack.apiUrl}/console/payouts/${o.orderId}/decide/mark-paid-externally`, {
      method: 'POST', redirect: 'manual', headers: { cookie: ops.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: ops.csrf, reason: 'found it in the Razorpay dashboard', transferId, reference: '' }).toString(),
    });
    const refused = await decide(wrong);
    expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([422, 'transfer_amount_mismatch']);
    expect(await payoutRow(stack.db, o.orderId)).toMatchObject({ status: 'review', provider_transfer_id: null });
    const taken = await decide(right);
    expect([taken.status, taken.headers.get('location')]).toEqual([303, `/console/payouts/${o.orderId}?decided=mark_paid_externally`]);
    expect(await payoutRow(stack.db, o.orderId)).toMatchObject({ status: 'settled', provider_transfer_id: right, external_reference: null });
  });

  test('when the key behind a session is revoked, then its next request is sent to sign in', async () => {
    const key = await mintKey(stack.db, ['finance'], 'finance-to-revoke');
    const seen = await inBrowser('session', { ...as('finance'), key: keyOf(key) });
    const open = () => fetch(`${stack.apiUrl}/console/recon`, { headers: { cookie: seen.cookieHeader }, redirect: 'manual' });
    expect((await open()).status).toBe(200);
    await revokeApiKey(stack.db, 'finance-to-revoke', 'test');
    const after = await open();
    expect([after.status, after.headers.get('location')]).toEqual([303, '/console/sign-in']);
  });

  test('when someone uses only the keyboard, then the skip link comes first, focus is visible, and every field has a label', async () => {
    const seen = await inBrowser('keyboard', as('ops'));
    expect(seen.first).toBe('Skip to content');
    expect(seen.second).toEqual(['A', 'solid']);
    expect(seen.unlabeled).toEqual([]);
    expect(seen.focusedOnLoad).toBe('key');
    for (const name of ['console-sign-in', 'console-recon-runs', 'console-exceptions', 'console-bank-statements-errors', 'console-payout-queue', 'console-payout-confirm', 'console-payout']) {
      expect(fs.existsSync(path.join(SHOTS, `${name}.png`)) ? name : `${name} missing`).toBe(name);
    }
  });

  test('when ops open a batch\'s payout, then it lists the orders its one transfer paid, each linking to its own payout page, which names the batch', async () => {
    const { first, second, batchId } = await twoOrdersInADailyBatch(stack);
    const closed = await fetch(`${stack.apiUrl}/ops/batches/${batchId}/close`, { method: 'POST', body: JSON.stringify({ reason: 'end of the lunch rush' }), headers: { ...stack.keys.ops, 'x-actor': 'Asha', 'content-type': 'application/json' } });
    expect(closed.status).toBe(202);
    await eventually(() => payoutRow(stack.db, second.orderId), (r) => r?.status === 'settled', 30_000);
    const seen = await inBrowser('batch', as('ops', { orderId: batchId }));
    expect(seen.status).toBe('settled');
    expect(seen.orders.map((r: string[]) => [r[0], r[1], r[2]]).sort()).toEqual([[first.orderId, '₹81.00', 'settled'], [second.orderId, '₹81.00', 'settled']].sort());
    expect(seen.fits).toBe(true);
    expect(seen.member.path).toMatch(/^\/console\/payouts\/ord_/);
    expect(seen.member.status).toBe('settled');
    expect(seen.member.section).toContain('The batch that pays it');
    expect(seen.member.section).toContain(`${batchId} (daily, closed)`);
  });
});
