/** A short-lived process's whole stdout (the topology reads a minted key from `keys mint`): Node may
 * emit a child's 'exit' before the last of its stdout has been read, and CI at 78ddbf0 saw
 * `keys mint --role finance printed no key: ` with the key printed. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runProcess } from '../../src/devstack/topologyProcesses';

describe('runProcess', () => {
  test('when a process prints a lot and exits at once, then all of its stdout is returned, every time', async () => {
    const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'run-process-'));
    // 256 KiB: more than a pipe holds, so the last of it is still unread when the process exits.
    const script = "process.stdout.write('x'.repeat(262143) + '\\n');";
    const lengths = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      runProcess({ name: `printer-${i}`, command: process.execPath, args: ['-e', script], cwd: logDir, env: { PATH: process.env.PATH }, logDir, secretStdout: true })
        .then((out) => out.length)));
    expect(lengths).toEqual(Array.from({ length: 20 }, () => 262_144));
  });
});
