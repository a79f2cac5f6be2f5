/** Issue 37: `npm run bench:day` runs in CI at a size that fits its budget (300 orders on 10 pairs),
 * as its command: the same world, processes and checks as the full day. Its figures are not judged
 * here (a test is no place for timings); what is judged is what must hold at any size: every order
 * paid exactly once from the sandbox's transfers, no call refused by the limiter, and a figure for
 * each class. */
import { spawn } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

function runDay(orders: number, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/day.ts', '--orders', String(orders)], {
      cwd: root, env: { ...process.env, LOG_LEVEL: 'error', DAY_SWEEP_EVERY_S: '10', DAY_RECHECK_MS: '5000' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    const timer = setTimeout(() => { child.kill('SIGTERM'); reject(new Error(`bench:day ran past ${timeoutMs} ms:\n${out}`)); }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => { clearTimeout(timer); resolve({ code, out }); });
  });
}

describe('bench:day at the size CI runs it', () => {
  test('when 300 orders go through a day on 10 pairs (daily, hourly and per order; online, wallet and cash), then every order is paid exactly once by the sandbox\'s transfers, nothing is refused, and each class has its calls per order', async () => {
    const { code, out } = await runDay(300, 480_000);
    if (code !== 0) throw new Error(`npm run bench:day -- --orders 300 exited ${code}:\n${out}`);
    expect(out).toMatch(/every order paid exactly once, judged from the sandbox's \d+ transfers against the plan/);
    expect(out).toMatch(/refused by the sandbox's limiter \(429\): writes 0, reads 0/);
    for (const cls of ['daily', 'hourly', 'per_order']) expect(out).toMatch(new RegExp(`${cls} +\\d+ orders: \\d+\\.\\d{3} calls/order`));
    expect(out).toMatch(/from the last cutoff to the last batch settled: \d+ s/);
  }, 500_000);
});
