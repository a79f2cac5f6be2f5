/** `npm run sandbox` (src/sandbox/main.ts) starts the sandbox alone and prints its base URL. */
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

test('when the sandbox is started alone, then it prints a base URL that answers the Razorpay API with Basic auth', async () => {
  const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['src/sandbox/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, SANDBOX_PORT: '0', LOG_LEVEL: 'silent', RAZORPAY_KEY_ID: 'rzp_test_main', RAZORPAY_KEY_SECRET: 'main_secret' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const baseUrl = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no base URL printed: ${out}`)), 20_000);
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /listening at (http:\/\/\S+)/.exec(out);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
    });
    const auth = `Basic ${Buffer.from('rzp_test_main:main_secret').toString('base64')}`;
    const res = await fetch(`${baseUrl}/v1/transfers?count=1`, { headers: { authorization: auth } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ entity: 'collection', count: 0, items: [] });
    expect((await fetch(`${baseUrl}/v1/transfers`)).status).toBe(401);
  } finally {
    child.kill('SIGTERM');
  }
}, 30_000);
