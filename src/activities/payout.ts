/** Activities of payoutWorkflow. Database activities are idempotent and may be retried; the one
 * money-moving call, sendDirectTransfer, is never retried by Temporal (maximumAttempts 1). */
import { Context } from '@temporalio/activity';
import type { PayoutPolicy, PayoutView } from '../contracts/payout';
import type { Config } from '../config/config';
import { payoutPolicyFrom } from '../payouts/policy';
import { inTransaction, type Db } from '../db/pool';
import type { Gateway, MoneyOutcome, RzpTransfer } from '../gateway/types';
import { logger } from '../logger';
import { applyTransferEvidence, recordResolution, recordTransferOutcome, type Recorded, type RecordingPolicy } from '../payouts/outcomes';
import { claimPayout, findPayoutById, findPayoutByOrder, type ClaimResult } from '../payouts/repository';
import { decideResolution, RESOLVER_WINDOW_AFTER_MS, RESOLVER_WINDOW_BEFORE_MS, type Resolution } from '../payouts/resolution';

export interface TransferRequest {
  payoutId: string;
  orderId: string;
  linkedAccountId: string;
  amountPaise: number;
  idempotencyKey: string;
  attemptNo: number;
}

function currentRunId(): string {
  return Context.current().info.workflowExecution?.runId ?? 'outside-workflow';
}

export function createPayoutActivities({ db, gateway, config }: { db: Db; gateway: Gateway; config: Config }) {
  const policy = payoutPolicyFrom(config);
  const recording: RecordingPolicy = policy;

  return {
    async readPayoutPolicy(): Promise<PayoutPolicy> {
      return policy;
    },

    async readPayout(orderId: string): Promise<PayoutView | null> {
      return findPayoutByOrder(db, orderId, policy.attemptCap);
    },

    async claimPayout(orderId: string): Promise<ClaimResult> {
      return claimPayout(db, orderId, { attemptCap: policy.attemptCap, runId: currentRunId() });
    },

    /** The money-moving call. Never throws for a provider answer: every answer becomes a MoneyOutcome. */
    async sendDirectTransfer(req: TransferRequest): Promise<MoneyOutcome<RzpTransfer>> {
      const now = await findPayoutById(db, req.payoutId, policy.attemptCap);
      if (!now || now.status !== 'processing' || now.attempts !== req.attemptNo || now.idempotencyKey !== req.idempotencyKey) {
        // The claim is no longer ours (a newer run resolved it): send nothing; the resolver will look.
        return { type: 'unknown', reason: 'no_response', httpStatus: null, detail: 'not sent: the claim is no longer held' };
      }
      try {
        return await gateway.createDirectTransfer({
          account: req.linkedAccountId,
          amountPaise: req.amountPaise,
          idempotencyKey: req.idempotencyKey,
          notes: { transaction_id: req.payoutId, order_id: req.orderId },
        });
      } catch (err) {
        logger.error({ err, payoutId: req.payoutId }, 'createDirectTransfer threw instead of returning an outcome');
        return { type: 'unknown', reason: 'no_response', httpStatus: null, detail: String((err as Error)?.message ?? err) };
      }
    },

    async recordTransferOutcome(req: TransferRequest, outcome: MoneyOutcome<RzpTransfer>): Promise<Recorded> {
      if (outcome.type !== 'accepted') logger.warn({ err: outcome, payoutId: req.payoutId }, 'direct transfer not accepted');
      return recordTransferOutcome(db, { payoutId: req.payoutId, attemptNo: req.attemptNo, idempotencyKey: req.idempotencyKey, outcome, runId: currentRunId(), policy: recording });
    },

    /** Asks the provider's ledger whether a transfer carries this payout's note (design.md §6). */
    async resolveUnknownTransfer(payoutId: string): Promise<Recorded & { resolution: Resolution['kind'] | 'moved_on' }> {
      // The claim's age and number in one read: the finding is recorded only for that same claim.
      const { rows } = await db.query<{ claimed_at: Date | null; age_ms: number | null; attempts: number }>(
        `SELECT claimed_at, attempts, (extract(epoch FROM now() - claimed_at) * 1000)::int8 AS age_ms FROM payouts WHERE id = $1`, [payoutId]);
      const payout = await findPayoutById(db, payoutId, policy.attemptCap);
      const claim = rows[0];
      if (!payout) throw new Error(`payout ${payoutId} does not exist`);
      // A retry whose first attempt already recorded the finding lands here: the row has moved on.
      if (payout.status !== 'processing') return { payout, retryAfterMs: null, resolution: 'moved_on' };
      if (!claim?.claimed_at) return { payout, retryAfterMs: null, resolution: 'ask_again' };
      let transfers: RzpTransfer[];
      try {
        transfers = await gateway.listTransfers({
          from: new Date(claim.claimed_at.getTime() - RESOLVER_WINDOW_BEFORE_MS),
          to: new Date(claim.claimed_at.getTime() + RESOLVER_WINDOW_AFTER_MS),
        });
      } catch (err) {
        logger.error({ err, payoutId }, 'listing transfers failed; the resolver will ask again');
        return { payout, retryAfterMs: null, resolution: 'ask_again' };
      }
      const earlier = await db.query<{ provider_transfer_id: string }>(
        `SELECT DISTINCT provider_transfer_id FROM payout_attempts
         WHERE payout_id = $1 AND attempt_no < $2 AND provider_transfer_id IS NOT NULL`, [payoutId, claim.attempts]);
      const resolution = decideResolution({
        payoutId, amountPaise: payout.amountPaise, linkedAccountId: payout.linkedAccountId, transfers,
        earlierTransferIds: earlier.rows.map((r) => r.provider_transfer_id),
        claimAgeMs: claim.age_ms ?? 0, inFlightHorizonMs: config.PAYOUT_STALE_CLAIM_MS,
      });
      const recorded = await recordResolution(db, { payoutId, attemptNo: claim.attempts, resolution, runId: currentRunId(), policy: recording });
      return { ...recorded, resolution: resolution.kind };
    },

    /** Settles an accepted payout when the provider says processed (or sends it back to retry). */
    async checkSettlement(payoutId: string): Promise<PayoutView> {
      const payout = await findPayoutById(db, payoutId, policy.attemptCap);
      if (!payout || payout.status !== 'accepted' || !payout.providerTransferId) return payout!;
      let transfer: RzpTransfer;
      try {
        transfer = await gateway.fetchTransfer(payout.providerTransferId);
      } catch (err) {
        logger.warn({ err, payoutId }, 'fetching the transfer failed; settlement will be polled again');
        return payout;
      }
      const after = await inTransaction(db, (tx) => applyTransferEvidence(tx, { transfer, source: 'fetch', runId: currentRunId(), policy: recording }));
      return after ?? payout;
    },
  };
}

export type PayoutActivities = ReturnType<typeof createPayoutActivities>;
