/** Issue 20 item 3, settlement runs: finance freezes a period's open offline lines into a batch (one
 * line per vendor, netted both ways; a vendor that owes back carries forward; one without bank
 * details is left out), downloads the bank file, records lines paid with UTRs or failed (one by one
 * or by the bank's response file), cancels a batch; the run follows the batch in Temporal. Real API,
 * Temporal worker, PostgreSQL, and orders made through the API. */
import { addDays, istDateOf } from '../../src/domain/calendar';
import type { SettlementProgress } from '../../src/contracts/settlement';
import { readRunDetails } from '../../src/temporal/runDetails';
import { eventually, recordHistory } from './payoutSeed';
import { startPayoutStack, type PayoutStack } from './payoutStack';
import { call, cashOrder, fundedEmployer, offlineVendor, subsidisedOrder, type OfflineVendor } from './offlineOrders';

describe('settlement runs: the offline ledger, paid by bank file', () => {
  let stack: PayoutStack;
  const today = istDateOf(new Date());
  let employerId: string;
  let a: OfflineVendor; let b: OfflineVendor; let c: OfflineVendor; let d: OfflineVendor;

  const finance = (method: string, path: string, body?: unknown, type?: string) => call(stack, stack.keys.finance, method, path, body, type);
  const openLines = async (vendorId: string) => (await stack.db.query<{ id: string; amount_paise: string; batch_line_id: string | null }>(
    'SELECT id, amount_paise, batch_line_id FROM offline_ledger_open WHERE vendor_id = $1 ORDER BY id', [vendorId])).rows;
  /** Everything a refused decision must leave as it was. */
  const snapshot = async () => ({
    lines: (await stack.db.query('SELECT id, status, utr, failure_reason FROM settlement_lines ORDER BY id')).rows,
    members: (await stack.db.query('SELECT line_id, ledger_id, active FROM settlement_line_members ORDER BY line_id, ledger_id')).rows,
    batches: (await stack.db.query('SELECT id, status FROM settlement_batches ORDER BY id')).rows,
    actions: (await stack.db.query('SELECT count(*)::int AS n FROM settlement_actions')).rows[0].n,
  });

  async function runUntilBatch(body: unknown): Promise<{ workflowId: string; batchId: string }> {
    const started = await finance('POST', '/finance/settlement/runs', body);
    expect(started.status).toBe(202);
    const { workflowId } = started.body as { workflowId: string };
    const run = await eventually(() => finance('GET', `/finance/settlement/runs/${workflowId}`), (r) => r.status === 200 && r.body.live?.progress?.batchId !== null && r.body.live?.progress?.batchId !== undefined && r.body.batchIds.length > 0, 20_000);
    return { workflowId, batchId: run.body.live.progress.batchId };
  }

  beforeAll(async () => {
    stack = await startPayoutStack({ name: 'settlement-runs' });
    employerId = await fundedEmployer(stack);
    a = await offlineVendor(stack, employerId, { name: 'Anand Bhavan' });
    b = await offlineVendor(stack, employerId, { name: 'Bombay Canteen' });
    c = await offlineVendor(stack, employerId, { name: 'Chai Point' });
    d = await offlineVendor(stack, employerId, { name: 'Dhaba No Bank', bank: false });
    await subsidisedOrder(stack, employerId, a.vendorId, 20_000); // net ₹180 (10% commission)
    await subsidisedOrder(stack, employerId, a.vendorId, 20_000); // net ₹180
    await cashOrder(stack, employerId, b.vendorId, 10_000, 8_000); // ₹80 subsidy − ₹10 commission: owed ₹70
    await cashOrder(stack, employerId, c.vendorId, 50_000, 0); // owes ₹50 commission back
    await subsidisedOrder(stack, employerId, d.vendorId, 10_000); // net ₹90, but no bank details
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('nets each vendor into one line, carries forward what owes back or cannot be paid, and freezes the lines', async () => {
    const { workflowId, batchId } = await runUntilBatch({ from: today, to: today, vendorIds: [a.vendorId, b.vendorId, c.vendorId, d.vendorId] });
    const batch = (await finance('GET', `/finance/settlement/batches/${batchId}`)).body;
    expect(batch.status).toBe('open');
    expect(batch.lines.map((l: { vendorId: string; amountPaise: number; members: number }) => [l.vendorId, l.amountPaise, l.members]))
      .toEqual([[a.vendorId, 36_000, 2], [b.vendorId, 7_000, 1]].sort((x, y) => String(x[0]).localeCompare(String(y[0]))));
    expect(batch.totals).toMatchObject({ lines: 2, open: 2, amountPaise: 43_000 });
    expect(batch.skipped).toEqual(expect.arrayContaining([
      { vendorId: c.vendorId, netPaise: -5_000, lines: 1, reason: 'net_not_positive' },
      { vendorId: d.vendorId, netPaise: 9_000, lines: 1, reason: 'no_bank_details' },
    ]));
    // Shown masked: the account number never appears in the batch.
    expect(JSON.stringify(batch)).not.toContain(a.accountNumber);
    // Frozen lines stay owed (in the open ledger) but in this batch; carried-forward ones are unbatched.
    expect((await openLines(a.vendorId)).every((l) => l.batch_line_id !== null)).toBe(true);
    expect((await openLines(c.vendorId)).map((l) => [Number(l.amount_paise), l.batch_line_id])).toEqual([[-5_000, null]]);

    // Asking again while the batch is open joins the same run: no second batch.
    const again = await finance('POST', '/finance/settlement/runs', { from: today, to: today, vendorIds: [d.vendorId, c.vendorId, b.vendorId, a.vendorId] });
    expect(again.body.workflowId).toBe(workflowId);
    expect((await stack.db.query('SELECT count(*)::int AS n FROM settlement_batches WHERE workflow_id = $1', [workflowId])).rows[0].n).toBe(1);

    const details = await eventually(() => readRunDetails(stack.temporal.client.workflow.getHandle(workflowId)), (r) => (r.currentDetails ?? '').includes('awaiting bank'));
    expect(details.summary).toContain(`Settlement ${today}`);
    expect(details.currentDetails).toContain('₹430.00');
  });

  it('writes the bank file with the account numbers, and records paid, refused and failed lines', async () => {
    const [{ id: batchId }] = (await stack.db.query<{ id: string }>(`SELECT id FROM settlement_batches WHERE status = 'open'`)).rows as [{ id: string }];
    const batch = (await finance('GET', `/finance/settlement/batches/${batchId}`)).body;
    const lineOf = (vendorId: string) => batch.lines.find((l: { vendorId: string }) => l.vendorId === vendorId);
    const [lineA, lineB] = [lineOf(a.vendorId), lineOf(b.vendorId)];

    const file = await finance('GET', `/finance/settlement/batches/${batchId}/bank-file`);
    expect([file.status, file.status === 200 ? null : file.body]).toEqual([200, null]);
    expect(file.headers.get('content-type')).toContain('text/csv');
    const rows = (file.body as string).trim().split('\r\n');
    expect(rows[0]).toBe('reference,beneficiary_name,account_number,ifsc,amount,amount_paise,narration');
    expect(rows).toContain(`${lineA.reference},Anand Bhavan,${a.accountNumber},HDFC0001234,360.00,36000,PAYOUTS ${lineA.reference}`);
    expect(rows).toContain(`${lineB.reference},Bombay Canteen,${b.accountNumber},HDFC0001234,70.00,7000,PAYOUTS ${lineB.reference}`);

    // Refused, naming the line and field, and nothing changes.
    const before = await snapshot();
    const wrongAmount = await finance('POST', `/finance/settlement/lines/${lineA.reference}/paid`, { utr: 'HDFCN2026120100001', paidOn: today, amountPaise: 35_000 });
    expect(wrongAmount.status).toBe(409);
    expect(wrongAmount.body.error).toMatchObject({ code: 'settlement_amount_differs', details: { line: lineA.reference, field: 'amount' } });
    const unknown = await finance('POST', '/finance/settlement/lines/STZZZZZZZZ9999/paid', { utr: 'HDFCN2026120100001', paidOn: today });
    expect(unknown.status).toBe(404);
    const badUtr = await finance('POST', `/finance/settlement/lines/${lineA.reference}/paid`, { utr: 'no', paidOn: today });
    expect(badUtr.status).toBe(400);
    expect(await snapshot()).toEqual(before);

    const paid = await finance('POST', `/finance/settlement/lines/${lineA.reference}/paid`, { utr: 'HDFCN2026120100001', paidOn: today, amountPaise: 36_000 });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: 'paid', alreadyRecorded: false, batchStatus: 'open' });
    // Recording it again is idempotent; the same UTR on another line is refused.
    expect((await finance('POST', `/finance/settlement/lines/${lineA.reference}/paid`, { utr: 'hdfcn2026120100001', paidOn: today })).body).toMatchObject({ alreadyRecorded: true });
    const reused = await finance('POST', `/finance/settlement/lines/${lineB.reference}/paid`, { utr: 'HDFCN2026120100001', paidOn: today });
    expect(reused.body.error).toMatchObject({ code: 'utr_already_used', details: { line: lineB.reference, field: 'utr', usedBy: lineA.reference } });
    // Paid lines leave the open ledger.
    expect(await openLines(a.vendorId)).toEqual([]);

    // The bank's response file: a malformed one is refused whole, naming the line.
    const malformed = await finance('POST', '/finance/settlement/bank-responses', `reference,status,utr,value_date,amount,reason\r\n${lineB.reference},bounced,,${today},70.00,\r\n`, 'text/csv');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('invalid_bank_response');
    expect(malformed.body.error.details.problems[0]).toMatchObject({ line: 2 });
    expect(malformed.body.error.details.problems[0].message).toContain('status "bounced"');
    const response = `reference,status,utr,value_date,amount,reason\r\n${lineB.reference},failed,,${today},70.00,account closed\r\n`;
    const imported = await finance('POST', '/finance/settlement/bank-responses', { fileName: 'bank-response.csv', csv: response });
    expect(imported.status).toBe(200);
    expect(imported.body.results).toEqual([expect.objectContaining({ reference: lineB.reference, status: 'failed', batchStatus: 'closed' })]);
    // B's line is open again, in no batch: the next run pays it.
    expect((await openLines(b.vendorId)).map((l) => [Number(l.amount_paise), l.batch_line_id])).toEqual([[7_000, null]]);

    // Every line decided: the batch closed and its run ended with the figures.
    const workflowId = batch.workflowId as string;
    const result = await stack.temporal.client.workflow.getHandle(workflowId).result() as SettlementProgress;
    expect(result).toMatchObject({ phase: 'closed', paid: 1, failed: 1, paidPaise: 36_000 });
    await recordHistory(stack.temporal.client, workflowId, 'settlement-run-paid-and-failed-v1');

    const audit = (await stack.db.query<{ action: string; actor: string }>('SELECT action, actor FROM settlement_actions WHERE batch_id = $1 ORDER BY id', [batchId])).rows;
    expect(audit.map((r) => r.action)).toEqual(['start', 'bank_file', 'paid', 'failed', 'import']);
    expect(audit.every((r) => r.actor.includes('meera'))).toBe(true);
    // The one audit log shows them too, the line's reference as the subject.
    const log = await call(stack, stack.keys.ops, 'GET', '/ops/audit?limit=50');
    expect(log.body.entries).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'settlement', action: 'paid', subject: lineA.reference, reference: batchId })]));
  });

  it('re-pays a failed line in the next run, and cancels a batch with nothing paid', async () => {
    const { batchId } = await runUntilBatch({ from: today, to: today, vendorIds: [a.vendorId, b.vendorId, c.vendorId, d.vendorId] });
    const batch = (await finance('GET', `/finance/settlement/batches/${batchId}`)).body;
    expect(batch.lines.map((l: { vendorId: string; amountPaise: number }) => [l.vendorId, l.amountPaise])).toEqual([[b.vendorId, 7_000]]);

    const tooShort = await finance('POST', `/finance/settlement/batches/${batchId}/cancel`, { reason: '' });
    expect(tooShort.status).toBe(400);
    const cancelled = await finance('POST', `/finance/settlement/batches/${batchId}/cancel`, { reason: 'wrong debit account chosen' });
    expect(cancelled.body).toMatchObject({ status: 'cancelled', cancelReason: 'wrong debit account chosen' });
    expect((await openLines(b.vendorId)).map((l) => l.batch_line_id)).toEqual([null]);
    const lateRecord = await finance('POST', `/finance/settlement/lines/${batch.lines[0].reference}/paid`, { utr: 'HDFCN2026120100002', paidOn: today });
    expect(lateRecord.body.error).toMatchObject({ code: 'settlement_batch_cancelled', details: { line: batch.lines[0].reference } });
    expect((await finance('GET', `/finance/settlement/batches/${batchId}/bank-file`)).status).toBe(409);
  });

  it('recon matches each paid line to its bank debit, and raises a paid line without one and a debit no line explains', async () => {
    const { batchId } = await runUntilBatch({ from: today, to: today, vendorIds: [b.vendorId] });
    const [lineB] = (await finance('GET', `/finance/settlement/batches/${batchId}`)).body.lines;
    const weekAgo = addDays(today, -7);
    expect((await finance('POST', `/finance/settlement/lines/${lineB.reference}/paid`, { utr: 'HDFCN2026120100003', paidOn: weekAgo })).status).toBe(200);
    // The statement: A's payment debited (UTR and amount), one debit nobody recorded, and a credit.
    const statement = ['utr,amount,value_date,narration,type', `HDFCN2026120100001,360.00,${today},NEFT ANAND BHAVAN,DR`, `HDFCN2026120199999,99.00,${today},NEFT UNKNOWN,DR`].join('\r\n');
    const imported = await finance('POST', '/finance/bank-statements', { fileName: 'statement.csv', csv: statement });
    expect(imported.status).toBe(201);
    expect(imported.body).toMatchObject({ lineCount: 2, linesAdded: 2 });

    const started = await finance('POST', '/finance/recon/runs', { from: weekAgo, to: today });
    expect(started.status).toBe(202);
    await stack.temporal.client.workflow.getHandle(started.body.workflowId).result();
    const found = (await stack.db.query<{ reason: string; class: string; entity_id: string | null; expected_paise: string | null; actual_paise: string | null }>(
      `SELECT reason, class, entity_id, expected_paise, actual_paise FROM recon_exceptions WHERE reason IN ('offline-payment-without-debit', 'offline-debit-amount-differs', 'unexplained-bank-debit') ORDER BY reason`)).rows;
    expect(found.map((e) => [e.reason, e.class, e.entity_id, e.expected_paise === null ? null : Number(e.expected_paise), e.actual_paise === null ? null : Number(e.actual_paise)])).toEqual([
      ['offline-payment-without-debit', 'unmatched', lineB.reference, 7_000, null],
      ['unexplained-bank-debit', 'unmatched', null, null, 9_900],
    ]);
  });

  it('is finance only', async () => {
    const body = { from: today, to: today };
    expect((await call(stack, {}, 'POST', '/finance/settlement/runs', body)).status).toBe(401);
    expect((await call(stack, stack.keys.ops, 'POST', '/finance/settlement/runs', body)).status).toBe(403);
    expect((await call(stack, stack.keys.admin, 'GET', '/finance/settlement/batches')).status).toBe(403);
    expect((await call(stack, stack.keys.finance, 'GET', '/finance/settlement/batches')).status).toBe(200);
  });
});
