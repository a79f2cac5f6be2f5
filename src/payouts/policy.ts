/** The payout durations and limits, taken from the one config object. */
import type { Config } from '../config/config';
import type { PayoutPolicy } from '../contracts/payout';

export function payoutPolicyFrom(config: Config): PayoutPolicy {
  return {
    attemptCap: config.PAYOUT_ATTEMPT_CAP,
    transferTimeoutMs: config.PAYOUT_TRANSFER_TIMEOUT_MS,
    settlementPollMs: config.PAYOUT_SETTLEMENT_POLL_MS,
    resolverRetryMs: config.PAYOUT_RESOLVER_RETRY_MS,
    humanRecheckMs: config.PAYOUT_HUMAN_RECHECK_MS,
    retryBackoffMs: config.PAYOUT_RETRY_BACKOFF_MS,
    retryBackoffMaxMs: config.PAYOUT_RETRY_BACKOFF_MAX_MS,
    resolverRetryMaxMs: config.PAYOUT_RESOLVER_RETRY_MAX_MS,
    balanceProbeMs: config.PAYOUT_BALANCE_PROBE_MS,
  };
}
