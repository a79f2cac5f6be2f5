/** bench:day's plan (pure): the pairs and their payout schedules, each order's pair and payment
 * method from a seeded draw, and the lunch-peak curve the orders arrive on, window by window. */
import { commissionPaise, vendorNetPaise } from '../src/domain/money';
import { seededRandom } from '../src/sandbox/faults';

export type Schedule = 'daily' | 'hourly' | 'per_order';
export type Method = 'online' | 'wallet' | 'cash';

/** Schedules by share of the pairs (issue 37): 70% daily, 20% hourly, 10% per order. */
const SCHEDULES: ReadonlyArray<[Schedule, number]> = [['daily', 0.7], ['hourly', 0.2], ['per_order', 0.1]];
/** Payment methods by share of the orders: the campaign's direct routes by weight (online kinds 43,
 * wallet 5 plus a third of the batched, cash 4), its Route splits left out (their transfer is made by
 * Razorpay at capture: no payout, no call of ours). */
const METHODS: ReadonlyArray<[Method, number]> = [['online', 0.82], ['wallet', 0.11], ['cash', 0.07]];

/** ₹100, 90% subsidised: the customer share ₹10 online, from the wallet or in cash; 19% commission. */
export const ORDER = {
  totalPaise: 10_000, subsidyPaise: 9_000, customerSharePaise: 1_000, commissionBps: 1_900,
  commissionPaise: commissionPaise(10_000, 1_900), netPaise: vendorNetPaise(10_000, 1_900),
} as const;

export interface Pair { index: number; employerId: string; employeeId: string; vendorId: string; schedule: Schedule }
export interface PlannedOrder { index: number; pair: Pair; method: Method }

/** `pairs` pairs, ten vendors to an employer (one employee each), the schedules in their shares. */
export function planPairs(pairs: number): Pair[] {
  const out: Pair[] = [];
  let index = 0;
  for (const [schedule, share] of SCHEDULES) {
    const n = schedule === 'per_order' ? pairs - out.length : Math.round(pairs * share);
    for (let i = 0; i < n; i++, index++) {
      const employer = Math.floor(index / 10);
      out.push({ index, employerId: `emp_day_${employer}`, employeeId: `e_day_${employer}`, vendorId: `ven_day_${index}`, schedule });
    }
  }
  return out;
}

/** The day's orders, each on a pair and a method drawn from `seed`. */
export function planOrders(n: number, pairs: readonly Pair[], seed: number): PlannedOrder[] {
  const random = seededRandom(seed);
  const draw = <T>(shares: ReadonlyArray<[T, number]>): T => {
    let r = random();
    for (const [value, share] of shares) if ((r -= share) < 0) return value;
    return shares[shares.length - 1]![0];
  };
  return Array.from({ length: n }, (_, index) => ({ index, pair: pairs[Math.floor(random() * pairs.length)]!, method: draw(METHODS) }));
}

/** Orders per window on a lunch peak: a base of a quarter of the peak all day, and a Gaussian hump
 * in the middle, scaled so the busiest window arrives at `peakPerSecond`. The sum is exactly `n`. */
export function lunchCurve(n: number, peakPerSecond: number, windowSeconds: number): number[] {
  const shape = (k: number, windows: number) => 0.25 + 0.75 * Math.exp(-(((k + 0.5) / windows - 0.5) ** 2) / (2 * 0.12 ** 2));
  let windows = 1;
  // The fewest windows whose busiest one stays at or under the peak rate.
  for (;;) {
    const weights = Array.from({ length: windows }, (_, k) => shape(k, windows));
    const total = weights.reduce((s, w) => s + w, 0);
    if ((n * Math.max(...weights)) / total <= peakPerSecond * windowSeconds) {
      const counts = weights.map((w) => Math.floor((n * w) / total));
      // What the rounding left goes to the windows from the middle on.
      const left = n - counts.reduce((s, c) => s + c, 0);
      for (let k = 0; k < left; k++) counts[(Math.floor(windows / 2) + k) % windows]! += 1;
      return counts;
    }
    windows += 1;
  }
}
