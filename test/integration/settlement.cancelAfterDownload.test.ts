/** Issue 36 item 4 (b): once a settlement batch's bank file was downloaded, finance may have
 * uploaded it to the bank, which then pays its lines. Cancelling the batch would put those lines
 * back in the open ledger and the next run would pay them a second time. So a cancel after a
 * download is refused, naming what to do instead (record each line paid with its UTR or failed with
 * the bank's reason), unless finance confirm the file was never submitted to the bank; that
 * confirmation is audited. The API, the CLI and the console answer alike. Real API, Temporal
 * worker, PostgreSQL, the CLI in its own process and the console's forms. */
import { istDateOf } from '../../src/domain/calendar';
import { runPayoutsCli } from '../support/payoutsCli';
import { eventually } from './payoutSeed';
import { inBrowser, keyOf } from './consoleBrowser';
import { startPayoutStack, type PayoutStack } from './payoutStack';
import { call, fundedEmployer, offlineVendor, subsidisedOrder, type OfflineVendor } from './offlineOrders';

describe('cancelling a settlement batch after its bank file was downloaded', () => {
  let stack: PayoutStack;
  const today = istDateOf(new Date());
  let employerId: string;
  let vendor: OfflineVendor;

  const finance = (method: string, path: string, body?: unknown) => call(stack, stack.keys.finance, method, path, body);
  const cli = (...args: string[]) => runPayoutsCli(['--actor', 'priya', ...args], {
    PAYOUTS_API_URL: stack.apiUrl,
    PAYOUTS_API_KEY: stack.keys.finance.authorization.replace(/^Bearer /, ''),
  });
  const openLedger = async () => (await stack.db.query<{ amount_paise: string; batch_line_id: string | null }>(
    'SELECT amount_paise, batch_line_id FROM offline_ledger_open WHERE vendor_id = $1 ORDER BY id', [vendor.vendorId])).rows.map((r) => [Number(r.amount_paise), r.batch_line_id === null ? 'unbatched' : 'frozen']);
  /** Everything a refused cancel must leave as it was. */
  const snapshot = async () => ({
    lines: (await stack.db.query('SELECT id, status FROM settlement_lines ORDER BY id')).rows,
    members: (await stack.db.query('SELECT line_id, ledger_id, active FROM settlement_line_members ORDER BY line_id, ledger_id')).rows,
    batches: (await stack.db.query('SELECT id, status FROM settlement_batches ORDER BY id')).rows,
    actions: (await stack.db.query('SELECT count(*)::int AS n FROM settlement_actions')).rows[0].n,
  });

  /** A fresh vendor's order frozen into a batch of its own, whose bank file finance then downloads. */
  async function downloadedBatch(): Promise<{ batchId: string; reference: string }> {
    vendor = await offlineVendor(stack, employerId, { name: 'Udupi Grand' });
    await subsidisedOrder(stack, employerId, vendor.vendorId, 20_000); // net ₹180
    const started = await finance('POST', '/finance/settlement/runs', { from: today, to: today, vendorIds: [vendor.vendorId] });
    expect(started.status).toBe(202);
    const run = await eventually(() => finance('GET', `/finance/settlement/runs/${started.body.workflowId}`), (r) => r.status === 200 && !!r.body.live?.progress?.batchId, 20_000);
    const batchId = run.body.live.progress.batchId as string;
    const file = await finance('GET', `/finance/settlement/batches/${batchId}/bank-file`);
    expect(file.status).toBe(200);
    const [line] = (await finance('GET', `/finance/settlement/batches/${batchId}`)).body.lines;
    return { batchId, reference: line.reference };
  }

  beforeAll(async () => {
    stack = await startPayoutStack({ name: 'settlement-cancel-download' });
    employerId = await fundedEmployer(stack);
  });

  afterAll(async () => {
    await stack?.close();
  });

  test('when finance cancel a batch whose bank file was downloaded, then it is refused naming what to do instead and nothing changes; confirmed not submitted to the bank, it is cancelled and the confirmation audited', async () => {
    const { batchId, reference } = await downloadedBatch();
    const before = await snapshot();
    const refused = await finance('POST', `/finance/settlement/batches/${batchId}/cancel`, { reason: 'wrong debit account chosen' });
    expect([refused.status, refused.body.error?.code ?? refused.body.status]).toEqual([409, 'settlement_batch_file_downloaded']);
    const shown = (await finance('GET', `/finance/settlement/batches/${batchId}`)).body;
    expect(shown.bankFile).toMatchObject({ downloads: 1, lastDownloadedBy: expect.stringContaining('meera') });
    expect(refused.body.error.message).toMatch(/record each line paid with its UTR or failed with the bank's reason/);
    expect(refused.body.error.details).toMatchObject({ batchId, field: 'confirmNotSubmitted', downloads: 1, lines: [reference] });
    expect(await snapshot()).toEqual(before);
    expect(await openLedger()).toEqual([[18_000, 'frozen']]);
    // Saying no is not confirming.
    expect((await finance('POST', `/finance/settlement/batches/${batchId}/cancel`, { reason: 'wrong debit account chosen', confirmNotSubmitted: false })).status).toBe(409);
    expect(await snapshot()).toEqual(before);

    const cancelled = await finance('POST', `/finance/settlement/batches/${batchId}/cancel`, { reason: 'wrong debit account chosen', confirmNotSubmitted: true });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', cancelReason: 'wrong debit account chosen' });
    expect(await openLedger()).toEqual([[18_000, 'unbatched']]);
    const [audit] = (await stack.db.query<{ detail: string; actor: string }>(`SELECT detail, actor FROM settlement_actions WHERE batch_id = $1 AND action = 'cancel'`, [batchId])).rows;
    expect(audit!.actor).toContain('meera');
    expect(audit!.detail).toMatch(/^wrong debit account chosen; bank file downloaded 1 time\(s\) \(last sha256 [0-9a-f]{64}\), confirmed not submitted to the bank$/);
  });

  test('when the bank\'s answer is recorded line by line instead, then nothing is paid twice: a failed line is open again once, for the next run', async () => {
    const { batchId, reference } = await downloadedBatch();
    expect((await finance('POST', `/finance/settlement/lines/${reference}/failed`, { reason: 'beneficiary account frozen' })).body).toMatchObject({ status: 'failed', batchStatus: 'closed' });
    expect(await openLedger()).toEqual([[18_000, 'unbatched']]);
    // A closed batch is not cancelled, downloaded or not.
    expect((await finance('POST', `/finance/settlement/batches/${batchId}/cancel`, { reason: 'too late', confirmNotSubmitted: true })).body.error.code).toBe('settlement_batch_not_open');
  });

  test('when finance cancel from the CLI after the download, then it exits 1 with the refusal, and --confirm-not-submitted cancels', async () => {
    const { batchId } = await downloadedBatch();
    const refused = await cli('settlement', 'cancel', batchId, '--reason', 'duplicate run');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('settlement_batch_file_downloaded');
    expect(refused.stderr).toContain('--confirm-not-submitted');
    expect((await finance('GET', `/finance/settlement/batches/${batchId}`)).body.status).toBe('open');

    const shown = await cli('settlement', 'show', batchId);
    expect(shown.stdout).toMatch(/bank file downloaded 1 time\(s\), last by .*priya|bank file downloaded 1 time\(s\), last by .*meera/);

    const cancelled = await cli('settlement', 'cancel', batchId, '--reason', 'duplicate run', '--confirm-not-submitted');
    expect([cancelled.code, cancelled.stderr]).toEqual([0, '']);
    expect(cancelled.stdout).toContain(`batch ${batchId} cancelled`);
    expect((await finance('GET', `/finance/settlement/batches/${batchId}`)).body.status).toBe('cancelled');
  });

  test('when finance cancel from the console after the download, then the page says the file was downloaded and asks for the confirmation, a cancel without it is refused in the API\'s words, and with it the batch is cancelled', async () => {
    const { batchId } = await downloadedBatch();
    const fin = await inBrowser('session', { apiUrl: stack.apiUrl, key: keyOf(stack.keys.finance), person: 'Fiona' });
    const page = await (await fetch(`${stack.apiUrl}/console/settlement/batches/${batchId}`, { headers: { cookie: fin.cookieHeader, accept: 'text/html' } })).text();
    expect(page).toContain('Bank file downloaded 1 time(s)');
    expect(page).toContain('name="confirmNotSubmitted"');
    const form = (fields: Record<string, string>) => fetch(`${stack.apiUrl}/console/settlement/batches/${batchId}/cancel`, {
      method: 'POST', redirect: 'manual', headers: { cookie: fin.cookieHeader, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: fin.csrf, ...fields }).toString(),
    });

    const before = await snapshot();
    const refused = await form({ reason: 'duplicate run' });
    expect(refused.status).toBe(409);
    const words = await refused.text();
    expect(words).toContain('Refused, nothing was changed:');
    expect(words).toContain('data-code="settlement_batch_file_downloaded"');
    expect(await snapshot()).toEqual(before);

    const cancelled = await form({ reason: 'duplicate run', confirmNotSubmitted: 'yes' });
    expect([cancelled.status, cancelled.headers.get('location')]).toEqual([303, `/console/settlement/batches/${batchId}?done=cancelled`]);
    expect((await stack.db.query<{ detail: string }>(`SELECT detail FROM settlement_actions WHERE batch_id = $1 AND action = 'cancel'`, [batchId])).rows[0]!.detail).toContain('confirmed not submitted to the bank');
  });

  test('when finance cancel while the bank file is being written, then the cancel waits for the download and is refused: no file goes out for lines a cancel freed', async () => {
    vendor = await offlineVendor(stack, employerId, { name: 'Race Bhavan' });
    await subsidisedOrder(stack, employerId, vendor.vendorId, 20_000);
    const started = await finance('POST', '/finance/settlement/runs', { from: today, to: today, vendorIds: [vendor.vendorId] });
    const run = await eventually(() => finance('GET', `/finance/settlement/runs/${started.body.workflowId}`), (r) => r.status === 200 && !!r.body.live?.progress?.batchId, 20_000);
    const batchId = run.body.live.progress.batchId as string;
    // The download's audit row is written 1.5 s after its checks: the cancel comes in that gap.
    await stack.db.query(`CREATE FUNCTION test_slow_download() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.action = 'bank_file' THEN PERFORM pg_sleep(1.5); END IF; RETURN NEW; END $$`);
    await stack.db.query('CREATE TRIGGER test_slow_download BEFORE INSERT ON settlement_actions FOR EACH ROW EXECUTE FUNCTION test_slow_download()');
    try {
      const download = finance('GET', `/finance/settlement/batches/${batchId}/bank-file`);
      await new Promise((r) => setTimeout(r, 400));
      const cancel = await finance('POST', `/finance/settlement/batches/${batchId}/cancel`, { reason: 'cancelled while the file was written' });
      expect((await download).status).toBe(200);
      expect([cancel.status, cancel.body.error?.code]).toEqual([409, 'settlement_batch_file_downloaded']);
      expect((await finance('GET', `/finance/settlement/batches/${batchId}`)).body).toMatchObject({ status: 'open', bankFile: { downloads: 1 } });
      expect(await openLedger()).toEqual([[18_000, 'frozen']]);
    } finally {
      await stack.db.query('DROP TRIGGER test_slow_download ON settlement_actions');
      await stack.db.query('DROP FUNCTION test_slow_download()');
    }
  });
});
