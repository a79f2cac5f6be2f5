/** The `payouts` CLI as ops and finance run it: its own OS process (node with tsx's loader), talking
 * to a real API (in-process, port 0) over a real worker, PostgreSQL and the Razorpay sandbox, with
 * the key and URL from the environment (or the stack file). Also the API's finance CSV export. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { writeStackFile } from '../../src/cli/payouts/stack';
import { reconProgressQuery } from '../../src/contracts/recon';
import type { Db } from '../../src/db/pool';
import { createGateway } from '../../src/gateway';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { temporalReconStarter } from '../../src/recon/temporal';
import { EXCEPTION_CSV_HEADER } from '../../src/reports/exceptionsCsv';
import type { AuthHeader } from '../support/apiKeys';
import { runPayoutsCli, type CliRun } from '../support/payoutsCli';
import { eventually, payoutRow, seedPaidOrder } from './payoutSeed';
import { startPayoutStack, type PayoutStack } from './payoutStack';

const root = path.resolve(__dirname, '../..');
const fixtures = path.join(root, 'test/fixtures/recon');
const SUSPENDED = 'BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT';

type Run = CliRun;

/** RFC 4180, as a spreadsheet reads it. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; } else if (c === '\r' && text[i + 1] === '\n') { row.push(field); rows.push(row); row = []; field = ''; i++; } else field += c;
  }
  return rows;
}
const records = (csv: string): Array<Record<string, string>> => {
  const [header, ...rows] = parseCsv(csv);
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]!])));
};

describe('the payouts CLI against a running stack', () => {
  let stack: PayoutStack;
  let db: Db;
  let api: FastifyInstance;
  let apiUrl: string;
  const parked: Array<{ orderId: string; account: string }> = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'payouts-cli-'));

  /** Runs `payouts ARGS` as its own process; the key is the role's unless `env` says otherwise. */
  function payouts(args: string[], key: AuthHeader | null, env: Record<string, string> = {}): Promise<Run> {
    return runPayoutsCli(args, {
      // Never this checkout's own .data/stack.json.
      PAYOUTS_STACK_FILE: path.join(tmp, 'no-stack.json'),
      PAYOUTS_API_URL: apiUrl,
      ...(key ? { PAYOUTS_API_KEY: key.authorization.replace(/^Bearer /, '') } : {}),
      ...env,
    });
  }
  const ops = (args: string[], env?: Record<string, string>) => payouts(args, stack.keys.ops, env);
  const finance = (args: string[], env?: Record<string, string>) => payouts(args, stack.keys.finance, env);
  const lineOf = (out: string, needle: string) => out.split('\n').find((l) => l.includes(needle));

  beforeAll(async () => {
    stack = await startPayoutStack({ name: 'cli', env: { PAYOUT_HUMAN_RECHECK_MS: '60000' } });
    ({ db } = stack);
    const { client, taskQueue } = stack.temporal;
    // The stack's API has no recon starter; this one has everything the CLI calls.
    api = await buildApi({
      config: stack.config, db, gateway: createGateway(stack.config), temporal: client,
      payoutStarter: temporalPayoutStarter(client, taskQueue, db), reconStarter: temporalReconStarter(client, taskQueue),
    });
    apiUrl = await api.listen({ port: 0, host: '127.0.0.1' });
    const starter = temporalPayoutStarter(client, taskQueue, db);
    for (let i = 0; i < 3; i++) {
      const account = await stack.sandbox.control.createLinkedAccount({ status: 'suspended' });
      const order = await seedPaidOrder(db, { linkedAccountId: account });
      await starter.startPayout(order.orderId);
      parked.push({ orderId: order.orderId, account });
    }
    for (const p of parked) await eventually(() => payoutRow(db, p.orderId), (r) => r?.status === 'parked');
  });

  afterAll(async () => {
    await api?.close();
    await stack?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe('ops', () => {
    test('when payouts are parked, then queue lists each with its amount in rupees, age and reason, and --json gives the API items', async () => {
      const run = await ops(['queue']);
      expect([run.code, run.stderr]).toEqual([0, '']);
      const [header, ...lines] = run.stdout.trimEnd().split('\n');
      expect(header).toBe('ORDER\tSTATUS\tAMOUNT\tWAITING\tATTEMPTS\tVENDOR\tREASON\tCODE');
      expect(lines).toHaveLength(3);
      const fields = lineOf(run.stdout, parked[0]!.orderId)!.split('\t');
      expect(fields).toEqual([parked[0]!.orderId, 'parked', '₹81.00', expect.stringMatching(/^\d+(s|m)$/), '1', expect.stringMatching(/^ven_/), "the vendor's linked account is suspended at Razorpay", SUSPENDED]);

      const json = await ops(['queue', '--json', '--status', 'parked', '--reason', SUSPENDED]);
      expect(json.code).toBe(0);
      const items = JSON.parse(json.stdout) as Array<{ orderId: string; amount: { paise: number }; webUiUrl: string }>;
      expect(items.map((i) => i.orderId).sort()).toEqual(parked.map((p) => p.orderId).sort());
      expect(items[0]).toMatchObject({ amount: { paise: 8_100 }, webUiUrl: expect.stringContaining('/workflows/payout-ord_') });
      expect(JSON.parse((await ops(['queue', '--json', '--status', 'review'])).stdout)).toEqual([]);
      expect(JSON.parse((await ops(['queue', '--json', '--older-than', '1h'])).stdout)).toEqual([]);

      const bad = await ops(['queue', '--older-than', 'soon']);
      expect([bad.code, bad.stdout]).toEqual([2, '']);
      expect(bad.stderr).toBe('error: --older-than "soon": expected a duration such as 30m, 4h or 2d\n');
    });

    test('when ops show a parked payout, then its reason, next step, attempts, order and Web UI link are printed; an unknown order exits 1', async () => {
      const { orderId } = parked[0]!;
      const run = await ops(['show', orderId], { PAYOUTS_TEMPORAL_UI_URL: 'http://127.0.0.1:8233' });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`for order ${orderId}: parked`);
      expect(run.stdout).toContain(`reason      the vendor's linked account is suspended at Razorpay (${SUSPENDED}, decided by Razorpay)`);
      expect(run.stdout).toContain('next step   ask the vendor to resolve the suspension with Razorpay, then retry; or pay offline');
      expect(run.stdout).toContain(`payouts retry ${orderId} --reason`);
      expect(run.stdout).toContain(`http://127.0.0.1:8233/namespaces/default/workflows/payout-${orderId}`);
      expect(run.stdout).toMatch(new RegExp(`#1  \\S+  rejected  ${SUSPENDED}`));
      expect(run.stdout).toContain('vendor net ₹81.00');

      const unknown = await ops(['show', 'ord_unknown']);
      expect([unknown.code, unknown.stdout, unknown.stderr]).toEqual([1, '', 'error: 404 payout_not_found: no payout for order ord_unknown\n']);
    });

    test('when the account is reactivated and ops retry, then the payout settles and the decision is audited with the person; another decision on it exits 1', async () => {
      const { orderId, account } = parked[0]!;
      await stack.sandbox.control.setLinkedAccountStatus(account, 'activated');
      const noReason = await ops(['retry', orderId]);
      expect(noReason.code).toBe(2);
      expect(noReason.stderr).toContain("required option '--reason <text>' not specified");

      const run = await ops(['retry', orderId, '--reason', 'vendor reactivated by Razorpay', '--actor', 'Asha']);
      expect([run.code, run.stderr]).toEqual([0, '']);
      expect(run.stdout).toMatch(new RegExp(`^${orderId}: retry applied; the payout is \\w+\\n$`));
      await eventually(() => payoutRow(db, orderId), (r) => r?.status === 'settled', 30_000);

      // The same decision again is in effect already: a success, not an error.
      const again = await ops(['retry', orderId, '--reason', 'clicked twice']);
      expect([again.code, again.stdout]).toEqual([0, `${orderId}: retry was already in effect; the payout is settled\n`]);
      const cancel = await ops(['cancel', orderId, '--reason', 'too late for that']);
      expect([cancel.code, cancel.stdout, cancel.stderr]).toEqual([1, '', 'error: 409 payout_not_awaiting_decision: payout is settled; only parked or review payouts take ops decisions\n']);

      const audit = await ops(['audit', '--actor', 'Asha']);
      expect(audit.code).toBe(0);
      expect(lineOf(audit.stdout, orderId)!.split('\t').slice(1)).toEqual(['key:test-ops (Asha)', 'payout_decision', 'retry', orderId, 'vendor reactivated by Razorpay', '']);
    });

    test('when several payouts are cancelled at once, then each is answered on its own, and an unknown order makes the exit code 1', async () => {
      const [a, b] = [parked[1]!.orderId, parked[2]!.orderId];
      const run = await ops(['cancel', a, b, 'ord_unknown', '--reason', 'vendors closed for good']);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe(`ORDER\tRESULT\tSTATUS\n${a}\tapplied\tcancelled\n${b}\tapplied\tcancelled\nord_unknown\tnot_found\t\n`);
      expect(run.stderr).toBe('error: 1 of 3 cancel decisions were not applied\n');
      const again = await ops(['cancel', a, b, '--reason', 'vendors closed for good']);
      expect([again.code, again.stdout]).toEqual([0, `ORDER\tRESULT\tSTATUS\n${a}\talready_in_effect\tcancelled\n${b}\talready_in_effect\tcancelled\n`]);
      expect(await payoutRow(db, a)).toMatchObject({ status: 'cancelled' });
    });

    test('when ops pause and resume direct transfers, then the switch says so and the resume starts the sweep', async () => {
      const pause = await ops(['pause', '--reason', 'bank incident', '--actor', 'Asha']);
      expect([pause.code, pause.stdout]).toEqual([0, expect.stringMatching(/^direct transfers are PAUSED since \S+ by key:test-ops \(Asha\): bank incident\nno request was past the gate at the moment of the pause: nothing more leaves\n$/)]);
      const state = await ops(['switch', '--json']);
      expect(JSON.parse(state.stdout)).toMatchObject({ paused: true, reason: 'bank incident' });
      const resume = await ops(['resume', '--reason', 'incident over']);
      expect(resume.code).toBe(0);
      expect(resume.stdout).toMatch(/^direct transfers are running since \S+ by key:test-ops \(ci-runner\): incident over\npayout sweep started now: \S+\n$/);
      expect(JSON.parse((await ops(['switch', '--json'])).stdout)).toMatchObject({ paused: false });
      const { rows } = await db.query(`SELECT action FROM review_actions WHERE payout_id IS NULL ORDER BY id`);
      expect(rows.map((r) => r.action)).toEqual(['pause_transfers', 'resume_transfers']);
    });
  });

  describe('finance', () => {
    test('when finance imports a bank statement, then its lines are added; the same file again adds nothing; a malformed file is refused by line and exits 2; a missing file exits 2', async () => {
      const good = await finance(['bank', 'import', path.join(fixtures, 'bank-good.csv')]);
      expect([good.code, good.stderr]).toEqual([0, '']);
      expect(good.stdout).toMatch(/^bank-good\.csv: 2 of 2 lines added \(import \d+\)\n$/);
      const again = await finance(['bank', 'import', path.join(fixtures, 'bank-good.csv')]);
      expect(again.stdout).toMatch(/^bank-good\.csv was imported before \(import \d+\): nothing added\n$/);
      const overlap = await finance(['bank', 'import', path.join(fixtures, 'bank-overlap.csv')]);
      expect(overlap.stdout).toMatch(/^bank-overlap\.csv: 1 of 2 lines added \(import \d+\); 1 already known from an earlier file\n$/);

      const bad = await finance(['bank', 'import', path.join(fixtures, 'bank-malformed.csv')]);
      expect([bad.code, bad.stdout]).toEqual([2, '']);
      const errors = bad.stderr.trimEnd().split('\n');
      expect(errors).toEqual([
        expect.stringMatching(/^bank-malformed\.csv:3: .*value_date/), expect.stringMatching(/^bank-malformed\.csv:4: .*amount/), expect.stringMatching(/^bank-malformed\.csv:5: /),
        'error: bank-malformed.csv has 3 bad lines; nothing was imported',
      ]);

      const missing = await finance(['bank', 'import', path.join(tmp, 'nope.csv')]);
      expect([missing.code, missing.stderr]).toEqual([2, `error: cannot read ${path.join(tmp, 'nope.csv')}: ENOENT\n`]);
      const { rows } = await db.query(`SELECT file_name, imported_by FROM bank_statement_imports ORDER BY id`);
      expect(rows).toEqual([{ file_name: 'bank-good.csv', imported_by: 'key:test-finance (ci-runner)' }, { file_name: 'bank-overlap.csv', imported_by: 'key:test-finance (ci-runner)' }]);
    });

    test('when finance runs recon with --wait, then progress lines follow the run to its end and the summary is in rupees', async () => {
      const run = await finance(['recon', 'run', '--from', '2026-09-02', '--to', '2026-09-03', '--as-of', '2026-09-05', '--wait']);
      expect(run.code).toBe(0);
      const progress = run.stderr.trimEnd().split('\n');
      expect(progress.length).toBeGreaterThanOrEqual(1);
      for (const line of progress) expect(line).toMatch(/^recon-2026-09-02-2026-09-03: (starting|pulling|matching|completed), \d\/2 days pulled, \d+ rows, \d+ matched, \d+ exceptions$/);
      expect(progress.at(-1)).toMatch(/: completed, 2\/2 days pulled/);
      const out = run.stdout.split('\n');
      expect(out[0]).toMatch(/^recon recon-2026-09-02-2026-09-03 completed: 2 days, 0 gateway rows, \d+ settlements fetched, 0 matched$/);
      expect(out[1]).toBe('  exceptions found: 3 (3 new, 0 changed, 0 cleared)');
      // The three bank credits with no settlement: ₹976.40 + ₹1,500.00 + ₹20.05.
      expect(out[2]).toBe('open exceptions 2026-09-02..2026-09-03: 3, ₹2,496.45 at stake');
      expect(run.stdout).toMatch(/ {2}unmatched-bank-credit +3 +₹2,496\.45/);
      const { rows } = await db.query(`SELECT status FROM recon_runs WHERE workflow_id = 'recon-2026-09-02-2026-09-03'`);
      expect(rows).toEqual([{ status: 'completed' }]);

      const badWindow = await finance(['recon', 'run', '--from', '2026-02-30', '--to', '2026-03-01']);
      expect([badWindow.code, badWindow.stderr]).toEqual([2, 'error: --from "2026-02-30": expected a date YYYY-MM-DD that exists\n']);
    });

    test('when a recon run is cancelled while finance waits on it, then --wait exits 1 and says how it ended', async () => {
      const { client } = stack.temporal;
      await stack.sandbox.control.injectFault({ endpoint: 'settlements.recon', fault: { kind: 'latency', ms: 5_000 }, calls: [1] });
      try {
        const waiting = finance(['recon', 'run', '--from', '2026-07-06', '--to', '2026-07-07', '--as-of', '2026-07-08', '--wait']);
        const handle = client.workflow.getHandle('recon-2026-07-06-2026-07-07');
        await eventually(() => handle.query(reconProgressQuery).then((p) => p.phase, () => 'not yet'), (phase) => phase === 'pulling', 30_000);
        await handle.cancel();
        const run = await waiting;
        expect(run.code).toBe(1);
        expect(run.stderr.trimEnd().split('\n').at(-1)).toMatch(/^error: recon recon-2026-07-06-2026-07-07 (cancelled|failed)/);
        expect(run.stdout).toBe('');
      } finally {
        await stack.sandbox.control.clearFaults();
      }
    });

    describe('exceptions', () => {
      let big: number;
      let transfer: number;
      beforeAll(async () => {
        const insert = async (values: unknown[]) => (await db.query(
          `INSERT INTO recon_exceptions (key, class, reason, severity, next_action, day, entity_id, settlement_id, order_id, expected_paise, actual_paise, details, first_run_id, last_run_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'run-x', 'run-x') RETURNING id`, values)).rows[0].id as number;
        big = await insert(['amount-mismatch|pay_BigAmount00001', 'mismatched', 'amount-mismatch', 'high', 'Compare the gateway amount with our record, then correct it.', '2026-07-20',
          'pay_BigAmount00001', 'setl_BigAmount0001', 'ord_big', 12_345_678, 12_345_600, '{}']);
        transfer = await insert(['transfer-not-in-app|trf_Unknown0000001', 'unmatched', 'transfer-not-in-app', 'critical', 'Possible double payment: check the vendor payouts now.', '2026-07-20',
          'trf_Unknown0000001', 'setl_BigAmount0001', null, null, 8_100, '{"sourcePaymentId":"pay_Source00000001"}']);
      });

      test('when finance lists exceptions, then the table, the CSV and the JSON show the same rows with rupees in Indian grouping, the UTR and the gateway ids', async () => {
        const table = await finance(['recon', 'exceptions', '--from', '2026-07-01', '--to', '2026-09-30']);
        expect(table.code).toBe(0);
        const [header, ...lines] = table.stdout.trimEnd().split('\n');
        expect(header!.split('\t')).toEqual(['ID', 'DAY', 'STATUS', 'CLASS', 'SEVERITY', 'REASON', 'EXPECTED', 'ACTUAL', 'DIFFERENCE', 'UTR', 'PAYMENT', 'REFUND', 'TRANSFER', 'SETTLEMENT', 'ORDER', 'NEXT ACTION']);
        expect(lines).toHaveLength(5);
        expect(lineOf(table.stdout, 'pay_BigAmount00001')!.split('\t').slice(0, 15)).toEqual([String(big), '2026-07-20', 'open', 'mismatched', 'high', 'amount-mismatch',
          '₹1,23,456.78', '₹1,23,456.00', '-₹0.78', '', 'pay_BigAmount00001', '', '', 'setl_BigAmount0001', 'ord_big']);

        const csv = await finance(['recon', 'exceptions', '--from', '2026-07-01', '--to', '2026-09-30', '--format', 'csv']);
        expect(csv.code).toBe(0);
        expect(parseCsv(csv.stdout)[0]).toEqual([...EXCEPTION_CSV_HEADER]);
        const rows = records(csv.stdout);
        expect(rows).toHaveLength(5);
        expect(rows.find((r) => r.id === String(big))).toMatchObject({ expected_rupees: '1,23,456.78', expected_paise: '12345678', actual_rupees: '1,23,456.00', difference_paise: '-78', payment_id: 'pay_BigAmount00001', settlement_id: 'setl_BigAmount0001' });
        expect(rows.find((r) => r.id === String(transfer))).toMatchObject({ transfer_id: 'trf_Unknown0000001', payment_id: 'pay_Source00000001', actual_rupees: '81.00', severity: 'critical' });
        expect(rows.filter((r) => r.reason === 'unmatched-bank-credit').map((r) => [r.utr, r.actual_rupees]).sort()).toEqual([['AXISCNGOOD000001', '976.40'], ['AXISCNGOOD000002', '1,500.00'], ['AXISCNGOOD000003', '20.05']]);

        const json = await finance(['recon', 'exceptions', '--from', '2026-07-01', '--to', '2026-09-30', '--format', 'json']);
        const listed = JSON.parse(json.stdout) as Array<{ id: number; expectedPaise: number | null; details: unknown }>;
        expect(listed.map((e) => String(e.id))).toEqual(rows.map((r) => r.id));
        expect(listed.find((e) => e.id === big)).toMatchObject({ expectedPaise: 12_345_678, actualPaise: 12_345_600, reason: 'amount-mismatch' });

        const critical = JSON.parse((await finance(['recon', 'exceptions', '--severity', 'critical', '--json'])).stdout) as Array<{ id: number }>;
        expect(critical.map((e) => e.id)).toEqual([transfer]);
        const badFormat = await finance(['recon', 'exceptions', '--format', 'xlsx']);
        expect(badFormat.code).toBe(2);
        expect(badFormat.stderr).toContain("error: option '--format <format>' argument 'xlsx' is invalid");
      });

      test('when finance downloads the CSV export from the API, then it is text/csv with one header row and rupees, the same bytes as the CLI writes; other callers get 401 and 403', async () => {
        const url = `${apiUrl}/finance/recon/exceptions.csv?from=2026-07-01&to=2026-09-30`;
        const res = await fetch(url, { headers: stack.keys.finance });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
        expect(res.headers.get('content-disposition')).toBe('attachment; filename="recon-exceptions.csv"');
        const body = await res.text();
        expect(body.split('\r\n')[0]).toBe(EXCEPTION_CSV_HEADER.join(','));
        expect(body).toContain(`${big},2026-07-20,open,mismatched,high,amount-mismatch,"1,23,456.78",12345678,"1,23,456.00",12345600,-0.78,-78,`);
        const cli = await finance(['recon', 'exceptions', '--from', '2026-07-01', '--to', '2026-09-30', '--format', 'csv']);
        expect(cli.stdout).toBe(body);

        const critical = records(await (await fetch(`${apiUrl}/finance/recon/exceptions.csv?severity=critical`, { headers: stack.keys.finance })).text());
        expect(critical.map((r) => r.id)).toEqual([String(transfer)]);
        const empty = await fetch(`${apiUrl}/finance/recon/exceptions.csv?reason=on-hold`, { headers: stack.keys.finance });
        expect(await empty.text()).toBe(`${EXCEPTION_CSV_HEADER.join(',')}\r\n`);
        const bad = await fetch(`${apiUrl}/finance/recon/exceptions.csv?severity=urgent`, { headers: stack.keys.finance });
        expect([bad.status, ((await bad.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_request']);

        const anonymous = await fetch(url);
        expect([anonymous.status, anonymous.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="payouts"']);
        const opsCaller = await fetch(url, { headers: stack.keys.ops });
        expect(opsCaller.status).toBe(403);
        expect(((await opsCaller.json()) as { error: { code: string } }).error.code).toBe('forbidden');
      });

      test('when finance resolves an exception with a note, then it is resolved and audited; resolving it again exits 1', async () => {
        const run = await finance(['recon', 'resolve', String(big), '--note', 'Razorpay corrected the amount', '--actor', 'Priya']);
        expect([run.code, run.stdout]).toEqual([0, `exception ${big} (amount-mismatch, 2026-07-20) resolved by key:test-finance (Priya): Razorpay corrected the amount\n`]);
        const again = await finance(['recon', 'resolve', String(big), '--note', 'twice']);
        expect([again.code, again.stderr]).toEqual([1, `error: 409 already_resolved: recon exception ${big} is already resolved\n`]);
        const notAnId = await finance(['recon', 'resolve', 'abc', '--note', 'x']);
        expect(notAnId.code).toBe(2);
        const resolved = JSON.parse((await finance(['recon', 'exceptions', '--status', 'resolved', '--json'])).stdout) as Array<{ id: number; resolutionNote: string }>;
        expect(resolved).toEqual([expect.objectContaining({ id: big, resolutionNote: 'Razorpay corrected the amount' })]);
      });
    });
  });

  describe('finding the API, and exit codes', () => {
    test('when only the stack file names the API, then ops commands use its ops key and finance commands its finance key', async () => {
      const bare = (key: AuthHeader) => key.authorization.replace(/^Bearer /, '');
      const stackRoot = path.join(tmp, 'stack');
      const file = await writeStackFile(stackRoot, {
        apiUrl, temporalUiUrl: 'http://127.0.0.1:8233',
        keys: { ordering: bare(stack.keys.ordering), ops: bare(stack.keys.ops), admin: bare(stack.keys.admin), finance: bare(stack.keys.finance) },
      });
      const env = { PAYOUTS_STACK_FILE: file, PAYOUTS_API_URL: '' };
      const opsRun = await payouts(['switch'], null, env);
      expect([opsRun.code, opsRun.stderr]).toEqual([0, '']);
      expect(opsRun.stdout).toMatch(/^direct transfers are running/);
      const financeRun = await payouts(['recon', 'exceptions', '--reason', 'on-hold', '--format', 'csv'], null, env);
      expect([financeRun.code, financeRun.stderr, financeRun.stdout]).toEqual([0, '', `${EXCEPTION_CSV_HEADER.join(',')}\r\n`]);
      // The URL and key from the environment win over the file.
      const envWins = await payouts(['switch'], stack.keys.finance, { PAYOUTS_STACK_FILE: file });
      expect([envWins.code, envWins.stderr]).toEqual([1, expect.stringMatching(/^error: 403 forbidden: this route needs the role ops; the key test-finance has finance\n$/)]);
    });

    test('when the CLI is called wrongly, then usage errors exit 2; refusals and an unreachable API exit 1, each with one line', async () => {
      expect((await ops(['--help'])).code).toBe(0);
      const unknownOption = await ops(['queue', '--bogus']);
      expect([unknownOption.code, unknownOption.stderr.split('\n')[0]]).toEqual([2, "error: unknown option '--bogus'"]);
      expect((await ops(['nonsense'])).code).toBe(2);
      expect((await ops(['recon'])).code).toBe(2);
      const nothing = await payouts(['switch'], null, { PAYOUTS_API_URL: '' });
      expect([nothing.code, nothing.stderr]).toEqual([2, expect.stringMatching(/^error: no API to talk to: pass --api-url, set PAYOUTS_API_URL, or start the local stack with npm run dev/)]);

      const badKey = await payouts(['switch'], { authorization: 'Bearer pk_not_a_real_key' });
      expect([badKey.code, badKey.stderr]).toEqual([1, 'error: 401 unauthorized: the API key is unknown, revoked or malformed\n']);
      const gone = await ops(['switch', '--api-url', 'http://127.0.0.1:59999']);
      expect([gone.code, gone.stderr]).toEqual([1, 'error: cannot reach the API at http://127.0.0.1:59999 (ECONNREFUSED)\n']);
      const settled = parked[0]!.orderId;
      const noEvidence = await ops(['mark-paid', settled, '--reason', 'paid somehow']);
      expect([noEvidence.code, noEvidence.stderr]).toEqual([2, 'error: mark-paid needs --transfer trf_… (the Razorpay transfer that paid it), --reference REF, or both\n']);
      expect((await ops(['mark-paid', settled, '--transfer', 'pay_NotATransfer01', '--reason', 'paid by transfer'])).code).toBe(2);
      expect((await ops(['mark-paid', settled, 'ord_other', '--transfer', 'trf_DoesNotExist01', '--reason', 'paid by transfer'])).code).toBe(2);
      // --transfer reaches the API, which asks Razorpay before anything else.
      const unknownTransfer = await ops(['mark-paid', settled, '--transfer', 'trf_DoesNotExist01', '--reason', 'paid by transfer']);
      expect([unknownTransfer.code, unknownTransfer.stderr]).toEqual([1, expect.stringMatching(/^error: 422 transfer_not_found: Razorpay has no transfer trf_DoesNotExist01/)]);
      const tooShort = await ops(['pause', '--reason', 'x']);
      expect([tooShort.code, tooShort.stderr]).toEqual([2, expect.stringMatching(/^error: 400 invalid_request: request failed validation \(reason: .+\)\n$/)]);
      expect(JSON.parse((await ops(['switch', '--json'])).stdout)).toMatchObject({ paused: false });
    });

    test('when a pair pays hourly, then batches lists its open batch, close-batch pays it now in one transfer, and show lists the orders inside', async () => {
      const account = await stack.sandbox.control.createLinkedAccount();
      const first = await seedPaidOrder(db, { linkedAccountId: account });
      await db.query(`UPDATE employer_vendor SET payout_schedule = 'hourly' WHERE employer_id = $1 AND vendor_id = $2`, [first.employerId, first.vendorId]);
      const second = await seedPaidOrder(db, { linkedAccountId: account, pair: first });
      const starter = temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue, db);
      for (const o of [first, second]) await starter.startPayout(o.orderId);
      for (const o of [first, second]) await eventually(() => payoutRow(db, o.orderId), (r) => r?.status === 'batched');
      const listed = await ops(['batches', '--vendor', first.vendorId, '--status', 'open']);
      expect([listed.code, listed.stderr]).toEqual([0, '']);
      const [header, line] = listed.stdout.trimEnd().split('\n');
      expect(header).toBe('BATCH\tVENDOR\tSCHEDULE\tCUTOFF\tSTATUS\tORDERS\tSUM\tTRANSFER');
      const batchId = line!.split('\t')[0]!;
      expect(line!.split('\t')).toEqual([expect.stringMatching(/^batch_[0-9a-f]{30}$/), first.vendorId, 'hourly', expect.any(String), 'open', '2', '₹162.00', '—']);

      const closed = await ops(['close-batch', batchId, '--reason', 'vendor asked for an early payout']);
      expect([closed.code, closed.stdout]).toEqual([0, `${batchId}: closing now; 2 orders, ₹162.00 in one transfer (payouts show ${batchId})\n`]);
      await eventually(() => payoutRow(db, second.orderId), (r) => r?.status === 'settled');
      const shown = await ops(['show', batchId]);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(`for order ${batchId}: settled`);
      expect(shown.stdout).toContain('orders in this batch');
      for (const o of [first, second]) expect(lineOf(shown.stdout, o.orderId)).toMatch(new RegExp(`${o.orderId}\t₹81.00\tsettled`));
      const member = await ops(['show', first.orderId]);
      expect(member.stdout).toContain(`paid by batch\n  ${batchId} (hourly, closed): 2 orders, ₹162.00`);
      expect((await stack.sandbox.control.transfers({ recipient: account })).map((t) => t.amount)).toEqual([16_200]);
      const again = await ops(['close-batch', batchId, '--reason', 'once more']);
      expect([again.code, again.stderr]).toEqual([1, expect.stringContaining('batch_not_open')]);
    });
  });
});
