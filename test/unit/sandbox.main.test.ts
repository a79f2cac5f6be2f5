/** `npm run sandbox` (src/sandbox/main.ts) starts the sandbox alone and prints its base URL; it never
 * runs in production and never holds a real secret (issue 21, item 8). */
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const KEY_ID = 'rzp_test_sandboxmain';
const KEY_SECRET = 'sandbox_main_secret';

const started: Array<ReturnType<typeof spawn>> = [];
// A sandbox that did start (a refusal that failed) must not outlive the test.
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
});

function startSandboxMain(env: Record<string, string>) {
  const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['src/sandbox/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, SANDBOX_PORT: '0', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { out += chunk.toString(); });
  const exited = new Promise<number | string | null>((resolve) => {
    const timer = setTimeout(() => resolve('still running after 20 s'), 20_000);
    child.once('exit', (code) => { clearTimeout(timer); resolve(code); });
  });
  return { child, exited, output: () => out };
}

test('when the sandbox is started alone, then it prints a base URL that answers the Razorpay API with Basic auth', async () => {
  const { child, output } = startSandboxMain({ RAZORPAY_KEY_ID: KEY_ID, RAZORPAY_KEY_SECRET: KEY_SECRET });
  try {
    const baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no base URL printed: ${output()}`)), 20_000);
      child.stdout.on('data', () => {
        const match = /listening at (http:\/\/\S+)/.exec(output());
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${output()}`)));
    });
    const auth = `Basic ${Buffer.from(`${KEY_ID}:${KEY_SECRET}`).toString('base64')}`;
    const res = await fetch(`${baseUrl}/v1/transfers?count=1`, { headers: { authorization: auth } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ entity: 'collection', count: 0, items: [] });
    expect((await fetch(`${baseUrl}/v1/transfers`)).status).toBe(401);
  } finally {
    child.kill('SIGTERM');
  }
}, 30_000);

test('when NODE_ENV=production, then the sandbox refuses to start and says why', async () => {
  const run = startSandboxMain({ NODE_ENV: 'production', LOG_LEVEL: 'info' });
  expect(await run.exited).toBe(1);
  expect(run.output()).toContain('NODE_ENV=production: the Razorpay sandbox is a test double');
  expect(run.output()).not.toMatch(/listening at/);
}, 30_000);

test('when given a key or webhook secret that is not a sandbox value, then the sandbox refuses to start, names each, echoes none', async () => {
  const real = { RAZORPAY_KEY_ID: 'rzp_live_Q8m2xKp0aZ19Lt', RAZORPAY_KEY_SECRET: 'Xq3v9LmP2sT8wK1nB7cR4yHd', RAZORPAY_WEBHOOK_SECRET: 'whk-7f3a9c2e51b84d06e4a1f7c93b2d58a6' };
  const run = startSandboxMain({ ...real, LOG_LEVEL: 'info' });
  expect(await run.exited).toBe(1);
  for (const key of Object.keys(real)) expect(run.output()).toContain(`${key}: not a sandbox value`);
  for (const value of Object.values(real)) expect(run.output()).not.toContain(value);
}, 30_000);
