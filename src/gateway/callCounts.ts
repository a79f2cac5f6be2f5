/** Razorpay calls this process made, by endpoint and outcome, counted where the adapter makes them
 * (index.ts) and read by the metrics at scrape (payouts_provider_calls_total). Process-wide, not per
 * gateway: every adapter a process builds spends the same provider budget from the same host. An
 * outcome is what the HTTP call came to: `ok` (2xx), `rejected` (4xx with a provider code),
 * `rate_limited` (429), a lost answer's reason, or `contract_error` (a 4xx without a code). */
import type { FailedOutcome } from './classify';
import type { UnknownReason } from './types';

import type { ProviderEndpoint } from '../contracts/providerEndpoints';

export type ProviderCallOutcome = 'ok' | 'rejected' | 'contract_error' | UnknownReason;

const counts = new Map<string, { endpoint: ProviderEndpoint; outcome: ProviderCallOutcome; count: number }>();

export function countProviderCall(endpoint: ProviderEndpoint, outcome: ProviderCallOutcome): void {
  const key = `${endpoint} ${outcome}`;
  const seen = counts.get(key);
  if (seen) seen.count += 1;
  else counts.set(key, { endpoint, outcome, count: 1 });
}

export function callOutcomeOf(outcome: FailedOutcome): ProviderCallOutcome {
  return outcome.type === 'rejected' ? 'rejected' : outcome.reason;
}

/** The running totals since this process started (a snapshot). */
export function providerCallCounts(): Array<{ endpoint: ProviderEndpoint; outcome: ProviderCallOutcome; count: number }> {
  return [...counts.values()].map((c) => ({ ...c }));
}
