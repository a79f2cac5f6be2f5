/** lowerCpuPriority in a process of its own (niceness only goes down for an unprivileged process, so
 * the test runner's own is left alone). */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** Runs `body` in a fresh tsx process and returns what it prints as JSON. */
function inChild(body: string): unknown {
  const out = execFileSync(path.join(ROOT, 'node_modules/.bin/tsx'), ['-e', body], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

// Field 19 of /proc/<pid>/task/<tid>/stat is the thread's nice value (after the "(comm)" field).
const niceOfEveryThread = `
  const fs = require('node:fs');
  const nices = () => fs.readdirSync('/proc/self/task').map((t) => Number(fs.readFileSync('/proc/self/task/' + t + '/stat', 'utf8').split(') ')[1].split(' ')[16]));`;

describe('lowerCpuPriority', () => {
  const linux = process.platform === 'linux' ? test : test.skip;

  linux('when asked for 7, then every thread of the process runs at nice 7, and a thread started afterwards inherits it', () => {
    const result = inChild(`${niceOfEveryThread}
      const { lowerCpuPriority } = require('./src/startup/cpuPriority');
      const before = nices();
      const moved = lowerCpuPriority(7);
      const { Worker } = require('node:worker_threads');
      const w = new Worker('setTimeout(() => {}, 200)', { eval: true });
      w.on('online', () => { console.log(JSON.stringify({ before, moved, after: nices() })); w.terminate(); });`) as { before: number[]; moved: number; after: number[] };
    expect(result.moved).toBe(result.before.length);
    expect(result.after.length).toBeGreaterThan(result.before.length);
    expect(new Set(result.after)).toEqual(new Set([7]));
  });

  linux('when asked for 0, then nothing changes', () => {
    const result = inChild(`${niceOfEveryThread}
      const { lowerCpuPriority } = require('./src/startup/cpuPriority');
      const before = nices();
      console.log(JSON.stringify({ before, moved: lowerCpuPriority(0), after: nices() }));`) as { before: number[]; moved: number; after: number[] };
    expect(result.moved).toBe(0);
    expect(new Set(result.after)).toEqual(new Set(result.before));
  });
});
