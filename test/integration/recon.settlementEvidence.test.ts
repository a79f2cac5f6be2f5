/** Issue 10 item 2: settlement.processed is settlement evidence. The webhook records the settlement;
 * one first seen without a UTR is fetched again (recon's pull step before matching, and the
 * missed-webhook sweep at SETTLEMENT_UTR_REFRESH_MS) until it has one, so it matches its bank credit
 * instead of leaving two false exceptions. Real API, Temporal worker, PostgreSQL and sandbox, whose
 * settlement run can hold the UTR back (`utrDelayMs`) while the bank credit carries it. */
import { randomBytes } from 'node:crypto';
import type { Config } from '../../src/config/config';
import { missedWebhookSweepWorkflowId } from '../../src/contracts/missedWebhookSweep';
import { reconWorkflowId, type ReconWindow } from '../../src/contracts/recon';
import { istDayBounds } from '../../src/domain/calendar';
import { importBankStatement } from '../../src/recon/bankStatementImport';
import { missedWebhookSweepWorkflow } from '../../src/workflows/missedWebhookSweep';
import { reconWorkflow } from '../../src/workflows/recon';
import { startTestWorker, type TestTemporal } from '../support/temporal';
import { eventually, http, postWebhook, SANDBOX_CLOCK_MOVES, startHarnessWithPair, uniqueRef, type MoneyInHarness } from './moneyinHarness';

const EMPLOYER = 'emp_setl';
const VENDOR = 'ven_setl';
const istAt = (day: string, hhmm: string): number => istDayBounds(day).start.getTime() + (Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3))) * 60_000;
const UTR_DELAY_MS = 2 * 3_600_000;

