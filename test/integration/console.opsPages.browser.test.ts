/** The console's ops and admin pages in a real headless Chromium against the real stack (issue 39):
 * the webhook quarantine (reasons and effects in words, the body behind a click, never a signature,
 * an audited acknowledgement), payout batches found by pair with totals, vendors' bank details
 * masked for admin and finance, and the payout queue left open while the world moves (htmx polling).
 * Screenshots at 1366×768 go to .data/screenshots/. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { hmacSha256Hex } from '../../src/gateway/signatures';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { eventually, payoutRow, seedPaidOrder } from './payoutSeed';
import { inBrowser, keyOf, SHOTS } from './consoleBrowser';
import { startPayoutStack, type PayoutStack } from './payoutStack';
import { twoOrdersInADailyBatch } from './batchSeed';

const now = () => Math.floor(Date.now() / 1000);

describe('the ops and admin pages in a browser', () => {
  let stack: PayoutStack;
  const as = (role: 'ops' | 'admin' | 'finance', extra: Record<string, unknown> = {}) => ({
    apiUrl: stack.apiUrl, key: keyOf(stack.keys[role]), person: role === 'ops' ? 'Asha' : role === 'admin' ? 'Meera' : 'Fiona', ...extra,
  });

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    stack = await startPayoutStack({ name: 'consoleops' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** Posts a signed event to the webhook endpoint; answers the signature it carried. */
  async function signedWebhook(body: Record<string, unknown>): Promise<{ signature: string; setAside: unknown }> {
    const raw = JSON.stringify({ entity: 'event', account_id: 'acc_PlatformMeals1', contains: Object.keys(body.payload as object), ...body });
    const signature = hmacSha256Hex(raw, stack.config.RAZORPAY_WEBHOOK_SECRET);
    const answer = await fetch(`${stack.apiUrl}/webhooks/razorpay`, {
      method: 'POST', body: raw, headers: { 'content-type': 'application/json', 'x-razorpay-signature': signature, 'x-razorpay-event-id': `evt_${randomBytes(7).toString('hex')}` },
    });
    expect(answer.status).toBe(200);
    return { signature, setAside: ((await answer.json()) as { setAside?: unknown }).setAside };
  }

  test('when ops open the webhook quarantine, then each event says why it was set aside and whether its effect was recovered, the body is one click away, no signature is on the page, and an acknowledgement is audited', async () => {
    const paid = await seedPaidOrder(stack.db, { linkedAccountId: null, payment: { id: 'pay_QuarantineSeen1' } });
    const sent = [
      // A replay of a capture we already hold: its effect is recovered.
      await signedWebhook({ event: 'payment.captured', created_at: now() - 3 * 86_400, payload: { payment: { entity: { id: 'pay_QuarantineSeen1', entity: 'payment', amount: 100, currency: 'INR', status: 'captured', order_id: 'order_Quarantine01' } } } }),
      // A settlement dated ahead of our clock that recon has not fetched: not recovered yet.
      await signedWebhook({ event: 'settlement.processed', created_at: now() + 3_600, payload: { settlement: { entity: { id: 'setl_QuarantineNot1', entity: 'settlement', amount: 500, status: 'processed' } } } }),
      // A transfer event our schema refuses (an id of the wrong shape): no payout of ours names it.
      await signedWebhook({ event: 'transfer.processed', created_at: now(), payload: { transfer: { entity: { id: 'trf_Odd1', entity: 'transfer' } } } }),
    ];
    expect(sent.map((s) => s.setAside)).toEqual(['too_old', 'from_future', 'schema_refused']);
    const ids = (await stack.db.query<{ id: string; event_type: string }>('SELECT id, event_type FROM quarantined_webhooks ORDER BY id')).rows;
    const settlementRow = Number(ids.find((r) => r.event_type === 'settlement.processed')!.id);

    const seen = await inBrowser('quarantine', as('ops', { ops: { quarantineId: settlementRow } }));
    expect(seen.totals).toBe('3 events open (schema refused 1, too old 1, from the future 1) of 3 events set aside.');
    expect(seen.rows).toHaveLength(3);
    const row = (name: string) => (seen.rows as Array<{ text: string; recovery: string }>).find((r) => r.text.includes(name))!;
    expect(row('payment.captured')).toMatchObject({ recovery: 'recovered' });
    expect(row('payment.captured').text).toContain(`Recovered: payment pay_QuarantineSeen1 is recorded captured (order ${paid.orderId}).`);
    expect(row('payment.captured').text).toContain('Older than the replay window: sent 3 d 0 h before it arrived');
    expect(row('settlement.processed')).toMatchObject({ recovery: 'pending' });
    expect(row('settlement.processed').text).toContain('Not recovered yet: settlement setl_QuarantineNot1 is not recorded. Recon fetches');
    expect(row('settlement.processed').text).toMatch(/Dated ahead of our clock by (59 min|1 h 0 min)/);
    expect(row('transfer.processed')).toMatchObject({ recovery: 'pending' });
    expect(row('transfer.processed').text).toContain('Our schema refused the body (transfer.entity.id: ');
    expect(row('transfer.processed').text).toContain('no payout or split of ours names it yet');
    expect(seen.bodyHiddenFirst).toBe(true);
    expect(seen.body.visible).toBe(true);
    expect(seen.body.text).toContain('"id": "setl_QuarantineNot1"');
    for (const { signature } of sent) expect(seen.html).not.toContain(signature);
    expect(seen.fits).toBe(true);

    expect(seen.notice).toMatch(/^evt_[0-9a-f]{14}: acknowledged \(audited\)\.$/);
    expect(seen.after).toEqual({ totals: '2 events open (schema refused 1, too old 1) of 3 events set aside.', stillListed: false });
    expect(seen.acknowledged).toContain('Acknowledged by key:test-ops (Asha)');
    expect(seen.acknowledged).toContain('“demo clock ahead; the settlement is fetched by recon”');
    expect(seen.acknowledged).toMatch(/at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} IST/);

    // The same use case behind the API: the audit log has it, and a second acknowledgement changes nothing.
    const audit = await (await fetch(`${stack.apiUrl}/ops/audit`, { headers: stack.keys.ops })).json() as { entries: Array<{ kind: string; actor: string; reason: string; reference: string }> };
    expect(audit.entries.filter((e) => e.kind === 'webhook_quarantine')).toEqual([expect.objectContaining({ actor: 'key:test-ops (Asha)', reason: 'demo clock ahead; the settlement is fetched by recon', reference: 'settlement.processed' })]);
    const again = await fetch(`${stack.apiUrl}/ops/webhooks/quarantine/${settlementRow}/acknowledge`, {
      method: 'POST', body: JSON.stringify({ note: 'seen twice' }), headers: { ...stack.keys.ops, 'content-type': 'application/json' },
    });
    expect(await again.json()).toEqual({ eventId: expect.stringMatching(/^evt_/), already: true });
    const open = await (await fetch(`${stack.apiUrl}/ops/webhooks/quarantine?show=open`, { headers: stack.keys.ops })).json() as { events: unknown[]; counts: { open: number; total: number } };
    expect([open.events.length, open.counts]).toEqual([2, { total: 3, open: 2, openByReason: { schema_refused: 1, too_old: 1, from_future: 0 } }]);
    const counters = await (await fetch(`${stack.apiUrl}/ops/payouts/counters`, { headers: stack.keys.ops })).json() as { webhookQuarantine: { open: number } };
    expect(counters.webhookQuarantine.open).toBe(2);
  });

  test('when ops look for a pair\'s batches, then the page lists the window in IST with totals past the page, and the batch opens with its orders and a close-now form', async () => {
    const { first, second, batchId } = await twoOrdersInADailyBatch(stack);

    const seen = await inBrowser('batches', as('ops', { vendorId: first.vendorId }));
    expect(seen.filtered).toContain(`vendorId=${first.vendorId}`);
    expect(seen.totals).toBe('1 batch (1 open) · 2 orders · ₹162.00');
    expect(seen.rows).toHaveLength(1);
    const [id, pair, schedule, window, status, orders, sum, transfer] = seen.rows[0] as string[];
    expect([id, pair, schedule, status, orders, sum, transfer]).toEqual([batchId, `${first.employerId} / ${first.vendorId}`, 'daily', 'open', '2', '₹162.00', 'not closed yet']);
    expect(window).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} IST to \d{4}-\d{2}-\d{2} \d{2}:\d{2} IST$/);
    expect(seen.fits).toBe(true);
    expect(seen.opened).toMatchObject({ path: `/console/batches/${batchId}`, status: 'open', closeForm: true, trace: 'No trace store is configured (TRACES_QUERY_URL).' });
    expect(seen.opened.orders.map((r: string[]) => r.slice(0, 3)).sort()).toEqual([[first.orderId, '₹81.00', 'batched'], [second.orderId, '₹81.00', 'batched']].sort());
  });

  test('when admin or finance open vendors\' bank details, then each vendor shows its masked account and who changed it, the full number is nowhere on the page, and ops are refused', async () => {
    const vendorId = `ven_bank${randomBytes(3).toString('hex')}`;
    await fetch(`${stack.apiUrl}/v1/admin/vendors`, { method: 'POST', headers: { ...stack.keys.admin, 'content-type': 'application/json' }, body: JSON.stringify({ id: vendorId, name: 'Dosa Corner' }) });
    const put = (accountNumber: string) => fetch(`${stack.apiUrl}/v1/admin/vendors/${vendorId}/bank-details`, {
      method: 'PUT', headers: { ...stack.keys.admin, 'x-actor': 'Meera', 'content-type': 'application/json' }, body: JSON.stringify({ accountNumber, ifsc: 'HDFC0001234', beneficiaryName: 'Dosa Corner' }),
    });
    expect((await put('123456789012')).status).toBe(201);
    expect((await put('987654321098')).status).toBeLessThan(300);

    const admin = await inBrowser('bankDetails', as('admin', { vendorId, ops: { search: vendorId } }));
    expect(admin.landed).toBe('/console/vendors/bank-details');
    expect(admin.nav).toEqual(['Bank details']);
    expect(admin.totals).toBe('1 vendor: 1 with bank details, 0 without.');
    expect(admin.rows).toEqual([[`Dosa Corner ${vendorId}`, 'none (paid offline)', 'Dosa Corner', 'XXXXXX1098', 'HDFC0001234', expect.stringMatching(/IST by key:test-admin \(Meera\)$/), 'changes']]);
    expect(admin.history.map((r: string[]) => [r[1], r[2], r[4]])).toEqual([['key:test-admin (Meera)', 'change', 'XXXXXX1098'], ['key:test-admin (Meera)', 'set', 'XXXXXX9012']]);
    for (const full of ['123456789012', '987654321098']) expect(admin.html).not.toContain(full);
    expect(admin.fits).toBe(true);

    const finance = await inBrowser('bankDetails', as('finance', { vendorId, ops: { search: vendorId } }));
    expect(finance.nav).toContain('Bank details');
    expect(finance.rows[0][3]).toBe('XXXXXX1098');
    const ops = await inBrowser('bankDetails', as('ops', { vendorId, ops: { search: vendorId } }));
    expect([ops.status, ops.body]).toEqual([403, expect.stringContaining('needs the role admin or finance')]);
  });

  test('when ops leave the queue open, then a payout parked meanwhile appears with new totals without a reload, and a pause made through the API shows on the switch', async () => {
    // The vendor's account is suspended: its payout parks when its run sends.
    const account = await stack.sandbox.control.createLinkedAccount({ status: 'suspended' });
    const o = await seedPaidOrder(stack.db, { linkedAccountId: account });
    const seen = await inBrowser('liveQueue', as('ops', { ops: { parkedOrderId: o.orderId } }), async (event) => {
      if (event !== 'page-open') return;
      await temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue, stack.db).startPayout(o.orderId);
      await eventually(() => payoutRow(stack.db, o.orderId), (r) => r?.status === 'parked', 30_000);
    });
    try {
      expect(seen.before.listed).toBe(false);
      expect(seen.row).toBe(true);
      expect(seen.sameLoad).toBe(true);
      expect(seen.totals).toMatch(/^\d+ payouts?, ₹[\d,]+\.\d{2} waiting \(\d+ parked, \d+ in review\)\.$/);
      expect(seen.totals).not.toBe(seen.before.totals);
      expect([seen.paused, seen.resumed]).toEqual([200, 200]);
      expect(seen.switchState).toMatch(/PAUSED — set by key:test-ops \(Ravi\) at .* IST: “bank incident, paused from the API”/);
      expect(seen.form).toBe('/console/transfers/resume');
      expect(seen.switchAfter).toContain('running');
    } finally {
      await stack.db.query(`UPDATE payouts SET status = 'cancelled' WHERE id = $1`, [o.payoutId]);
    }
  });

  test('when a key without the page\'s role asks for these pages or posts to them, then 403; without a session, sign in or 401', async () => {
    const finance = await inBrowser('session', as('finance'));
    const ops = await inBrowser('session', as('ops'));
    const batch = `batch_${'0'.repeat(30)}`;
    const get = (url: string, cookie: string) => fetch(`${stack.apiUrl}${url}`, { headers: { cookie }, redirect: 'manual' }).then((r) => r.status);
    const post = (url: string, cookie: string, csrf: string) => fetch(`${stack.apiUrl}${url}`, {
      method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: csrf, note: 'not mine', reason: 'not mine' }).toString(),
    }).then((r) => r.status);
    for (const url of ['/console/webhooks/quarantine', '/console/batches', `/console/batches/${batch}`, '/console/payouts/live/queue', '/console/payouts/live/switch', '/console/payouts/live/backlog']) {
      expect([url, await get(url, finance.cookieHeader)]).toEqual([url, 403]);
      expect([url, await get(url, '')]).toEqual([url, 303]);
    }
    expect(await get('/console/vendors/bank-details', ops.cookieHeader)).toBe(403);
    for (const url of ['/console/webhooks/quarantine/1/acknowledge', `/console/batches/${batch}/close`]) {
      expect([url, await post(url, finance.cookieHeader, finance.csrf)]).toEqual([url, 403]);
      expect([url, await post(url, '', '')]).toEqual([url, 401]);
    }
    expect(await post(`/console/batches/${batch}/close`, ops.cookieHeader, ops.csrf)).toBe(404);
  });
});
