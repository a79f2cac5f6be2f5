/** Fault injection for API calls, per endpoint, by call number or by seeded probability. Each rule
 * counts the calls of its endpoint from the moment it was added; the first rule that fires wins. */
import type { FaultEndpoint, FaultKind, FaultRule } from './control';

/** mulberry32: a small deterministic PRNG so a seeded run replays the same faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface ActiveRule {
  rule: FaultRule;
  seen: number;
  random: () => number;
}

export class FaultInjector {
  private rules: ActiveRule[] = [];
  private counts: Record<string, number> = {};
  /** Calls by `endpoint path` with the query's parameter names, not their values: whose entity each
   * read asked about, and which kind of listing (`?count&from&skip` or `?count&from&skip&to`: bench:day). */
  private paths = new Map<string, number>();
  /** Faults applied, by `endpoint:kind` (what fired, not what was planned). */
  private fired: Record<string, number> = {};

  add(rule: FaultRule): void {
    if (!rule.calls && rule.probability === undefined) throw new Error('a fault rule needs `calls` or `probability`');
    this.rules.push({ rule, seen: 0, random: seededRandom(rule.seed ?? 1) });
  }

  clear(): void {
    this.rules = [];
  }

  reset(): void {
    this.rules = [];
    this.counts = {};
    this.paths.clear();
    this.fired = {};
  }

  callCounts(): Record<string, number> {
    return { ...this.counts };
  }

  pathCounts(): Record<string, number> {
    return Object.fromEntries(this.paths);
  }

  firedCounts(): Record<string, number> {
    return { ...this.fired };
  }

  /** Counts one call of `endpoint` that the rate limiter refused (fired as `label`). It is not shown
   * to the rules: they model what happens behind the limiter. */
  onRefused(endpoint: Exclude<FaultEndpoint, '*'>, label: string): void {
    this.counts[endpoint] = (this.counts[endpoint] ?? 0) + 1;
    this.fired[label] = (this.fired[label] ?? 0) + 1;
  }

  /** Counts one call of `endpoint` (at `path`) and returns the fault to apply to it, if any. */
  onCall(endpoint: Exclude<FaultEndpoint, '*'>, path = ''): FaultKind | null {
    this.counts[endpoint] = (this.counts[endpoint] ?? 0) + 1;
    const [pathname, query] = path.split('?');
    const names = query ? [...new Set([...new URLSearchParams(query).keys()])].sort().join('&') : '';
    const key = `${endpoint} ${pathname}${names ? `?${names}` : ''}`;
    this.paths.set(key, (this.paths.get(key) ?? 0) + 1);
    let chosen: FaultKind | null = null;
    for (const active of this.rules) {
      if (active.rule.endpoint !== '*' && active.rule.endpoint !== endpoint) continue;
      if (active.rule.pathIncludes !== undefined && !path.includes(active.rule.pathIncludes)) continue;
      active.seen += 1;
      const fires = active.rule.calls ? active.rule.calls.includes(active.seen) : active.random() < (active.rule.probability ?? 0);
      if (fires && !chosen) chosen = active.rule.fault;
    }
    if (chosen) this.fired[`${endpoint}:${chosen.kind}`] = (this.fired[`${endpoint}:${chosen.kind}`] ?? 0) + 1;
    return chosen;
  }
}