describe('recon: settlement.processed is settlement evidence', () => {
  let h: MoneyInHarness;
  let temporal: TestTemporal;
  let config: Config;

  beforeAll(async () => {
    // Orders are paid on September days of the sandbox's calendar: their events carry those days.
    h = await startHarnessWithPair({ employerId: EMPLOYER, vendorId: VENDOR, config: SANDBOX_CLOCK_MOVES });
    config = { ...h.config, BANK_HOLIDAYS: [] };
    temporal = await startTestWorker({ db: h.db, gateway: h.gateway, config });
  });

  afterAll(async () => {
    await temporal?.close();
    await h?.sandbox.control.setClock(null);
    await h?.close();
  });

  /** An order paid at the sandbox at an IST instant (its webhooks make it paid on our side). */
  async function paidAt(day: string, hhmm: string): Promise<void> {
    await h.sandbox.control.setClock(istAt(day, hhmm));
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('setl'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-setl',
      totalPaise: 20_000, subsidyPaise: 10_000, customerSharePaise: 10_000, paymentMethod: 'online',
    });
    expect(placed.status).toBe(201);
    await h.sandbox.control.payOrder(placed.body.order.gatewayOrderId);
    await h.sandbox.control.drainWebhooks();
    expect((await h.db.query('SELECT status FROM orders WHERE id = $1', [placed.body.order.orderId])).rows[0].status).toBe('paid');
  }

  /** Runs the day's settlement with the UTR held back, delivers its webhook, imports the bank statement. */
  async function settleWithoutUtr(day: string) {
    const opts = { date: day, holidays: [], utrDelayMs: UTR_DELAY_MS };
    const [settlement] = await h.sandbox.control.runSettlements(opts);
    expect(settlement).toMatchObject({ utr: null });
    await h.sandbox.control.drainWebhooks();
    const csv = await h.sandbox.control.bankStatementCsv({ from: day, to: day });
    const imported = await importBankStatement(h.db, { text: csv, fileName: `stmt-${day}.csv`, actor: 'test' });
    if (!imported.ok) throw new Error(JSON.stringify(imported.problems));
    return settlement!;
  }

  const stored = async (id: string) => (await h.db.query(
    `SELECT id, amount_paise, fees_paise, tax_paise, status, utr, first_seen_via, to_char(settled_day, 'YYYY-MM-DD') AS settled_day FROM settlements WHERE id = $1`, [id])).rows[0];
  const fetches = async () => (await h.sandbox.control.callCounts())['settlements.fetch'] ?? 0;
  /** An hour and more since we last heard of it (SETTLEMENT_UTR_REFRESH_MS is 1 h by default). */
  const pastTheCadence = (id: string) => h.db.query(`UPDATE settlements SET last_seen_at = now() - interval '61 minutes' WHERE id = $1`, [id]);
  const runRecon = (window: ReconWindow) =>
    temporal.client.workflow.execute(reconWorkflow, { workflowId: `${reconWorkflowId(window)}-${temporal.taskQueue}`, taskQueue: temporal.taskQueue, args: [window] });
  const openBankExceptions = async (from: string, to: string) => (await h.db.query(
    `SELECT reason, status FROM recon_exceptions WHERE reason IN ('settlement-without-bank-credit', 'unmatched-bank-credit') AND day BETWEEN $1 AND $2 AND status = 'open' ORDER BY reason`,
    [from, to])).rows;

  test('when a settlement is announced without a UTR and the UTR arrives later, then the webhook records it, recon fetches it again and matches the bank credit instead of raising two exceptions', async () => {
    // Tue 2026-09-01 captures are due Thu 09-03.
    await paidAt('2026-09-01', '11:00');
    const settlement = await settleWithoutUtr('2026-09-03');
    expect(await stored(settlement.id)).toEqual({
      id: settlement.id, amount_paise: settlement.amount, fees_paise: settlement.fees, tax_paise: settlement.tax, status: 'processed', utr: null,
      first_seen_via: 'webhook', settled_day: '2026-09-03',
    });

    // The UTR is not out yet, and we heard of the settlement moments ago: recon does not ask again,
    // and honestly cannot match the credit yet.
    const window = { from: '2026-09-01', to: '2026-09-03', asOf: '2026-09-07' };
    const before = await fetches();
    await runRecon(window);
    expect(await fetches()).toBe(before);
    expect(await openBankExceptions(window.from, window.to)).toEqual([
      { reason: 'settlement-without-bank-credit', status: 'open' }, { reason: 'unmatched-bank-credit', status: 'open' },
    ]);

    // Later the bank reference is out; the next run (past the refresh cadence) fetches it and matches.
    await h.sandbox.control.setClock(istAt('2026-09-03', '13:00'));
    await pastTheCadence(settlement.id);
    const summary = await runRecon(window);
    const { utr } = await h.gateway.fetchSettlement(settlement.id);
    expect(utr).toMatch(/^AXISCN/);
    expect(await stored(settlement.id)).toMatchObject({ utr, first_seen_via: 'webhook' });
    expect(await openBankExceptions(window.from, window.to)).toEqual([]);
    expect(summary).toMatchObject({ exceptions: 0, cleared: 2 });
  });

  test('when recon itself first stores a settlement without a UTR, then a later run asks again and the two false exceptions (no bank credit, unmatched credit) clear', async () => {
    // Tue 2026-09-15 captures are due Thu 09-17. Its settlement.processed webhook is not delivered.
    await paidAt('2026-09-15', '11:00');
    await h.sandbox.control.setWebhookDelivery(false);
    try {
      const settlement = await settleWithoutUtr('2026-09-17');
      const window = { from: '2026-09-15', to: '2026-09-17', asOf: '2026-09-21' };
      await runRecon(window);
      expect(await stored(settlement.id)).toMatchObject({ utr: null, first_seen_via: 'recon' });
      expect(await openBankExceptions(window.from, window.to)).toHaveLength(2);

      await h.sandbox.control.setClock(istAt('2026-09-17', '13:00'));
      await pastTheCadence(settlement.id);
      await runRecon(window);
      expect(await stored(settlement.id)).toMatchObject({ utr: expect.stringMatching(/^AXISCN/) });
      expect(await openBankExceptions(window.from, window.to)).toEqual([]);
    } finally {
      await h.sandbox.control.setWebhookDelivery(true);
      await h.sandbox.control.drainWebhooks();
    }
  });

  test('when a settlement without a UTR waits, then the missed-webhook sweep asks again only once SETTLEMENT_UTR_REFRESH_MS has passed, until it has one', async () => {
    await paidAt('2026-09-08', '11:00');
    const settlement = await settleWithoutUtr('2026-09-10');
    const sweep = () => temporal.client.workflow.execute(missedWebhookSweepWorkflow, {
      workflowId: missedWebhookSweepWorkflowId(randomBytes(4).toString('hex')), taskQueue: temporal.taskQueue, args: [{}],
    });

    const before = await fetches();
    expect(await sweep()).toMatchObject({ settlementsRefreshed: 0 });
    expect(await fetches()).toBe(before);

    // An hour on, the UTR still is not out: asked, still none, asked again only after another hour.
    await pastTheCadence(settlement.id);
    expect(await sweep()).toMatchObject({ settlementsRefreshed: 1, settlementUtrsFound: 0 });
    expect(await sweep()).toMatchObject({ settlementsRefreshed: 0 });

    await h.sandbox.control.setClock(istAt('2026-09-10', '13:00'));
    await pastTheCadence(settlement.id);
    expect(await sweep()).toMatchObject({ settlementsRefreshed: 1, settlementUtrsFound: 1 });
    const { rows } = await eventually(() => h.db.query('SELECT utr FROM settlements WHERE id = $1', [settlement.id]), (r) => r.rows[0]?.utr !== null);
    expect(rows[0].utr).toMatch(/^AXISCN/);
    await pastTheCadence(settlement.id);
    expect(await sweep()).toMatchObject({ settlementsRefreshed: 0 });
  });

  test('when settlement.processed is delivered again after the UTR is known, then the UTR is kept', async () => {
    const [row] = (await h.db.query(`SELECT id, raw FROM settlements WHERE utr IS NOT NULL ORDER BY id LIMIT 1`)).rows;
    const events = (await h.sandbox.control.webhookEvents()).filter((e) => e.event === 'settlement.processed' && e.body.includes(row.id));
    expect(events).toHaveLength(1);
    expect((await postWebhook(h, events[0]!.body, { eventId: `${events[0]!.id}-replayed` })).status).toBe(200);
    expect((await h.db.query('SELECT utr FROM settlements WHERE id = $1', [row.id])).rows[0].utr).toBe(row.raw.utr);
  });
});
