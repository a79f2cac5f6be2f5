/** Issue 14: the seeded fault campaign, run as its command (`npm run campaign`) on every change.
 * It starts its own production topology (a Temporal dev server and PostgreSQL it can restart, two
 * workers, two APIs behind the load balancer, the sandbox as Razorpay), throws the whole fault
 * schedule at it while 100 orders go down every route, and judges the result from the sandbox's
 * ledger and PostgreSQL, ending in recon. A violation fails the test with the command's own report
 * (the seed and the orders involved). CAMPAIGN_SEED picks another seed. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ORDER_KINDS } from '../campaign/plan';

const root = path.resolve(__dirname, '../..');
const SEED = process.env.CAMPAIGN_SEED ?? '20261201';

function runCommand(args: string[], timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/campaign/main.ts', ...args], { cwd: root, env: { ...process.env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    const timer = setTimeout(() => { child.kill('SIGTERM'); reject(new Error(`the campaign ran past ${timeoutMs} ms:\n${out}`)); }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => { clearTimeout(timer); resolve({ code, out }); });
  });
}

describe('the fault campaign', () => {
  test(`when 100 orders go down every route under the seeded fault schedule (seed ${SEED}), then every vendor is paid exactly once, nothing is stuck, and recon raises only the planted exceptions`, async () => {
    const { code, out } = await runCommand(['--orders', '100', '--seed', SEED], 900_000);
    if (code !== 0) throw new Error(`npm run campaign -- --orders 100 --seed ${SEED} exited ${code}:\n${out}`);
    expect(out).toMatch(/^total\s+100\s+\d+\s+0\s+0\s+0\s+\d+\s+0$/m);
    expect(out).toMatch(/unattributed transfers at the provider: 0/);
    // The hourly pair's orders were paid by their batches: at most one live transfer per batch (a batch
    // whose transfer was reversed and then paid offline, or whose members were all held for a refund, has none).
    const [, batches, liveTransfers] = /batches \(hourly pair[^)]*\): ([1-9]\d*) batch\(es\) of [1-9]\d* order\(s\), paid by (\d+) live transfer\(s\)/.exec(out) ?? [];
    expect(Number(liveTransfers)).toBeGreaterThanOrEqual(1);
    expect(Number(liveTransfers)).toBeLessThanOrEqual(Number(batches));
    // Every planted exception raised (adjustment, on-hold, one captured-not-settled per forged capture), nothing unexpected.
    expect(out).toMatch(/recon .*: \d+ settlement\(s\), \d+ matched, \d+ open exception\(s\), (\d+) of \1 planted raised \(adjustment, on-hold, captured-not-settled( ×\d+)?\), \d+ expected \([^)]*\), 0 unexpected/);
    // Finance settled the offline ledger during the run and after it.
    expect(out).toMatch(/offline rail: [4-9] settlement round\(s\), [1-9]\d* line\(s\) paid/);
    // Every kind of order, the issue-19 ones included, went down its route in this run.
    for (const kind of ORDER_KINDS) expect(out).toMatch(new RegExp(`^${kind}\\s+[1-9]`, 'm'));
    // The faults fired, not just planned: each kind at least once.
    for (const fault of ['worker SIGKILL', 'payout run terminated', 'Temporal restart', 'PostgreSQL immediate shutdown', 'kill switch paused', 'platform balance zero',
      'linked account suspended', 'webhook:given_up', 'webhook:duplicate', 'webhook:out_of_order', 'webhook:drop_first_try', 'transfers.create:']) {
      expect(out).toContain(fault);
    }
    expect(out).toMatch(/^PASS: seed \d+, 100 orders/m);
  }, 960_000);
});
