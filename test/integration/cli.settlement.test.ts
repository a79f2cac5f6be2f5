/** `payouts settlement …` as finance runs it, in its own process against a running API and worker:
 * run a period for three vendors (one owes money back and is carried forward), show the batch, write
 * the bank file, record a line paid, import the bank's response for the other, and the bad-input
 * exits (2) that change nothing. */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { istDateOf } from '../../src/domain/calendar';
import { runPayoutsCli } from '../support/payoutsCli';
import { cashOrder, fundedEmployer, offlineVendor, subsidisedOrder, type OfflineVendor } from './offlineOrders';
import { startPayoutStack, type PayoutStack } from './payoutStack';

describe('payouts settlement (CLI)', () => {
  let stack: PayoutStack;
  let dir: string;
  const today = istDateOf(new Date());
  let vendors: OfflineVendor[];

  const cli = (...args: string[]) => runPayoutsCli(['--actor', 'priya', ...args], {
    PAYOUTS_API_URL: stack.apiUrl,
    PAYOUTS_API_KEY: stack.keys.finance.authorization.replace(/^Bearer /, ''),
  });

  beforeAll(async () => {
    stack = await startPayoutStack({ name: 'cli-settlement' });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cli-settlement-'));
    const employerId = await fundedEmployer(stack);
    vendors = [
      await offlineVendor(stack, employerId, { name: 'Idli Express' }),
      await offlineVendor(stack, employerId, { name: 'Juice Junction' }),
      await offlineVendor(stack, employerId, { name: 'Kulfi Cart' }),
    ];
    await subsidisedOrder(stack, employerId, vendors[0]!.vendorId, 15_000); // ₹135
    await cashOrder(stack, employerId, vendors[1]!.vendorId, 20_000, 15_000); // ₹150 − ₹20 = ₹130
    await cashOrder(stack, employerId, vendors[2]!.vendorId, 30_000, 0); // owes ₹30 back
  });

  afterAll(async () => {
    await stack?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('settles a period from the command line, to the batch closing', async () => {
    const vendorFlags = vendors.flatMap((v) => ['--vendor', v.vendorId]);
    const run = await cli('settlement', 'run', '--from', today, '--to', today, ...vendorFlags);
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toMatch(/batch stb_\w{14} .*open; 2 line\(s\), ₹265\.00/);
    expect(run.stdout).toContain(`carried forward: ${vendors[2]!.vendorId}, 1 line(s) netting -₹30.00 (owes at least as much as it is owed)`);
    expect(run.stdout).toContain('XXXXXX');
    expect(run.stdout).not.toContain(vendors[0]!.accountNumber);
    const batchId = /batch (stb_\w{14})/.exec(run.stdout)![1]!;

    const json = JSON.parse((await cli('--json', 'settlement', 'show', batchId)).stdout) as { lines: Array<{ vendorId: string; reference: string; amountPaise: number }> };
    const [first, second] = [json.lines.find((l) => l.vendorId === vendors[0]!.vendorId)!, json.lines.find((l) => l.vendorId === vendors[1]!.vendorId)!];

    const file = path.join(dir, 'bank.csv');
    const written = await cli('settlement', 'bank-file', batchId, '-o', file);
    expect([written.code, written.stdout.trim()]).toEqual([0, `${file}: 2 payments for the bank (upload it to the bank's bulk-payment portal)`]);
    const bankFile = await fs.readFile(file, 'utf8');
    expect(bankFile).toContain(`${first.reference},Idli Express,${vendors[0]!.accountNumber},HDFC0001234,135.00,13500`);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    // Never where git would track it: refused in a work tree (nothing written), fine once ignored.
    const repo = path.join(dir, 'repo');
    await fs.mkdir(repo);
    await promisify(execFile)('git', ['init', '--quiet', repo]);
    const tracked = await cli('settlement', 'bank-file', batchId, '--out', path.join(repo, 'bank.csv'));
    expect([tracked.code, tracked.stderr]).toEqual([2, expect.stringContaining(`refusing to write vendors' account numbers to ${path.join(repo, 'bank.csv')}: it is inside a git work tree and git does not ignore it`)]);
    await expect(fs.stat(path.join(repo, 'bank.csv'))).rejects.toThrow(/ENOENT/);
    await fs.writeFile(path.join(repo, '.gitignore'), '*-bank-file.csv\n');
    const ignored = await cli('settlement', 'bank-file', batchId, '--out', path.join(repo, 'december-bank-file.csv'));
    expect([ignored.code, ignored.stdout.trim()]).toEqual([0, `${path.join(repo, 'december-bank-file.csv')}: 2 payments for the bank (upload it to the bank's bulk-payment portal)`]);

    // Bad input: exit 2, nothing recorded.
    const badAmount = await cli('settlement', 'paid', first.reference, '--utr', 'ICICN2026120100007', '--paid-on', today, '--amount', '1,35.00');
    expect(badAmount.code).toBe(2);
    const wrongAmount = await cli('settlement', 'paid', first.reference, '--utr', 'ICICN2026120100007', '--paid-on', today, '--amount', '134.00');
    expect([wrongAmount.code, wrongAmount.stderr]).toEqual([1, expect.stringContaining(`line ${first.reference} is for ₹135.00, not ₹134.00`)]);
    const badFile = path.join(dir, 'bad-response.csv');
    await fs.writeFile(badFile, `reference,status,utr,value_date,amount\n${second.reference},paid,,${today},130.00\n`);
    const refused = await cli('settlement', 'import', badFile);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('bad-response.csv:2: utr must be 6–40 letters or digits');

    const paid = await cli('settlement', 'paid', first.reference, '--utr', 'ICICN2026120100007', '--paid-on', today, '--amount', '135.00');
    expect([paid.code, paid.stdout.trim()]).toEqual([0, `${first.reference}: paid; batch ${batchId} open`]);
    const response = path.join(dir, 'bank-response.csv');
    await fs.writeFile(response, `reference,status,utr,value_date,amount\n${second.reference},paid,ICICN2026120100008,${today},130.00\n`);
    const imported = await cli('settlement', 'import', response);
    expect([imported.code, imported.stdout]).toEqual([0, `bank-response.csv: 1 row applied\n${second.reference}: paid; batch ${batchId} closed\n`]);

    const list = await cli('settlement', 'show', '--status', 'closed');
    expect(list.stdout).toContain(batchId);
    const audit = (await stack.db.query<{ actor: string }>('SELECT DISTINCT actor FROM settlement_actions WHERE batch_id = $1', [batchId])).rows;
    expect(audit.map((a) => a.actor).every((a) => a.includes('priya'))).toBe(true);
  });
});
