/** A small shared bench harness: load average, medians and percentiles, baseline/subject
 * interleaving, ratio lines, and an open-loop HTTP load generator (node:http, one keep-alive
 * Agent, loopback only, bounded in count, time and requests in flight). */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { z } from 'zod';

export const log = (line: string): void => { process.stdout.write(`${line}\n`); };

/** The provider budget of the load benches: the app's (RAZORPAY_*_RPS) and the sandbox limiter's,
 * above it at Razorpay's figures (BENCH_SANDBOX_*), as zod fields of their settings. */
export const providerBudgetKnobs = {
  RAZORPAY_WRITE_RPS: z.coerce.number().min(0.1).default(8),
  RAZORPAY_READ_RPS: z.coerce.number().min(0.1).default(10),
  BENCH_SANDBOX_WRITE_RPS: z.coerce.number().min(0.1).default(10),
  BENCH_SANDBOX_READ_RPS: z.coerce.number().min(0.1).default(25),
  BENCH_SANDBOX_BURST: z.coerce.number().int().min(1).default(10),
};
/** The 1, 5 and 15 minute load averages, as `uptime` prints them. */
export const loadAverage = (): string => os.loadavg().map((x) => x.toFixed(2)).join(' ');
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** Nearest-rank percentile of a sorted array (q in 0..1). */
export function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Runs baseline and subject alternately `reps` times (baseline first each time). */
export async function interleave<B, S>(reps: number, baseline: (rep: number) => Promise<B>, subject: (rep: number) => Promise<S>): Promise<{ baseline: B[]; subject: S[] }> {
  const out = { baseline: [] as B[], subject: [] as S[] };
  for (let rep = 0; rep < reps; rep++) {
    out.baseline.push(await baseline(rep));
    out.subject.push(await subject(rep));
  }
  return out;
}

export const ratio = (subject: number, baseline: number): string => (baseline > 0 ? `${(subject / baseline).toFixed(2)}×` : 'n/a');

export interface OpenLoopRequest { path: string; body: string; headers: Record<string, string> }

export interface OpenLoopResult {
  rate: number;
  /** Requests the schedule called for. */
  scheduled: number;
  ok: number;
  /** Non-2xx answers, socket errors, timeouts, and requests not sent because `maxInFlight` were open. */
  errors: number;
  /** 2xx answers per second, over the schedule's length or until the last answer, whichever is longer. */
  achieved: number;
  /** Latency from each request's scheduled send time (so a slow server cannot hide its queue). */
  p50: number;
  p99: number;
  max: number;
  load: string;
  /** This process's own event-loop delay while the schedule ran (p99, ms): a late send counts in
   * the latency above, so a busy load generator (or a sandbox sharing its process) shows here. */
  loopDelayP99: number;
}

export interface OpenLoopOptions {
  host: '127.0.0.1';
  port: number;
  rate: number;
  durationMs: number;
  /** request(i) for i = 0 … rate × duration − 1. */
  request: (i: number) => OpenLoopRequest;
  agent: http.Agent;
  timeoutMs?: number;
  maxInFlight?: number;
}

export function keepAliveAgent(maxSockets = 256): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
}

/** Sends request i at start + i / rate regardless of answers (open loop), at most
 * rate × duration requests, and waits for the last answer (or its timeout). */
export function openLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  if (o.host !== '127.0.0.1') throw new Error('bench load goes to loopback only');
  const total = Math.round((o.rate * o.durationMs) / 1000);
  const timeoutMs = o.timeoutMs ?? 10_000;
  const maxInFlight = o.maxInFlight ?? 1024;
  const latencies: number[] = [];
  let ok = 0;
  let errors = 0;
  let sent = 0;
  let done = 0;
  let inFlight = 0;
  let lastAnswer = 0;
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  return new Promise((resolve) => {
    const start = performance.now();
    const finish = () => {
      loopDelay.disable();
      const sorted = latencies.sort((a, b) => a - b);
      const spanS = Math.max(o.durationMs, lastAnswer - start) / 1000;
      resolve({ rate: o.rate, scheduled: total, ok, errors, achieved: ok / spanS, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] ?? NaN, load: loadAverage(), loopDelayP99: loopDelay.percentile(99) / 1e6 });
    };
    const settle = (due: number, good: boolean) => {
      const now = performance.now();
      lastAnswer = now;
      inFlight -= 1;
      done += 1;
      if (good) { ok += 1; latencies.push(now - due); } else errors += 1;
      if (done === total) finish();
    };
    const fire = (i: number, due: number) => {
      if (inFlight >= maxInFlight) { errors += 1; done += 1; if (done === total) finish(); return; }
      inFlight += 1;
      const r = o.request(i);
      let settled = false;
      const once = (good: boolean) => { if (!settled) { settled = true; settle(due, good); } };
      const req = http.request({
        host: o.host, port: o.port, method: 'POST', path: r.path, agent: o.agent, timeout: timeoutMs,
        headers: { ...r.headers, 'content-length': Buffer.byteLength(r.body) },
      }, (res) => {
        res.resume();
        res.on('end', () => once((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300));
        res.on('error', () => once(false));
      });
      req.on('timeout', () => { req.destroy(new Error('timeout')); });
      req.on('error', () => once(false));
      req.end(r.body);
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total) {
        const due = start + (sent * 1000) / o.rate;
        if (due > now) break;
        fire(sent, due);
        sent += 1;
      }
      if (sent < total) setTimeout(tick, Math.max(0, Math.min(1, start + (sent * 1000) / o.rate - performance.now())));
    };
    if (total === 0) finish(); else tick();
  });
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');

