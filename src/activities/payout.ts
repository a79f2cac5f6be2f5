/** Activities of payoutWorkflow. Database activities are idempotent and may be retried; the one
 * money-moving call, sendDirectTransfer, is never retried by Temporal (maximumAttempts 1). */
import { annotateSpan } from '../observability/tracing';
import { Context } from '@temporalio/activity';
import { LISTING_PAGE_LEASE_MS, payoutLogFields, type PayoutPolicy, type PayoutView } from '../contracts/payout';
import type { Config } from '../config/config';
import { payoutPolicyFrom } from '../payouts/policy';
import { inTransaction, type Db, type Tx } from '../db/pool';
import type { Gateway, MoneyOutcome, RzpTransfer } from '../gateway/types';
import { logger } from '../logger';
import { captureListingStep, listNextPage, type CaptureListingStep, type ListingKnobs, type PassSummary } from '../payouts/captureListing';
import { CAPTURE_CHECK_FAILED, CAPTURE_NOT_CONFIRMED, captureOfOrderToConfirm, captureToConfirm, checkCapture, recordCaptureConfirmed, type CaptureCheck } from '../payouts/captureConfirmation';
import { batchOfOrder, claimBatchPayout, closePayoutBatch, joinPayoutBatch, type JoinResult } from '../payouts/batches';
import { startBatchRun } from '../payouts/batchStarter';
import { applyTransferEvidence, BATCH_MEMBERS_MISSING, KEY_EXPIRED, recordResolution, recordResolverGaveUp, recordTransferOutcome, type Recorded, type RecordingPolicy } from '../payouts/outcomes';
import { holdClaimOnUnreadRefund } from '../payouts/refundHolds';
import { retryDelayMs } from '../payouts/rejection';
import { attemptGivenBack, claimPayout, findPayoutById, findPayoutByOrder, insertAttempt, lockPayout, transition, type ClaimResult } from '../payouts/repository';
import { decideResolution, RESOLVER_WINDOW_AFTER_MS, RESOLVER_WINDOW_BEFORE_MS, type Resolution } from '../payouts/resolution';
import { heldBackAtSend } from '../payouts/balanceWall';
import { startPayoutSweepNow } from '../payouts/sweepNow';
import { workflowTaskQueueOf } from '../contracts/taskQueues';
import { classifyReversals, isReversed, reversalsOf, type ClassifiedReversal } from '../payouts/transferReversals';

export interface TransferRequest {
  payoutId: string;
  orderId: string;
  linkedAccountId: string;
  amountPaise: number;
  idempotencyKey: string;
  attemptNo: number;
  /** Set for a batch's transfer: its notes name the batch instead of an order. */
  batchId?: string;
}

/** What the money-moving activity answers: the provider's outcome, or why nothing was sent. */
export type TransferSendOutcome =
  | MoneyOutcome<RzpTransfer>
  /** Transfers were paused after the claim: the claim is released (`pending`), its attempt given back. */
  | { type: 'not_sent'; reason: 'transfers_paused' }
  /** The key is older than the provider's retention: the payout is in `review`. */
  | { type: 'not_sent'; reason: 'key_expired' }
  /** Razorpay does not confirm the capture the online order was paid on: the payout is in `review`. */
  | { type: 'not_sent'; reason: 'capture_not_confirmed' }
  /** The capture could not be confirmed now (Razorpay unreachable): the claim is released to `failed`
   * with the durable backoff, its attempt given back. */
  | { type: 'not_sent'; reason: 'capture_check_failed' }
  /** The capture was confirmed, but so slowly that a transfer request could outlast the activity: the
   * claim is released (`pending`), its attempt given back; the next claim sends without asking again. */
  | { type: 'not_sent'; reason: 'no_time_left' }
  /** A refund of the order was announced and not yet read: the payout is held in review. */
  | { type: 'not_sent'; reason: 'customer_refunded' };

