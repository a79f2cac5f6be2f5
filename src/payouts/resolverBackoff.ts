/** How long the payout resolver waits before asking the provider's ledger again (issue 22). Pure:
 * the payout workflow calls it with its deterministic Math.random. */
import type { PayoutPolicy } from '../contracts/payout';

/** The resolver's next wait: the configured retry, and after refused listings (a 429 is back-pressure,
 * not a reason to ask harder) doubling per refusal up to the cap, with equal jitter so that runs
 * refused together do not come back together. `random` is the workflow's deterministic Math.random. */
export function resolverDelayMs(policy: Pick<PayoutPolicy, 'resolverRetryMs'> & { resolverRetryMaxMs?: number }, refusedInARow: number, random: number): number {
  if (refusedInARow === 0) return policy.resolverRetryMs;
  const cap = Math.max(policy.resolverRetryMs, policy.resolverRetryMaxMs ?? policy.resolverRetryMs);
  const ceiling = Math.min(cap, policy.resolverRetryMs * 2 ** Math.min(refusedInARow, 20));
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}
