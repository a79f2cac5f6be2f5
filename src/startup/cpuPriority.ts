/** A process's CPU priority on a host it shares with latency-sensitive work. The worker's payouts are
 * background work paced by the provider budget; the API answers Razorpay's webhooks within its
 * timeout. On one host at equal priority the payouts' CPU (Temporal's and the worker's, ~1 core at
 * 8 payouts/s) delays webhook replies (bench:peak: p99 82–162 ms); with the worker and Temporal
 * niced the kernel runs the API first and the payouts take what it leaves. */
import fs from 'node:fs';
import os from 'node:os';

/** Lowers every thread of a process (this one by default) to `nice`: Linux's setpriority is per
 * thread, and threads started later inherit their creator's. 0 leaves it as it is. Returns the
 * threads moved. */
export function lowerCpuPriority(nice: number, pid: number | 'self' = 'self'): number {
  if (nice === 0) return 0;
  let tids: number[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    os.setPriority(pid === 'self' ? 0 : pid, nice); // not Linux: the process as a whole
    return 1;
  }
  let moved = 0;
  for (const tid of tids) {
    try {
      os.setPriority(tid, nice);
      moved += 1;
    } catch {
      // the thread has exited since the listing
    }
  }
  return moved;
}
