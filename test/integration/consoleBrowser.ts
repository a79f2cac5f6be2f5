/** Drives the console in Debian's headless Chromium for the browser tests: each scenario of
 * console.driver.mts runs in a node child (puppeteer-core is an ES module jest cannot load) and
 * answers what it saw as one JSON line. Screenshots go to .data/screenshots/. A scenario whose
 * pages reported a Content-Security-Policy violation fails, naming them. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import type { AuthHeader } from '../support/apiKeys';

const ROOT = path.resolve(__dirname, '../..');
export const SHOTS = path.join(ROOT, '.data', 'screenshots');
export const keyOf = (h: AuthHeader): string => h.authorization.slice('Bearer '.length);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- what the browser saw, checked field by field
export function inBrowser(scenario: string, input: Record<string, unknown>, onEvent?: (event: string) => Promise<void>): Promise<any> {
  return new Promise((resolve, reject) => {
    let reacting: Promise<void> = Promise.resolve();
    const child = execFile(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(__dirname, 'console.driver.mts'), scenario],
      { cwd: ROOT, timeout: 110_000, maxBuffer: 20 * 1024 * 1024 }, (err, stdout, stderr) => {
        const last = stdout.trim().split('\n').pop() ?? '';
        try {
          const parsed = JSON.parse(last) as { result?: { cspViolations?: string[] }; error?: string };
          if (parsed.error) reject(new Error(`${scenario} failed in the browser: ${parsed.error}`));
          else if (parsed.result?.cspViolations?.length) reject(new Error(`${scenario}: the CSP blocked part of a page:\n${parsed.result.cspViolations.join('\n')}`));
          else void reacting.then(() => resolve(parsed.result));
        } catch {
          reject(new Error(`${scenario}: no JSON from the driver (${err?.message}): ${stdout.slice(-2000)} ${stderr.slice(-2000)}`));
        }
      });
    // A scenario that waits for the test to act prints `{"event":"…"}` lines as it goes.
    let partial = '';
    if (onEvent) child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const event = /^\{"event":"([^"]+)"\}$/.exec(line.trim())?.[1];
        if (event) reacting = reacting.then(() => onEvent(event)).catch((err: unknown) => { child.kill(); reject(err); });
      }
    });
    child.stdin!.end(JSON.stringify({ shots: SHOTS, fixtures: path.join(ROOT, 'test/fixtures/recon'), ...input }));
  });
}