/** One figure beside its baseline: medians over the interleaved repetitions, errors summed. */
export function ratioLine(label: string, subject: OpenLoopResult[], baseline: OpenLoopResult[]): string {
  const m = (rs: OpenLoopResult[], k: 'achieved' | 'p50' | 'p99') => median(rs.map((r) => r[k]));
  const errs = (rs: OpenLoopResult[]) => rs.reduce((n, r) => n + r.errors, 0);
  const sched = (rs: OpenLoopResult[]) => rs.reduce((n, r) => n + r.scheduled, 0);
  return `${label}: achieved ${f1(m(subject, 'achieved'))}/s, p50 ${f1(m(subject, 'p50'))} ms, p99 ${f1(m(subject, 'p99'))} ms, errors ${errs(subject)}/${sched(subject)}`
    + ` | raw INSERT … ON CONFLICT: ${f1(m(baseline, 'achieved'))}/s, p50 ${f1(m(baseline, 'p50'))} ms, p99 ${f1(m(baseline, 'p99'))} ms, errors ${errs(baseline)}/${sched(baseline)}`
    + ` | ratio p50 ${ratio(m(subject, 'p50'), m(baseline, 'p50'))}, p99 ${ratio(m(subject, 'p99'), m(baseline, 'p99'))}, achieved ${ratio(m(subject, 'achieved'), m(baseline, 'achieved'))}`
    + ` | load ${subject.map((r) => r.load.split(' ')[0]).join('/')} (1-min, per rep; now ${loadAverage()})`;
}

/** "p99 crosses 50 ms between 200 and 400 req/s", from medians per rate (rates ascending). */
export function crossing(rates: number[], p99ByRate: number[], limitMs = 50): string {
  const i = p99ByRate.findIndex((p) => !(p < limitMs));
  if (i < 0) return `p99 stays under ${limitMs} ms up to ${rates[rates.length - 1]} req/s (the highest rate run)`;
  if (i === 0) return `p99 is over ${limitMs} ms already at ${rates[0]} req/s`;
  return `p99 crosses ${limitMs} ms between ${rates[i - 1]} and ${rates[i]} req/s`;
}

/** A process's resident memory (MB) from /proc; 0 once it is gone. */
export function rssMb(pid: number): number {
  try {
    const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
    return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux; USER_HZ = 100);
 * 0 once it is gone. */
export function processCpuSeconds(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Pids of the processes whose command line (arguments joined by spaces) passes `matches`. */
export function pidsWhere(matches: (cmdline: string) => boolean): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (matches(fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' '))) pids.push(Number(entry));
    } catch { /* gone */ }
  }
  return pids;
}

/** Pids of `pid`'s children (e.g. a PostgreSQL postmaster's backends and helpers). */
export function childPids(pid: number): number[] {
  return pidsWhere(() => true).filter((child) => {
    try {
      return Number(fs.readFileSync(`/proc/${child}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === pid;
    } catch {
      return false;
    }
  });
}

/** CPU used by named groups of processes over a stretch of work: `start()`, the work, then
 * `stop()` gives CPU seconds per group. Groups are looked up again at each call (a pool may open
 * connections meanwhile; a process that exits takes its CPU with it). */
export function cpuMeter(groups: Record<string, () => number[]>): { start(): void; stop(): Record<string, number> } {
  let before = new Map<number, number>();
  const sample = () => new Map(Object.values(groups).flatMap((pids) => pids()).map((pid) => [pid, processCpuSeconds(pid)] as const));
  return {
    start() { before = sample(); },
    stop() {
      const now = sample();
      return Object.fromEntries(Object.entries(groups).map(([name, pids]) => [name, pids().reduce((s, pid) => s + (now.get(pid) ?? 0) - (before.get(pid) ?? 0), 0)]));
    },
  };
}

/** Runs a bench's main: a failure prints its stack and exits 1. */
export function runBench(main: () => Promise<void>): void {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
