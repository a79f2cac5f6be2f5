/** `npm run bench:recon [-- rows]`: end-to-end reconciliation of N gateway rows (default 100,000)
 * on this machine, against a baseline measured in the same run.
 *
 * Setup (not timed): a Temporal dev server and an embedded PostgreSQL (or DATABASE_URL's server),
 * the Razorpay sandbox in-process, N captured payments over three IST days, settled T+2, the bank
 * statement imported, and our side (orders + payments) seeded in bulk.
 * Baseline: the raw pull and store alone — every page of every day fetched over HTTP through the
 * official SDK and upserted into recon_rows, into a database of its own.
 * Measured: reconWorkflow on a real worker (pull + store + settlements + match + exceptions), then
 * the same window again (a rerun). The ratio says what matching and bookkeeping add to the pull. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../src/config/config';
import { reconWorkflowId } from '../src/contracts/recon';
import { migrate } from '../src/db/migrate';
import { createPool, type Db } from '../src/db/pool';
import { ensureDatabase, startServices } from '../src/devstack/services';
import { istDayBounds } from '../src/domain/calendar';
import { createGateway } from '../src/gateway';
import type { RzpPayment } from '../src/gateway/types';
import { importBankStatement } from '../src/recon/bankStatementImport';
import { toStoredRow } from '../src/recon/gatewayRows';
import { upsertReconRows } from '../src/recon/repository';
import { startSandbox } from '../src/sandbox';
import { createWorker } from '../src/worker';
import type { reconWorkflow } from '../src/workflows/recon';

// Captures on Tue 09-01, Wed 09-02, Thu 09-03 settle Thu 09-03, Fri 09-04 and Sat 09-05 (the 1st Saturday is a working day).
const CAPTURE_DAYS = ['2026-09-01', '2026-09-02', '2026-09-03'];
const WINDOW = { from: '2026-09-01', to: '2026-09-07', asOf: '2026-09-08' };

const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;
const log = (line: string) => process.stdout.write(`${line}\n`);

async function seedAppSide(db: Db, payments: RzpPayment[]): Promise<void> {
  for (let i = 0; i < payments.length; i += 5000) {
    const rows = payments.slice(i, i + 5000).map((p) => {
      const commission = Math.floor((p.amount * 1900 + 5000) / 10000);
      return { id: `ord-${p.id}`, amount: p.amount, commission, net: p.amount - commission, gateway_order_id: p.order_id, payment_id: p.id,
        fee: p.fee, tax: p.tax, paid_at: new Date(p.created_at * 1000).toISOString() };
    });
    const json = JSON.stringify(rows);
    await db.query(
      `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise, commission_bps,
         commission_paise, vendor_net_paise, payment_method, status, gateway_order_id, paid_at)
       SELECT id, id, 'emp-1', 'ven-1', 'e-1', amount, 0, amount, 1900, commission, net, 'online', 'paid', gateway_order_id, paid_at
       FROM jsonb_to_recordset($1::jsonb) AS x(id text, amount bigint, commission bigint, net bigint, gateway_order_id text, paid_at timestamptz)`, [json]);
    await db.query(
      `INSERT INTO payments (id, gateway_order_id, order_id, amount_paise, status, method, fee_paise, tax_paise, captured_at, raw)
       SELECT payment_id, gateway_order_id, id, amount, 'captured', 'card', fee, tax, paid_at, '{}'
       FROM jsonb_to_recordset($1::jsonb) AS x(payment_id text, gateway_order_id text, id text, amount bigint, fee bigint, tax bigint, paid_at timestamptz)`, [json]);
  }
}

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 100_000);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'recon-bench-'));
  fs.chmodSync(stateDir, 0o777);
  const base = loadConfig();
  log(`recon bench: ${total.toLocaleString('en-IN')} gateway rows, ${os.cpus().length} cores, node ${process.version}`);
  const services = await startServices({ projectRoot: path.resolve(__dirname, '..'), stateDir, persistent: false, temporalPort: 0, temporalUiPort: null, postgresPort: 0, externalDatabaseUrl: base.DATABASE_URL });
  const sandbox = await startSandbox({ keyId: base.RAZORPAY_KEY_ID, keySecret: base.RAZORPAY_KEY_SECRET, webhookSecret: base.RAZORPAY_WEBHOOK_SECRET, port: 0 });
  const config = { ...loadConfig({ ...process.env, RAZORPAY_BASE_URL: sandbox.baseUrl }), BANK_HOLIDAYS: [] as string[], GATEWAY_TIMEOUT_MS: 60_000 };
  const gateway = createGateway(config);
  const suffix = Date.now();
  const db = createPool(await ensureDatabase(services.adminDatabaseUrl, `recon_bench_${suffix}`), 10);
  const baselineDb = createPool(await ensureDatabase(services.adminDatabaseUrl, `recon_bench_base_${suffix}`), 10);
  let connection: Connection | undefined;
  let workerConnection: NativeConnection | undefined;
  try {
    await Promise.all([migrate(db), migrate(baselineDb)]);
    await db.query(`INSERT INTO employers (id, name) VALUES ('emp-1', 'Bench Employer')`);
    await db.query(`INSERT INTO vendors (id, name) VALUES ('ven-1', 'Bench Vendor')`);

    let t = process.hrtime.bigint();
    const payments: RzpPayment[] = [];
    for (const [d, day] of CAPTURE_DAYS.entries()) {
      const perDay = Math.floor(total / CAPTURE_DAYS.length) + (d < total % CAPTURE_DAYS.length ? 1 : 0);
      await sandbox.control.setClock(istDayBounds(day).start.getTime() + 12 * 3_600_000);
      // Checkout in-process (the sandbox's own order): our receipt is absent, so matching takes the gateway-order-id path.
      for (let i = 0; i < perDay; i++) payments.push(await sandbox.control.capturedPaymentWithoutOrder(10_000 + (i % 5000)));
    }
    await sandbox.control.setWebhookDelivery(false);
    const settlementDays = ['2026-09-03', '2026-09-04', '2026-09-05'];
    for (const date of settlementDays) await sandbox.control.runSettlements({ date, holidays: [] });
    const csv = await sandbox.control.bankStatementCsv({ from: WINDOW.from, to: WINDOW.to });
    const imported = await importBankStatement(db, { text: csv, fileName: 'bench.csv', actor: 'bench' });
    if (!imported.ok) throw new Error(JSON.stringify(imported.problems));
    await seedAppSide(db, payments);
    log(`setup: ${payments.length} captures, 3 settlements, bank statement and app rows seeded in ${(ms(t) / 1000).toFixed(1)} s (not timed)`);

    // Baseline: pull every page of every day and upsert the raw rows, nothing else.
    t = process.hrtime.bigint();
    let baselineRows = 0;
    for (let day = WINDOW.from; day <= WINDOW.to; day = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)) {
      const [year, month, dd] = day.split('-').map(Number) as [number, number, number];
      const rows = (await gateway.settlementReconRows({ year, month, day: dd })).map((r) => toStoredRow(r, day));
      baselineRows += await upsertReconRows(baselineDb, rows);
    }
    const baselineMs = ms(t);

    connection = await Connection.connect({ address: services.temporalAddress });
    const client = new Client({ connection, namespace: 'default' });
    workerConnection = await NativeConnection.connect({ address: services.temporalAddress });
    const worker = await createWorker({ connection: workerConnection, namespace: 'default', taskQueue: 'recon-bench', deps: { db, gateway, config } });
    const running = worker.run();
    const run = () => client.workflow.execute<typeof reconWorkflow>('reconWorkflow', { workflowId: reconWorkflowId(WINDOW), taskQueue: 'recon-bench', args: [WINDOW] });
    try {
      t = process.hrtime.bigint();
      const first = await run();
      const firstMs = ms(t);
      t = process.hrtime.bigint();
      const second = await run();
      const secondMs = ms(t);
      const perSecond = (rows: number, took: number) => Math.round(rows / (took / 1000)).toLocaleString('en-IN');
      log('');
      log('| measurement | rows | time | rows/s | × baseline |');
      log('|---|---:|---:|---:|---:|');
      log(`| baseline: pull all pages + upsert raw rows | ${baselineRows} | ${(baselineMs / 1000).toFixed(2)} s | ${perSecond(baselineRows, baselineMs)} | 1.00 |`);
      log(`| reconWorkflow end to end (first run) | ${first.rowsFetched} | ${(firstMs / 1000).toFixed(2)} s | ${perSecond(first.rowsFetched, firstMs)} | ${(firstMs / baselineMs).toFixed(2)} |`);
      log(`| reconWorkflow rerun (same window) | ${second.rowsFetched} | ${(secondMs / 1000).toFixed(2)} s | ${perSecond(second.rowsFetched, secondMs)} | ${(secondMs / baselineMs).toFixed(2)} |`);
      log('');
      log(`first run: matched ${first.matched}, exceptions ${first.exceptions} ${JSON.stringify(first.byReason)}; rerun: opened ${second.opened}, changed ${second.changed}, cleared ${second.cleared}`);
      if (first.exceptions !== 0 || first.rowsFetched !== total) throw new Error('bench data did not reconcile cleanly: the measurement is not valid');
    } finally {
      worker.shutdown();
      await running;
    }
  } finally {
    await workerConnection?.close();
    await connection?.close();
    await db.end();
    await baselineDb.end();
    await sandbox.close();
    await services.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0)).catch((err) => {
  console.error(err);
  process.exit(1);
});
