/** Starts one Temporal dev server and one PostgreSQL for all integration test files, in a child
 * process (test/support/globalTeardown.ts stops it), and migrates a fresh database for this run. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createPool } from '../../src/db/pool';
import { migrate } from '../../src/db/migrate';
import { ensureDatabase } from '../../src/devstack/postgres';
import { TEST_RUNS_DIR, type TestServices } from './serviceState';

const root = path.resolve(__dirname, '../..');

export default async function globalSetup(): Promise<void> {
  removeRunsOfDeadProcesses();
  const stateDir = path.join(TEST_RUNS_DIR, String(process.pid));
  fs.rmSync(stateDir, { recursive: true, force: true });
  fs.mkdirSync(stateDir, { recursive: true });
  const child = spawn(path.join(root, 'node_modules/.bin/tsx'), [path.join(root, 'src/devstack/servicesMain.ts'), stateDir], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: process.env,
  });
  (globalThis as { __servicesChild?: ChildProcess }).__servicesChild = child;
  const logFile = fs.createWriteStream(path.join(stateDir, 'services.log'));
  child.stderr!.pipe(logFile);
  const ready = await new Promise<{ adminDatabaseUrl: string; temporalAddress: string }>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`test services did not start in 10 min; see ${stateDir}/services.log`)), 600_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((l) => l.startsWith('READY '));
      if (line) { clearTimeout(timer); resolve(JSON.parse(line.slice(6))); }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`test services exited with ${code}; see ${stateDir}/services.log`)); });
  });
  const templateDatabase = `payouts_test_${Date.now()}`;
  const databaseUrl = await ensureDatabase(ready.adminDatabaseUrl, templateDatabase);
  const pool = createPool(databaseUrl, 2);
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
  const services: TestServices = { ...ready, templateDatabase, databaseUrl };
  const stateFile = path.join(stateDir, 'services.json');
  fs.writeFileSync(stateFile, JSON.stringify(services));
  process.env.PAYOUTS_TEST_STATE_FILE = stateFile;
  process.stdout.write(`\n[integration] Temporal dev server at ${ready.temporalAddress}; PostgreSQL database ${templateDatabase}\n`);
}

function removeRunsOfDeadProcesses(): void {
  if (!fs.existsSync(TEST_RUNS_DIR)) return;
  for (const name of fs.readdirSync(TEST_RUNS_DIR)) {
    const pid = Number(name);
    let alive = false;
    try { process.kill(pid, 0); alive = true; } catch { alive = false; }
    if (!alive) fs.rmSync(path.join(TEST_RUNS_DIR, name), { recursive: true, force: true });
  }
}