type SendGate = { send: true } | { send: false; outcome: TransferSendOutcome };
type AttemptBase = { payoutId: string; attemptNo: number; idempotencyKey: string; runId: string };

/** Room for the gate's commit and the answer's return around the transfer's own timeout. */
const SEND_MARGIN_MS = 250;

function currentRunId(): string {
  return Context.current().info.workflowExecution?.runId ?? 'outside-workflow';
}

export function createPayoutActivities({ db, gateway, config }: { db: Db; gateway: Gateway; config: Config }) {
  const policy = payoutPolicyFrom(config);
  const recording: RecordingPolicy = policy;
  const listing: ListingKnobs = {
    gatherMs: config.CAPTURE_LISTING_GATHER_MS, lookbackSeconds: config.CAPTURE_LISTING_LOOKBACK_SECONDS, leaseMs: LISTING_PAGE_LEASE_MS,
    window: { recheckMs: config.LATE_CAPTURE_RECHECK_MS, sweepEveryMs: config.MISSED_WEBHOOK_SWEEP_EVERY_MS },
  };

  /** An online order's capture, asked of Razorpay once before its payout's first transfer, outside
   * any transaction (no row lock waits on the provider). */
  async function confirmCapture(req: TransferRequest): Promise<CaptureCheck> {
    const recorded = await captureToConfirm(db, { payoutId: req.payoutId, attemptNo: req.attemptNo, idempotencyKey: req.idempotencyKey });
    return recorded ? checkCapture(gateway, recorded) : { kind: 'not_needed' };
  }

  /** The capture check's answer, in the gate's transaction (the claim is ours, the row locked): a
   * confirmation is recorded and lets the gate go on (null); anything else holds the send. */
  async function applyCaptureCheck(tx: Tx, payout: PayoutView, base: AttemptBase, capture: CaptureCheck, msLeft: () => number): Promise<SendGate | null> {
    switch (capture.kind) {
      case 'not_needed':
        return null;
      case 'confirmed':
        await recordCaptureConfirmed(tx, capture.paymentId);
        if (msLeft() >= config.GATEWAY_TIMEOUT_MS + SEND_MARGIN_MS) return null;
        // So slow that the transfer's own timeout could outlast the activity's (the activity must
        // answer itself): give the claim back; the next one sends at once, without asking again.
        await insertAttempt(tx, { ...base, outcome: 'not_sent', providerCode: 'NO_TIME_LEFT' });
        await transition(tx, payout, { type: 'claim_released' }, { ...attemptGivenBack(payout), claimed_by_run: null });
        return { send: false, outcome: { type: 'not_sent', reason: 'no_time_left' } };
      case 'not_confirmed':
        logger.error({ ...payoutLogFields(payout), paymentId: capture.paymentId, why: capture.why }, 'not sent: Razorpay does not confirm the capture the order was paid on; the payout goes to review');
        await insertAttempt(tx, { ...base, outcome: 'not_sent', providerCode: CAPTURE_NOT_CONFIRMED, raw: { paymentId: capture.paymentId, why: capture.why, payment: capture.payment } });
        await transition(tx, payout, { type: 'needs_review' }, { last_code: CAPTURE_NOT_CONFIRMED });
        return { send: false, outcome: { type: 'not_sent', reason: 'capture_not_confirmed' } };
      case 'unavailable':
        // Nothing was sent, so nothing is unknown: release the claim without spending an attempt (the
        // provider's outage is not the payout's failure), keep the key (never sent), and wait out the
        // same durable backoff as a transient rejection, so an outage is not a claim-and-fetch loop.
        logger.warn({ ...payoutLogFields(payout), paymentId: capture.paymentId, detail: capture.detail }, 'not sent: the capture could not be confirmed with Razorpay; the payout retries after a backoff');
        await insertAttempt(tx, { ...base, outcome: 'not_sent', providerCode: CAPTURE_CHECK_FAILED, raw: capture });
        await transition(tx, payout, { type: 'not_paid_retry', capReached: false }, {
          ...attemptGivenBack(payout), claimed_by_run: null, last_code: CAPTURE_CHECK_FAILED,
          next_attempt_at: new Date(Date.now() + retryDelayMs(payout.attempts, policy)),
        });
        return { send: false, outcome: { type: 'not_sent', reason: 'capture_check_failed' } };
    }
  }

  /** Just before the call, in one transaction: the claim is still ours, the capture is confirmed
   * (recorded here, so no later attempt asks again), the kill switch is still off (read FOR SHARE, so
   * a pause committing now waits for us or we for it), and the key is young enough to trust; then the
   * send is recorded, and only after that commit does the request go. `msLeft`: what remains of the
   * activity's timeout once the capture was asked about. */
  async function gateTransferRequest(req: TransferRequest, capture: CaptureCheck, msLeft: () => number): Promise<SendGate> {
    return inTransaction(db, async (tx) => {
      const payout = await lockPayout(tx, req.payoutId, policy.attemptCap);
      if (payout.status !== 'processing' || payout.attempts !== req.attemptNo || payout.idempotencyKey !== req.idempotencyKey) {
        // The claim is no longer ours (a newer run resolved it): send nothing; the resolver will look.
        return { send: false, outcome: { type: 'unknown', reason: 'no_response', httpStatus: null, detail: 'not sent: the claim is no longer held' } };
      }
      const base = { payoutId: payout.id, attemptNo: payout.attempts, idempotencyKey: payout.idempotencyKey, runId: currentRunId() };
      const { rows: age } = await tx.query<{ expired: boolean; ask_first: boolean }>(
        `SELECT key_first_sent_at IS NOT NULL AND key_first_sent_at < now() - make_interval(secs => $2::double precision / 1000) AS expired,
                provider_may_know_since IS NOT NULL AS ask_first
           FROM payouts WHERE id = $1`,
        [payout.id, config.PAYOUT_IDEMPOTENCY_RETENTION_MS]);
      // Before anything decides about a send, one the provider may already have is looked for: a
      // transfer a restore forgot has paid the vendor, whatever the capture check would say now
      // (the customer refunded since, from the Dashboard).
      if (age[0]?.ask_first) return askProviderFirst(tx, payout);
      // A refund of the order announced and not yet read: nothing leaves until it is.
      if (await holdClaimOnUnreadRefund(tx, payout)) return { send: false, outcome: { type: 'not_sent', reason: 'customer_refunded' } };
      const heldForCapture = await applyCaptureCheck(tx, payout, base, capture, msLeft);
      if (heldForCapture) return heldForCapture;
      const heldBack = await heldBackAtSend(tx, payout.id);
      if (heldBack) {
        // Paused by ops, or the balance wall went up after the claim (this payout is not its probe):
        // the claim is given back with its attempt, and the run waits as for a pause.
        await insertAttempt(tx, { ...base, outcome: 'not_sent', providerCode: heldBack });
        await transition(tx, payout, { type: 'claim_released' }, { ...attemptGivenBack(payout), claimed_by_run: null });
        return { send: false, outcome: { type: 'not_sent', reason: 'transfers_paused' } };
      }
      if (age[0]?.expired) {
        logger.error(payoutLogFields(payout), 'not sent: the idempotency key is past the provider retention; the payout goes to review');
        await insertAttempt(tx, { ...base, outcome: 'not_sent', providerCode: KEY_EXPIRED });
        await transition(tx, payout, { type: 'needs_review' }, { last_code: KEY_EXPIRED });
        return { send: false, outcome: { type: 'not_sent', reason: 'key_expired' } };
      }
      await tx.query('UPDATE payouts SET request_sent_at = now(), key_first_sent_at = COALESCE(key_first_sent_at, now()) WHERE id = $1', [payout.id]);
      return { send: true };
    });
  }

  /** The row may be older than the provider's ledger (a restored database): send nothing and treat
   * the claim as an unknown outcome, so the resolver lists the provider's transfers by the payout's
   * note from the moment a forgotten send could have been made (the mark's instant; the key's age is
   * left alone). Found: recorded as ours; nothing found: sent under the same key, the mark cleared by
   * the resolver's finding. */
  async function askProviderFirst(tx: Tx, payout: PayoutView): Promise<SendGate> {
    await tx.query('UPDATE payouts SET request_sent_at = now() WHERE id = $1', [payout.id]);
    logger.warn(payoutLogFields(payout), 'not sent: the payout row may be older than the provider\'s ledger (a restored database); asking the provider by its note first');
    return { send: false, outcome: { type: 'unknown', reason: 'no_response', httpStatus: null, detail: 'not sent: the row may be older than the provider\'s ledger; asking the provider first' } };
  }

  /** A failed listing: keep asking, unless it has failed for longer than PAYOUT_RESOLVER_GIVE_UP_MS. */
  async function noteListingFailure(payoutId: string, attemptNo: number, failingMs: number | null): Promise<Recorded & { resolution: 'ask_again' | 'gave_up'; listingRefused: true }> {
    if (failingMs !== null && failingMs > config.PAYOUT_RESOLVER_GIVE_UP_MS) {
      return { ...(await recordResolverGaveUp(db, { payoutId, attemptNo, failingForMs: failingMs, policy: recording })), resolution: 'gave_up', listingRefused: true };
    }
    await db.query(`UPDATE payouts SET resolver_failing_since = COALESCE(resolver_failing_since, now()) WHERE id = $1 AND status = 'processing' AND attempts = $2`, [payoutId, attemptNo]);
    return { payout: (await findPayoutById(db, payoutId, policy.attemptCap))!, retryAfterMs: null, resolution: 'ask_again', listingRefused: true };
  }

  /** The probe was accepted: the balance is back, so every payout the wall held goes on now (the
   * sweep signals each waiting run), not at its next re-check. A failure here is only a delay: the
   * scheduled sweep wakes them too. */
  async function wakeAfterBalanceWall(fields: Record<string, unknown>): Promise<void> {
    const { client, info } = Context.current();
    logger.info(fields, 'the balance wall is down: a probe transfer was accepted; waking the waiting payouts');
    try {
      await startPayoutSweepNow(client, workflowTaskQueueOf(info.taskQueue));
    } catch (err) {
      logger.warn({ err, ...fields }, 'could not start the payout sweep after the balance came back; the scheduled sweep will');
    }
  }

  return {
    async readPayoutPolicy(): Promise<PayoutPolicy> {
      return policy;
    },

    /** A run's first step: the policy and the payout row in one (a local activity). */
    async startPayoutRun(orderId: string): Promise<{ policy: PayoutPolicy; payout: PayoutView | null }> {
      return { policy, payout: await findPayoutByOrder(db, orderId, policy.attemptCap) };
    },

    async readPayout(orderId: string): Promise<PayoutView | null> {
      return findPayoutByOrder(db, orderId, policy.attemptCap);
    },

    /** `rowOlderThanRun`: the run saw more attempts than the row now holds (a restored database), so
     * a send it made may be one the row forgets: the claim's send asks the provider first. */
    async claimPayout(orderId: string, opts: { rowOlderThanRun?: boolean } = {}): Promise<ClaimResult> {
      return claimPayout(db, orderId, { attemptCap: policy.attemptCap, runId: currentRunId(), balanceProbeMs: policy.balanceProbeMs, providerMayKnow: opts.rowOlderThanRun ?? false });
    },

    /** Before the claim: where the order's capture stands against the listing passes shared with the
     * other payouts due (captureListing.ts). The run runs the pass itself when it is its turn (`list`),
     * and waits on a durable timer when this answers `wait`: a local activity that waited here would
     * hold a workflow-task slot, and the pass's own pages need those slots to go on. */
    async awaitCaptureListing(orderId: string, opts: { byWindow?: boolean } = {}): Promise<CaptureListingStep> {
      return captureListingStep(db, orderId, listing, { byWindow: !!opts.byWindow && config.CAPTURE_BY_WINDOW === 'on' });
    },

    /** A listing pass's next page, on the reads budget: one provider call (up to 100 payments). */
    async listPaymentsForCaptures(passId: number): Promise<PassSummary> {
      return listNextPage(db, gateway, passId, listing.leaseMs);
    },

    /** A scheduled pair's order joins its batch: its capture confirmed with Razorpay first (outside
     * the transaction, as before a transfer), then the join (batches.ts). */
    async joinPayoutBatch(orderId: string): Promise<JoinResult> {
      const recorded = await captureOfOrderToConfirm(db, orderId);
      const capture: CaptureCheck = recorded ? await checkCapture(gateway, recorded) : { kind: 'not_needed' };
      return joinPayoutBatch(db, orderId, capture, policy);
    },

    /** The batch an order joined gets its run (a start that finds it running adds nothing to its
     * history: the member is the row); idempotent. Null when the order is in no batch: its join was
     * lost with a database restored to before it (the run follows the row). */
    async startBatchRunFor(orderId: string): Promise<{ batchId: string; cutoffAt: string } | null> {
      const batch = await batchOfOrder(db, orderId);
      if (!batch) return null;
      const { client, info } = Context.current();
      await startBatchRun(client, workflowTaskQueueOf(info.taskQueue), batch);
      return batch;
    },

    /** At the cutoff (or ops' close-now): the batch's sum is fixed and gets its own payout row. */
    async closePayoutBatch(batchId: string): Promise<PayoutView | null> {
      return closePayoutBatch(db, batchId, policy.attemptCap);
    },

    async claimBatchPayout(batchId: string, opts: { rowOlderThanRun?: boolean } = {}): Promise<ClaimResult> {
      return claimBatchPayout(db, batchId, { attemptCap: policy.attemptCap, runId: currentRunId(), balanceProbeMs: policy.balanceProbeMs, providerMayKnow: opts.rowOlderThanRun ?? false });
    },

    /** The money-moving call. Never throws for a provider answer: every answer becomes an outcome. */
    async sendDirectTransfer(req: TransferRequest): Promise<TransferSendOutcome> {
      annotateSpan({ orderId: req.orderId, payoutId: req.payoutId, batchId: req.batchId });
      const startedAt = Date.now();
      const timeoutMs = Context.current().info.startToCloseTimeoutMs;
      const capture = await confirmCapture(req);
      const gate = await gateTransferRequest(req, capture, () => timeoutMs - (Date.now() - startedAt));
      if (!gate.send) return gate.outcome;
      try {
        return await gateway.createDirectTransfer({
          account: req.linkedAccountId,
          amountPaise: req.amountPaise,
          idempotencyKey: req.idempotencyKey,
          notes: req.batchId ? { transaction_id: req.payoutId, batch_id: req.batchId } : { transaction_id: req.payoutId, order_id: req.orderId },
        });
      } catch (err) {
        logger.error({ err, ...payoutLogFields({ id: req.payoutId, orderId: req.orderId }) }, 'createDirectTransfer threw instead of returning an outcome');
        return { type: 'unknown', reason: 'no_response', httpStatus: null, detail: String((err as Error)?.message ?? err) };
      }
    },

    async recordTransferOutcome(req: TransferRequest, outcome: MoneyOutcome<RzpTransfer>): Promise<Recorded> {
      // (The workflow never passes a `not_sent` outcome here: the gate recorded it already.)
      const fields = payoutLogFields({ id: req.payoutId, orderId: req.orderId });
      annotateSpan({ orderId: req.orderId, payoutId: req.payoutId, batchId: req.batchId }, { 'payouts.outcome': outcome.type });
      // The gateway adapter has already logged the provider's answer whole.
      // Info: a rejection is an answer, recorded with its code; what it leads to (a retry, or a park
      // that reaches the ops queue, its metric and alert) is where ops look.
      if (outcome.type === 'rejected') logger.info({ ...fields, code: outcome.error.code }, 'direct transfer rejected');
      else if (outcome.type === 'unknown') logger.warn({ ...fields, reason: outcome.reason, detail: outcome.detail }, 'direct transfer outcome unknown: the resolver will ask the provider');
      const recorded = await recordTransferOutcome(db, { payoutId: req.payoutId, attemptNo: req.attemptNo, idempotencyKey: req.idempotencyKey, outcome, runId: currentRunId(), policy: recording });
      if (recorded.balanceWallLowered) await wakeAfterBalanceWall(fields);
      return recorded;
    },

    /** Asks the provider's ledger whether a transfer carries this payout's note (design.md §6). */
    async resolveUnknownTransfer(payoutId: string): Promise<Recorded & { resolution: Resolution['kind'] | 'found_reversed' | 'moved_on' | 'gave_up'; listingRefused?: boolean }> {
      // The request's age, the key's age and the claim number in one read: the finding is recorded
      // only for that same claim. The window is anchored where the request really went out (a request
      // delayed behind a worker outage is still found); a claim that recorded no send falls back to
      // its claim time.
      const { rows } = await db.query<{ anchor: Date | null; earliest: Date | null; age_ms: number | null; key_age_ms: number | null; attempts: number; failing_ms: number | null; members_wait_ms: number | null; batch_marked: boolean }>(
        `SELECT COALESCE(request_sent_at, claimed_at) AS anchor, attempts,
                batch_id IS NOT NULL AND provider_may_know_since IS NOT NULL AS batch_marked,
                (SELECT (extract(epoch FROM now() - min(a.created_at)) * 1000)::int8 FROM payout_attempts a
                  WHERE a.payout_id = payouts.id AND a.provider_code = '${BATCH_MEMBERS_MISSING}') AS members_wait_ms,
                LEAST(COALESCE(request_sent_at, claimed_at), provider_may_know_since) AS earliest,
                (extract(epoch FROM now() - COALESCE(request_sent_at, claimed_at)) * 1000)::int8 AS age_ms,
                (extract(epoch FROM now() - key_first_sent_at) * 1000)::int8 AS key_age_ms,
                (extract(epoch FROM now() - resolver_failing_since) * 1000)::int8 AS failing_ms
         FROM payouts WHERE id = $1`, [payoutId]);
      const payout = await findPayoutById(db, payoutId, policy.attemptCap);
      const claim = rows[0];
      if (!payout) throw new Error(`payout ${payoutId} does not exist`);
      // A retry whose first attempt already recorded the finding lands here: the row has moved on.
      if (payout.status !== 'processing') return { payout, retryAfterMs: null, resolution: 'moved_on' };
      if (!claim?.anchor) return { payout, retryAfterMs: null, resolution: 'ask_again' };
      let transfers: RzpTransfer[];
      // Paging through a long window can take a while: heartbeat so a dead worker is noticed soon.
      const context = Context.current();
      const beat = setInterval(() => context.heartbeat({ payoutId }), 2_000);
      try {
        transfers = await gateway.listTransfers({
          // From the mark of a row older than the provider's ledger, when there is one (a restore).
          from: new Date((claim.earliest ?? claim.anchor).getTime() - RESOLVER_WINDOW_BEFORE_MS),
          to: new Date(claim.anchor.getTime() + RESOLVER_WINDOW_AFTER_MS),
        });
      } catch (err) {
        logger.error({ err, ...payoutLogFields(payout) }, 'listing transfers failed; the resolver will ask again');
        return noteListingFailure(payoutId, claim.attempts, claim.failing_ms);
      } finally {
        clearInterval(beat);
      }
      await db.query('UPDATE payouts SET resolver_failing_since = NULL WHERE id = $1 AND resolver_failing_since IS NOT NULL', [payoutId]);
      const earlier = await db.query<{ provider_transfer_id: string }>(
        `SELECT DISTINCT provider_transfer_id FROM payout_attempts
         WHERE payout_id = $1 AND attempt_no < $2 AND provider_transfer_id IS NOT NULL`, [payoutId, claim.attempts]);
      const resolution = decideResolution({
        payoutId, amountPaise: payout.amountPaise, linkedAccountId: payout.linkedAccountId, transfers,
        earlierTransferIds: earlier.rows.map((r) => r.provider_transfer_id),
        claimAgeMs: claim.age_ms ?? 0, inFlightHorizonMs: config.PAYOUT_STALE_CLAIM_MS,
        keyAgeMs: claim.key_age_ms, keyRetentionMs: config.PAYOUT_IDEMPOTENCY_RETENTION_MS,
        // Members a restore took out of a batch come back as the sweep finds their runs: wait for them
        // as long as the resolver waits for a listing, then a human looks.
        membersMayReturn: claim.batch_marked && (claim.members_wait_ms ?? 0) < config.PAYOUT_RESOLVER_GIVE_UP_MS,
      });
      if (resolution.kind === 'found_failed' && isReversed(resolution.transfer)) {
        // Reversed, not failed: owed again and parked for ops with the provider's reversals as evidence.
        let reversals: ClassifiedReversal[];
        try {
          reversals = await classifyReversals(db, gateway, await reversalsOf(gateway, resolution.transfer));
        } catch (err) {
          logger.error({ err, ...payoutLogFields(payout), transferId: resolution.transfer.id }, 'listing the reversals of our transfer failed; the resolver will ask again');
          return noteListingFailure(payoutId, claim.attempts, claim.failing_ms);
        }
        const found = { kind: 'found_reversed' as const, transfer: resolution.transfer, reversals };
        return { ...(await recordResolution(db, { payoutId, attemptNo: claim.attempts, resolution: found, runId: currentRunId(), policy: recording })), resolution: found.kind };
      }
      const recorded = await recordResolution(db, { payoutId, attemptNo: claim.attempts, resolution, runId: currentRunId(), policy: recording });
      // A finding answers the mark of a row older than the provider's ledger: the next send is a send.
      if (resolution.kind !== 'ask_again' && resolution.kind !== 'members_missing') await db.query('UPDATE payouts SET provider_may_know_since = NULL WHERE id = $1 AND provider_may_know_since IS NOT NULL', [payoutId]);
      if (recorded.balanceWallLowered) await wakeAfterBalanceWall(payoutLogFields(payout));
      return { ...recorded, resolution: resolution.kind };
    },

    /** Settles an accepted payout when the provider says processed (sends it back to retry when it
     * failed; parks it, owed again, when it was reversed). */
    async checkSettlement(payoutId: string): Promise<PayoutView | null> {
      const payout = await findPayoutById(db, payoutId, policy.attemptCap);
      // Null: the row is gone (a database restored to before it was written); the run follows that.
      if (!payout || payout.status !== 'accepted' || !payout.providerTransferId) return payout;
      let transfer: RzpTransfer;
      try {
        transfer = await gateway.fetchTransfer(payout.providerTransferId);
      } catch (err) {
        logger.warn({ err, ...payoutLogFields(payout) }, 'fetching the transfer failed; settlement will be polled again');
        return payout;
      }
      let reversals: ClassifiedReversal[];
      try {
        reversals = await classifyReversals(db, gateway, await reversalsOf(gateway, transfer));
      } catch (err) {
        logger.warn({ err, ...payoutLogFields(payout) }, 'listing the transfer\'s reversals failed; settlement will be polled again');
        return payout;
      }
      const after = await inTransaction(db, (tx) => applyTransferEvidence(tx, { transfer, source: 'fetch', runId: currentRunId(), policy: recording, reversals }));
      return after?.payout ?? payout;
    },
  };
}

export type PayoutActivities = ReturnType<typeof createPayoutActivities>;
