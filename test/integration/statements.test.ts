/** Vendor statements end to end (issue 20 item 5): a vendor with an order on every route — a direct
 * transfer Razorpay settled (recon knows its settlement and UTR) and then partly refunded from the
 * dashboard (a clawback), a Route split, two cash orders (one owing commission back), a manual_offline
 * pair, a corporate_direct pair, a net below ₹1, a payout ops paid offline during a pause — with its
 * offline lines in settlement batch lines (one paid with the bank's UTR, one failed, one open; rows
 * written with SQL until src/settlement makes them in tests), read through the API as JSON and CSV,
 * by the CLI as its own process, and in the console in a real browser; and the statement's totals
 * tied to the ledgers' own sums to the paisa. Real API, worker, PostgreSQL, Temporal and sandbox. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../../src/db/pool';
import { rebuildLedger } from '../../src/ledger/backfill';
import { readVendorTies, tieDifferences } from '../../src/statements/ledgerTie';
import type { Statement, StatementLine } from '../../src/statements/contract';
import { STATEMENT_CSV_HEADER } from '../../src/statements/statementCsv';
import { mintKey, type AuthHeader } from '../support/apiKeys';
import { csvRecords } from '../support/csv';
import { runPayoutsCli } from '../support/payoutsCli';
import { inBrowser, keyOf, SHOTS } from './consoleBrowser';
import { call } from './offlineOrders';
import { startPayoutStack, type PayoutStack } from './payoutStack';
import { buildStatementWorld, ledgerSums, statementSums, type StatementWorld } from './statementSupport';

describe('vendor statements', () => {
  let stack: PayoutStack;
  let db: Db;
  let world: StatementWorld;
  let vendorKey: AuthHeader;
  let otherVendorKey: AuthHeader;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'payouts-statement-'));

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    stack = await startPayoutStack({ name: 'statements', env: { PAYOUT_HUMAN_RECHECK_MS: '60000' } });
    ({ db } = stack);
    world = await buildStatementWorld(stack, { recon: true });
    vendorKey = await mintKey(db, [`vendor:${world.vendorId}`], 'statement-vendor');
    otherVendorKey = await mintKey(db, [`vendor:${world.offlineVendorId}`], 'statement-other-vendor');
  });

  afterAll(async () => {
    await stack?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const statementPath = (vendorId: string, period = world.period, format?: string) =>
    `/v1/vendors/${vendorId}/statement?from=${period.from}&to=${period.to}${format ? `&format=${format}` : ''}`;
  const read = async (vendorId: string, period = world.period): Promise<Statement> => {
    const answer = await call(stack, stack.keys.finance, 'GET', statementPath(vendorId, period));
    expect(answer.status).toBe(200);
    return answer.body as Statement;
  };
  const lineOf = (s: Statement, orderId: string, kind: StatementLine['kind'] = 'order') => s.lines.find((l) => l.orderId === orderId && l.kind === kind)!;

  test('when a vendor has orders on every route, then its statement says how each was paid, with the transfer\'s settlement UTR and the bank line\'s UTR', async () => {
    const s = await read(world.vendorId);
    const o = world.orders;
    expect(s.vendor).toEqual({ id: world.vendorId, name: world.vendorName });
    expect(s.lines.map((l) => `${l.kind}:${l.orderId}`).sort()).toEqual([
      ...[o.transfer, o.split, o.cashOwesBack, o.cashOwed, o.manual, o.corporate, o.belowMinimum, o.payOffline].map((id) => `order:${id}`),
      `refund_clawback:${o.transfer}`,
    ].sort());

    const { rows: [gateway] } = await db.query(
      `SELECT r.settlement_id, s.utr FROM recon_rows r JOIN settlements s ON s.id = r.settlement_id WHERE r.type = 'transfer' AND r.entity_id = $1`, [world.transferId]);
    expect(gateway?.utr).toEqual(expect.any(String));
    expect(lineOf(s, o.transfer)).toMatchObject({
      route: 'direct_transfer', totalPaise: 10_000, subsidyPaise: 9_000, customerSharePaise: 1_000, commissionPaise: 1_900, vendorNetPaise: 8_100,
      paidBy: { rail: 'transfer', status: 'settled', amountPaise: 8_100, transferId: world.transferId, settlementId: gateway.settlement_id, utr: gateway.utr },
      howPaid: `transfer ${world.transferId} settled; Razorpay settlement ${gateway.settlement_id}, UTR ${gateway.utr}`,
    });
    expect(lineOf(s, o.transfer, 'refund_clawback')).toMatchObject({
      route: 'refund_clawback', refundId: world.refundId, vendorNetPaise: null, paidBy: { rail: 'offline', status: 'owes_back', amountPaise: -4_050 },
    });
    const { rows: [split] } = await db.query('SELECT provider_transfer_id FROM split_transfers WHERE order_id = $1', [o.split]);
    expect(lineOf(s, o.split)).toMatchObject({ route: 'split', vendorNetPaise: 20_250, paidBy: { rail: 'split', status: 'processed', amountPaise: 20_250, transferId: split.provider_transfer_id } });

    const paid = { rail: 'offline', status: 'paid', batchId: world.paidLine.batchId, reference: world.paidLine.reference, utr: world.paidLine.utr, paidOn: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) };
    expect(lineOf(s, o.cashOwesBack)).toMatchObject({ route: 'cash', paymentMethod: 'cash', cashKeptPaise: 10_000, vendorNetPaise: 9_720, paidBy: { ...paid, amountPaise: -280 } });
    const paidOn = (lineOf(s, o.cashOwesBack).paidBy as { paidOn: string }).paidOn;
    expect(lineOf(s, o.cashOwesBack).howPaid).toBe(`cash ₹100.00 kept at the counter; owes back ₹2.80, netted off bank settlement ${world.paidLine.reference} (UTR ${world.paidLine.utr}, ${paidOn})`);
    expect(lineOf(s, o.cashOwed)).toMatchObject({ route: 'cash', cashKeptPaise: 5_000, paidBy: { ...paid, amountPaise: 11_200 } });
    expect(lineOf(s, o.manual)).toMatchObject({ route: 'manual_offline', vendorNetPaise: 9_000, paidBy: { ...paid, amountPaise: 9_000 } });
    expect(lineOf(s, o.payOffline)).toMatchObject({ route: 'direct_transfer', paidBy: { ...paid, amountPaise: 8_100 } });
    expect(lineOf(s, o.corporate)).toMatchObject({ route: 'corporate_direct', paidBy: { rail: 'employer_direct', amountPaise: 12_150 } });
    // Its first batch line failed (membership ended); it is frozen in the open one now.
    expect(lineOf(s, o.belowMinimum)).toMatchObject({
      route: 'below_transfer_minimum', vendorNetPaise: 81,
      paidBy: { rail: 'offline', status: 'in_batch', amountPaise: 81, batchId: world.openLine.batchId, reference: world.openLine.reference, utr: null },
    });

    expect(s.totals).toMatchObject({
      orders: 8, vendorNetPaise: 8_100 + 20_250 + 9_720 + 16_200 + 9_000 + 12_150 + 81 + 8_100, unexplainedPaise: 0,
      transfer: { settledPaise: 8_100, inFlightPaise: 0, awaitingPaise: 0 }, split: { processedPaise: 20_250, inFlightPaise: 0 },
      offline: { paidPaise: world.paidLine.amountPaise, inBatchPaise: 81, openPaise: -4_050 },
      refundClawbackPaise: -4_050, cashKeptAtCounterPaise: 15_000, employerDirectPaise: 12_150, notOwedPaise: 0,
    });
    expect(world.paidLine.amountPaise).toBe(9_000 + 11_200 - 280 + 8_100);
    // The clawback alone is open and not in a batch: it nets to less than zero and is carried forward.
    expect(s.balance).toMatchObject({ stillOwedPaise: 81 - 4_050, openPaise: -4_050, carriedForward: true });
    expect(s.balance.words).toMatch(/^carried forward: the open lines not in a batch net to -₹40\.50 \(the vendor owes back ₹40\.50\)/);
  });

  test('when the statement\'s totals are summed again from the ledgers (payouts, splits, the offline ledger, settlement lines, obligations), then both sides agree to the paisa', async () => {
    for (const vendorId of [world.vendorId, world.offlineVendorId]) {
      const s = await read(vendorId);
      expect([vendorId, statementSums(s)]).toEqual([vendorId, await ledgerSums(db, vendorId, world.period)]);
    }
    const w = await read(world.offlineVendorId);
    expect(w.lines.map((l) => [l.route, l.paidBy.rail, l.paidBy.amountPaise, l.cashKeptPaise])).toEqual(expect.arrayContaining([['no_linked_account', 'offline', 9_000, 0], ['cash', 'offline', -200, 11_000]]));
    expect(w.balance).toMatchObject({ stillOwedPaise: 8_800, openPaise: 8_800, carriedForward: false });
    // A period with nothing in it ties too: every sum is zero.
    const empty = await read(world.vendorId, { from: '2020-01-01', to: '2020-01-31' });
    expect(empty.lines).toEqual([]);
    expect(statementSums(empty)).toEqual(await ledgerSums(db, world.vendorId, { from: '2020-01-01', to: '2020-01-31' }));
    expect(Object.values(statementSums(empty)).every((v) => v === 0)).toBe(true);
  });

  test('when every rail has moved (transfers, a split, cash, employer direct, a clawback, a settlement line paid), then the ledger as the rails wrote it, with no rebuild, ties to each vendor\'s statement, and a rebuild finds nothing they forgot', async () => {
    const vendors = [world.vendorId, world.offlineVendorId];
    const asWritten = await readVendorTies(db, new Date(), vendors);
    expect(asWritten.map((t) => t.vendorId).sort()).toEqual([...vendors].sort());
    expect(asWritten.flatMap(tieDifferences)).toEqual([]);
    expect((await rebuildLedger(db)).disagreements).toEqual([]);
  });

  test('when the statement is asked for as CSV, then it is a file of the same lines and totals in rupees with Indian grouping and paise', async () => {
    const answer = await fetch(`${stack.apiUrl}${statementPath(world.vendorId, world.period, 'csv')}`, { headers: stack.keys.finance });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(answer.headers.get('content-disposition')).toBe(`attachment; filename="statement-${world.vendorId}-${world.period.from}-${world.period.to}.csv"`);
    const text = await answer.text();
    expect(text.split('\r\n')[0]).toBe(STATEMENT_CSV_HEADER.join(','));
    const records = csvRecords(text);
    const transfer = records.find((r) => r.order_id === world.orders.transfer && r.kind === 'order')!;
    expect(transfer).toMatchObject({ route: 'direct_transfer', total_rupees: '100.00', net_rupees: '81.00', paid_by: 'transfer', status: 'settled', transfer_id: world.transferId, utr: expect.stringMatching(/\S/) });
    expect(records.find((r) => r.order_id === world.orders.cashOwesBack)).toMatchObject({ cash_kept_rupees: '100.00', amount_rupees: '-2.80', settlement_reference: world.paidLine.reference, utr: world.paidLine.utr });
    const total = (railName: string, what: string) => records.find((r) => r.kind === 'total' && r.paid_by === railName && r.how_paid === what)?.amount_rupees;
    expect([total('offline', 'paid by bank settlement'), total('offline', 'of which refunds clawed back'), total('employer_direct', 'paid by the employer directly'), total('cash', 'kept at the counter')])
      .toEqual(['280.20', '-40.50', '121.50', '150.00']);
  });

  test('when keys of each kind ask for a statement, then the vendor reads its own (200), not another vendor\'s (403); ops 403; finance any (200); none 401; bad input 400', async () => {
    const status = async (key: Record<string, string>, p: string) => (await call(stack, key, 'GET', p)).status;
    expect(await status(vendorKey, statementPath(world.vendorId))).toBe(200);
    const refused = await call(stack, vendorKey, 'GET', statementPath(world.offlineVendorId));
    expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
    expect(await status(otherVendorKey, statementPath(world.vendorId))).toBe(403);
    // Whether a vendor exists is not told to another vendor's key.
    expect(await status(vendorKey, statementPath('ven_nobody'))).toBe(403);
    expect(await status(stack.keys.ops, statementPath(world.vendorId))).toBe(403);
    expect(await status(stack.keys.finance, statementPath(world.offlineVendorId))).toBe(200);
    expect(await status({}, statementPath(world.vendorId))).toBe(401);
    const unknown = await call(stack, stack.keys.finance, 'GET', statementPath('ven_nobody'));
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'vendor_not_found']);
    const backwards = await call(stack, stack.keys.finance, 'GET', statementPath(world.vendorId, { from: '2026-09-02', to: '2026-09-01' }));
    expect([backwards.status, backwards.body.error.code, backwards.body.error.details[0].message]).toEqual([400, 'invalid_request', 'from must not be after to']);
    expect((await call(stack, stack.keys.finance, 'GET', statementPath(world.vendorId, { from: '2026-02-30', to: '2026-03-01' }))).status).toBe(400);
    expect((await call(stack, stack.keys.finance, 'GET', statementPath(world.vendorId, world.period, 'xlsx'))).status).toBe(400);
  });

  describe('the CLI', () => {
    const payouts = (args: string[], key: AuthHeader) => runPayoutsCli(args, {
      PAYOUTS_STACK_FILE: path.join(tmp, 'no-stack.json'), PAYOUTS_API_URL: stack.apiUrl, PAYOUTS_API_KEY: keyOf(key),
    });
    const period = () => ['--from', world.period.from, '--to', world.period.to];

    test('when finance asks for a statement, then a table of lines with how each was paid and the totals by rail; --format csv is the API\'s file; --format json its answer', async () => {
      const run = await payouts(['statement', world.vendorId, ...period()], stack.keys.finance);
      expect([run.code, run.stderr]).toEqual([0, '']);
      const out = run.stdout.split('\n');
      expect(out[0]).toBe(`statement of ${world.vendorId} (${world.vendorName}), IST days ${world.period.from}..${world.period.to}`);
      expect(out[1]).toBe('DAY\tORDER\tROUTE\tTOTAL\tSUBSIDY\tCUSTOMER\tCOMMISSION\tNET\tAMOUNT\tHOW PAID');
      expect(out.find((l) => l.includes(`\t${world.orders.cashOwesBack}\t`))!.split('\t').slice(2)).toEqual(
        ['cash', '₹120.00', '₹20.00', '₹100.00', '₹22.80', '₹97.20', '-₹2.80', expect.stringMatching(/^cash ₹100\.00 kept at the counter; owes back ₹2\.80, netted off bank settlement /)]);
      expect(out).toContain('offline\tpaid by bank settlement\t₹280.20');
      expect(out.find((l) => l.startsWith('balance: '))).toMatch(/^balance: carried forward/);

      const csv = await payouts(['statement', world.vendorId, ...period(), '--format', 'csv'], stack.keys.finance);
      const api = await fetch(`${stack.apiUrl}${statementPath(world.vendorId, world.period, 'csv')}`, { headers: stack.keys.finance });
      expect([csv.code, csv.stdout]).toEqual([0, await api.text()]);

      const json = await payouts(['statement', world.vendorId, ...period(), '--format', 'json'], stack.keys.finance);
      const { generatedAt: _cli, ...fromCli } = JSON.parse(json.stdout) as Statement;
      const { generatedAt: _api, ...fromApi } = await read(world.vendorId);
      expect(fromCli).toEqual(fromApi);
    });

    test('when a vendor\'s own key asks, then it gets its statement; for another vendor the API\'s 403 (exit 1); a bad date exits 2 before any call', async () => {
      expect((await payouts(['statement', world.vendorId, ...period(), '--format', 'json'], vendorKey)).code).toBe(0);
      const refused = await payouts(['statement', world.offlineVendorId, ...period()], vendorKey);
      expect([refused.code, refused.stdout]).toEqual([1, '']);
      expect(refused.stderr).toBe(`error: 403 forbidden: a vendor key reads only its own statement; this one is not vendor:${world.offlineVendorId}\n`);
      const bad = await payouts(['statement', world.vendorId, '--from', '2026-02-30', '--to', '2026-03-01'], stack.keys.finance);
      expect([bad.code, bad.stderr]).toEqual([2, 'error: --from "2026-02-30": expected a date YYYY-MM-DD that exists\n']);
    });
  });

  test('when finance opens the console\'s statements, then the vendor is listed, its statement shows each line\'s rail and the totals, and the CSV link downloads the API\'s file', async () => {
    const seen = await inBrowser('statement', { apiUrl: stack.apiUrl, key: keyOf(stack.keys.finance), person: 'Fiona', vendorId: world.vendorId, ...world.period });
    expect(seen.vendorRow).toContain('Statement Dosa');
    expect(new URL(seen.url).searchParams.get('vendor')).toBe(world.vendorId);
    const rails = Object.fromEntries((seen.lines as Array<{ orderId: string; kind: string; rail: string }>).map((l) => [`${l.kind}:${l.orderId}`, l.rail]));
    expect(rails).toMatchObject({ [`order:${world.orders.transfer}`]: 'transfer', [`order:${world.orders.split}`]: 'split', [`order:${world.orders.corporate}`]: 'employer_direct', [`refund_clawback:${world.orders.transfer}`]: 'offline' });
    expect(seen.lines.find((l: { orderId: string }) => l.orderId === world.orders.cashOwed).text).toContain('cash ₹50.00 kept at the counter; ₹112.00 paid by bank settlement');
    expect(seen.totals).toContainEqual(['offline', 'paid by bank settlement', '₹280.20']);
    expect(seen.balance).toMatch(/^carried forward/);
    expect(seen.fits).toBe(true);
    const api = await fetch(`${stack.apiUrl}${statementPath(world.vendorId, world.period, 'csv')}`, { headers: stack.keys.finance });
    expect(seen.csv).toBe(await api.text());
    expect(fs.existsSync(path.join(SHOTS, 'console-vendor-statement.png'))).toBe(true);
  });
});
