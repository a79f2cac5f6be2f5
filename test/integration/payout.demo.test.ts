/** The demo end to end: API (money in + ops), worker, sandbox with webhooks, real PostgreSQL and
 * Temporal. Its per-vendor summary must agree with the sandbox's ledger. */
import { runDemo, type DemoSummaryRow } from '../../src/cli/demo';
import { addDays, istDateOf } from '../../src/domain/calendar';
import type { Statement } from '../../src/statements/contract';
import type { Db } from '../../src/db/pool';
import { startPayoutStack, type PayoutStack } from './payoutStack';
import { ledgerSums, statementSums } from './statementSupport';

describe('payouts demo', () => {
  let stack: PayoutStack;
  let db: Db;
  let apiUrl: string;
  let keys: { admin: string; ordering: string; ops: string; finance: string };
  let opsAuth: { authorization: string };
  /** What the first test's demo returned and printed, for the statement test. */
  let demo: { rows: DemoSummaryRow[]; lines: string[] } | undefined;

  beforeAll(async () => {
    stack = await startPayoutStack({ name: 'payout-demo', env: { PAYOUT_SETTLEMENT_POLL_MS: '1000' }, sandbox: { transferProcessingDelayMs: 200 } });
    ({ db, apiUrl } = stack);
    const bare = (h: { authorization: string }) => h.authorization.slice('Bearer '.length);
    keys = { admin: bare(stack.keys.admin), ordering: bare(stack.keys.ordering), ops: bare(stack.keys.ops), finance: bare(stack.keys.finance) };
    opsAuth = stack.keys.ops;
  });

  afterAll(async () => {
    await stack?.close();
  });

  test('when the demo places its mix of orders, then each vendor summary agrees with the sandbox ledger', async () => {
    const lines: string[] = [];
    const rows = await runDemo({ apiUrl, keys, sandboxControl: stack.sandbox.control, client: stack.temporal.client, temporalUiUrl: 'http://localhost:8233', log: (l) => lines.push(l), timeoutMs: 30_000 });
    demo = { rows, lines };
    expect(rows.map((r) => [r.ourPaise, r.sandboxPaise, r.agrees])).toEqual([[8_100, 8_100, true], [20_250, 20_250, true], [0, 0, true]]);
    expect(lines.join('\n')).toMatch(/payout settled — http:\/\/localhost:8233\/namespaces\/default\/workflows\/payout-/);
    expect(lines.join('\n')).toMatch(/payout parked \(BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT\)/);
    // Finance's part: settlements, the bank statement, a clean recon, then the seeded discrepancy.
    const text = lines.join('\n');
    expect(text).toMatch(/finance: the sandbox clock moves to \d{4}-\d{2}-\d{2} \(T\+2 working days\); Razorpay settles [1-9]\d* settlement/);
    expect(text).toMatch(/finance: recon .*, 0 mismatched/);
    expect(text).toMatch(/finance: seeded discrepancy → exception adjustment \(₹50\.00/);
    expect(text).toMatch(/as planned, Razorpay refused the transfer to a suspended account; it waits in the ops queue/);
    // The demo's last recon line says what the console's newest run row says, in the same counts.
    const newest = (await db.query('SELECT rows_fetched, summary FROM recon_runs ORDER BY started_at DESC LIMIT 1')).rows[0];
    const s = newest.summary as { matchedGatewayRows: number; matchedBankCredits: number; matchedBankDebits: number; exceptions: number };
    expect(text).toContain(`again (the newest row of the console's runs): ${newest.rows_fetched} gateway row(s) pulled, ${s.matchedGatewayRows} matched to our records; bank lines matched: ${s.matchedBankCredits} credit(s), ${s.matchedBankDebits} debit(s); ${s.exceptions} exception(s)`);
    expect(s.matchedGatewayRows).toBeLessThanOrEqual(newest.rows_fetched);
    // Nothing the demo did was set aside: its sandbox never dates an event ahead of our clock.
    expect((await db.query('SELECT event_type, reason FROM quarantined_webhooks')).rows).toEqual([]);
    // Every demo vendor has bank details for a settlement run's bank file, stored masked.
    expect(text).toMatch(/bank details set for ven_dosa_\w+, ven_biryani_\w+, ven_shut_\w+/);
    expect((await db.query('SELECT account_masked FROM vendor_bank_details ORDER BY account_masked')).rows).toEqual([{ account_masked: 'XXXXXX0601' }, { account_masked: 'XXXXXX0602' }, { account_masked: 'XXXXXX0603' }]);
  });

  test('when the ops routes are called without a key, then 401; with an ops key, the counters and the payout lookup answer', async () => {
    const anonymous = await fetch(`${apiUrl}/ops/payouts/counters`);
    expect(anonymous.status).toBe(401);
    const auth = opsAuth;
    const counters = await (await fetch(`${apiUrl}/ops/payouts/counters`, { headers: auth })).json();
    expect(counters).toMatchObject({ parkedPayouts: 1, lostClaims: expect.any(Number), unknownOutcomes: 0, oldestProcessingAgeSeconds: 0 });
    const { rows } = await db.query(`SELECT order_id FROM payouts WHERE status = 'parked'`);
    const lookup = await (await fetch(`${apiUrl}/ops/payouts/${rows[0].order_id}`, { headers: auth })).json();
    expect(lookup).toMatchObject({ payout: { status: 'parked' }, attempts: [{ outcome: 'rejected', provider_code: 'BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT' }], workflowId: `payout-${rows[0].order_id}` });
    const unknownOrder = await fetch(`${apiUrl}/ops/payouts/ord_nope/retry`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'try' }) });
    expect(unknownOrder.status).toBe(404);
    const badBody = await fetch(`${apiUrl}/ops/transfers/pause`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({}) });
    expect(badBody.status).toBe(400);
  });

  test('when the demo has run, then it printed where to download a statement, and each demo vendor\'s statement ties to the ledgers to the paisa', async () => {
    const { rows, lines } = demo!;
    const dosa = rows[0]!.vendorId;
    expect(lines.join('\n')).toMatch(new RegExp(`download  curl -H 'Authorization: Bearer <finance key>' '${apiUrl}/v1/vendors/${dosa}/statement\\?from=(\\d{4}-\\d{2}-\\d{2})&to=\\1&format=csv'`));
    const today = istDateOf(new Date());
    const period = { from: addDays(today, -1), to: addDays(today, 1) };
    for (const { vendorId } of rows) {
      const answer = await fetch(`${apiUrl}/v1/vendors/${vendorId}/statement?from=${period.from}&to=${period.to}`, { headers: stack.keys.finance });
      const statement = (await answer.json()) as Statement;
      expect([vendorId, answer.status, statementSums(statement), statement.totals.unexplainedPaise]).toEqual([vendorId, 200, await ledgerSums(db, vendorId, period), 0]);
    }
    // The dosa vendor's direct transfer was settled by Razorpay in the demo's finance day: its UTR is on the statement.
    const dosaStatement = (await (await fetch(`${apiUrl}/v1/vendors/${dosa}/statement?from=${period.from}&to=${period.to}`, { headers: stack.keys.finance })).json()) as Statement;
    expect(dosaStatement.lines.map((l) => [l.route, l.paidBy.rail])).toEqual(expect.arrayContaining([['direct_transfer', 'transfer'], ['cash', 'offline'], ['corporate_direct', 'employer_direct']]));
    expect(dosaStatement.lines.find((l) => l.route === 'direct_transfer')!.paidBy).toMatchObject({ status: 'settled', utr: expect.any(String) });
  });
});
