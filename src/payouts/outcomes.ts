/** Recording what happened to a claimed payout: the createTransfer answer, the resolver's finding,
 * and settlement evidence. Each runs in one transaction that appends the payout_attempts row and
 * moves the status (a create answer that says processed appends `accepted` then `settled`); each is
 * a no-op when the row has already moved on (a retried activity, a webhook that got there first). */
import { payoutLogFields, type PayoutView } from '../contracts/payout';
import { inTransaction, type Db, type Tx } from '../db/pool';
import type { MoneyOutcome, RzpTransfer } from '../gateway/types';
import { logger } from '../logger';
import { holdIfRefundedWhileSending } from '../moneyin/outsideRefunds';
import { directTransferBacklog, isBalanceShortage, lowerBalanceWallOnAcceptance, raiseBalanceWall, wasKeysFirstSend } from './balanceWall';
import { classifyRejection, retryDelayMs } from './rejection';
import { attemptGivenBack, freshKeyColumns, insertAttempt, lockPayout, transition } from './repository';
import type { Resolution } from './resolution';
import { isReversed, recordPayoutReversal, type ClassifiedReversal } from './transferReversals';

export interface RecordingPolicy {
  attemptCap: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  /** How long the balance wall waits before its next probe (balanceWall.ts). */
  balanceProbeMs: number;
}

export interface Recorded {
  payout: PayoutView;
  /** Set when the payout failed transiently: wait this long before claiming again. */
  retryAfterMs: number | null;
  /** This acceptance took the balance wall down: the caller wakes the payouts it held (after commit). */
  balanceWallLowered?: boolean;
}

/** Releases a claim that did not pay the vendor: `failed` with a durable backoff, or `parked` once
 * the attempt limit is reached. `newKey` only after a definitive answer from the provider, and only
 * such an answer counts towards the cap: a claim that ends without one (nothing found, the key kept
 * for a re-send) gives its attempt back, so re-sends under a kept key are bounded by the backoff
 * (which keeps doubling with the claim count) and the key's retention, never by the cap. */
async function releaseNotPaid(tx: Tx, payout: PayoutView, policy: RecordingPolicy, opts: { lastCode: string | null; newKey: boolean }): Promise<number | null> {
  const definitive = opts.newKey;
  const capReached = definitive && payout.attempts >= payout.attemptLimit;
  const delay = capReached ? null : retryDelayMs(payout.attempts, policy);
  await transition(tx, payout, { type: 'not_paid_retry', capReached }, {
    last_code: opts.lastCode ?? payout.lastCode,
    ...(definitive ? freshKeyColumns() : attemptGivenBack(payout)),
    next_attempt_at: delay === null ? null : new Date(Date.now() + delay),
  });
  // A refund made outside the app while this attempt was in flight now holds the payout instead.
  return (await holdIfRefundedWhileSending(tx, payout, policy.attemptCap)) ? null : delay;
}

/** The answer to createTransfer for claim `attemptNo`, classified (design.md §6). */
export async function recordTransferOutcome(db: Db, input: {
  payoutId: string; attemptNo: number; idempotencyKey: string; outcome: MoneyOutcome<RzpTransfer>; runId: string; policy: RecordingPolicy;
}): Promise<Recorded> {
  return inTransaction(db, async (tx) => {
    const payout = await lockPayout(tx, input.payoutId, input.policy.attemptCap);
    const stillOurs = payout.status === 'processing' && payout.attempts === input.attemptNo;
    let retryAfterMs: number | null = null;
    let balanceWallLowered = false;
    const base = { payoutId: payout.id, attemptNo: input.attemptNo, idempotencyKey: input.idempotencyKey, runId: input.runId };
    // A retried recording whose first try committed (e.g. its workflow task failed after the local
    // activity ran) finds this very transfer on the row: nothing to add, nothing to alarm about.
    const alreadyRecorded = input.outcome.type === 'accepted' && payout.providerTransferId === input.outcome.entity.id;
    if (!stillOurs && input.outcome.type === 'accepted' && !alreadyRecorded) {
      // The row moved on, but the provider took the transfer: keep that evidence (and its id, so the
      // resolver and reconciliation see it).
      logger.error({ ...payoutLogFields(payout), status: payout.status, transferId: input.outcome.entity.id }, 'transfer accepted after its claim moved on');
      await insertAttempt(tx, { ...base, outcome: 'accepted', providerTransferId: input.outcome.entity.id, raw: input.outcome.entity });
    }
    if (stillOurs) {
      const outcome = input.outcome;
      if (outcome.type === 'accepted') {
        await insertAttempt(tx, { ...base, outcome: 'accepted', providerTransferId: outcome.entity.id, raw: outcome.entity });
        const to = await transition(tx, payout, { type: 'transfer_accepted' }, { provider_transfer_id: outcome.entity.id, last_code: null });
        balanceWallLowered = await lowerBalanceWallOnAcceptance(tx, payout.id);
        // A direct transfer comes back `processed` at once (processed_at = created_at): the provider's
        // own answer to our request is the evidence a fetch would give, recorded the same way, so the
        // run needs no settlement wait. A later transfer.processed finds the row settled and changes nothing.
        if (to === 'accepted' && outcome.entity.status === 'processed') {
          await recordEvidence(tx, await lockPayout(tx, payout.id, input.policy.attemptCap), { transfer: outcome.entity, source: 'create', runId: input.runId, policy: input.policy });
        }
      } else if (outcome.type === 'rejected') {
        const code = outcome.error.code;
        await insertAttempt(tx, { ...base, outcome: 'rejected', providerCode: code || null, raw: outcome });
        if (!code) {
          // A rejection without a provider code is a bug in the adapter or the provider: a human decides.
          logger.error({ err: outcome, ...payoutLogFields(payout) }, 'transfer rejected without a provider error code');
          await transition(tx, payout, { type: 'needs_review' }, { last_code: 'REJECTED_WITHOUT_CODE' });
        } else if (isBalanceShortage(code)) {
          await releaseAtBalanceWall(tx, payout, input.policy, code);
        } else if (classifyRejection(code) === 'transient') {
          retryAfterMs = await releaseNotPaid(tx, payout, input.policy, { lastCode: code, newKey: true });
        } else {
          await transition(tx, payout, { type: 'permanent_rejection' }, { last_code: code, ...freshKeyColumns() });
          await holdIfRefundedWhileSending(tx, payout, input.policy.attemptCap);
        }
      } else {
        // Unknown is not a status: the row stays `processing` and the resolver asks the provider.
        await insertAttempt(tx, { ...base, outcome: 'unknown', providerCode: outcome.reason, raw: outcome });
      }
    }
    return { payout: await lockPayout(tx, input.payoutId, input.policy.attemptCap), retryAfterMs, balanceWallLowered };
  });
}

/** An insufficient-balance rejection: the platform's condition, not the payout's (balanceWall.ts).
 * The rejection is definitive for its key, so the payout takes a fresh one; its attempt is given
 * back and it waits (`pending`) behind the wall. A rejection of a re-sent key may be the provider
 * replaying what it stored for the key's first request, from before the balance came back: it takes
 * a fresh key and goes on, without putting the wall up (a real shortage rejects the fresh key too). */
async function releaseAtBalanceWall(tx: Tx, payout: PayoutView, policy: RecordingPolicy, code: string): Promise<void> {
  if (await wasKeysFirstSend(tx, payout.id)) {
    if (await raiseBalanceWall(tx, code, policy.balanceProbeMs)) {
      const { neededPaise, payouts } = await directTransferBacklog(tx);
      logger.error({ ...payoutLogFields(payout), code, neededPaise, waitingPayouts: payouts },
        'the platform balance is short: direct transfers wait behind the balance wall until a probe transfer is accepted (finance: top up the balance)');
    }
  }
  await transition(tx, payout, { type: 'claim_released' }, {
    ...attemptGivenBack(payout), claimed_by_run: null, last_code: code, next_attempt_at: null, ...freshKeyColumns(),
  });
  await holdIfRefundedWhileSending(tx, payout, policy.attemptCap);
}

/** The resolver's finding for a `processing` payout. `ask_again` changes nothing. */
export async function recordResolution(db: Db, input: {
  /** The claim the finding was made for: a finding about an older claim changes nothing. */
  payoutId: string; attemptNo: number; resolution: Resolution | ResolutionWithReversals; runId: string; policy: RecordingPolicy;
}): Promise<Recorded> {
  return inTransaction(db, async (tx) => {
    const payout = await lockPayout(tx, input.payoutId, input.policy.attemptCap);
    let retryAfterMs: number | null = null;
    let balanceWallLowered = false;
    const r = input.resolution;
    if (payout.status === 'processing' && payout.attempts === input.attemptNo && r.kind !== 'ask_again') {
      const base = { payoutId: payout.id, attemptNo: payout.attempts, idempotencyKey: payout.idempotencyKey, runId: input.runId };
      if (r.kind === 'found_alive') {
        await insertAttempt(tx, { ...base, outcome: 'recovered', providerTransferId: r.transfer.id, raw: r.transfer });
        await transition(tx, payout, { type: 'transfer_accepted' }, { provider_transfer_id: r.transfer.id });
        balanceWallLowered = await lowerBalanceWallOnAcceptance(tx, payout.id);
      } else if (r.kind === 'found_reversed' || (r.kind === 'found_failed' && isReversed(r.transfer))) {
        // Our request landed, was processed and was reversed before we knew: owed again, for ops.
        const reversals = r.kind === 'found_reversed' ? r.reversals : [];
        await recordPayoutReversal(tx, payout, { transfer: r.transfer, reversals, source: 'resolver', runId: input.runId, fromResolver: true });
      } else if (r.kind === 'found_failed') {
        // The provider remembers this key with a failed transfer: the next try needs a new key.
        await insertAttempt(tx, { ...base, outcome: 'failed_after_accept', providerTransferId: r.transfer.id, providerCode: r.transfer.error.code, raw: r.transfer });
        retryAfterMs = await releaseNotPaid(tx, payout, input.policy, { lastCode: r.transfer.error.code ?? `TRANSFER_${r.transfer.status.toUpperCase()}`, newKey: true });
      } else if (r.kind === 'members_missing') {
        // Nothing is sent and nothing recorded as paid: the batch waits, asking again, until the
        // members the restore took out are back and its sum meets the provider's transfer.
        logger.warn({ ...payoutLogFields(payout), transferId: r.transfer.id, transferPaise: r.transfer.amount }, 'batch payout waits: the provider\'s transfer for it is more than its members sum now (a restored database); members are coming back');
        await insertAttempt(tx, { ...base, outcome: 'not_sent', providerCode: BATCH_MEMBERS_MISSING, raw: r.transfer });
        retryAfterMs = Math.min(retryDelayMs(1, input.policy), MEMBERS_RECHECK_MAX_MS);
        await transition(tx, payout, { type: 'not_paid_retry', capReached: false }, {
          last_code: BATCH_MEMBERS_MISSING, ...attemptGivenBack(payout), next_attempt_at: new Date(Date.now() + retryAfterMs),
        });
      } else if (r.kind === 'nothing_found') {
        // Not a definitive answer from the provider: keep the key, it may still hold the first request.
        await insertAttempt(tx, { ...base, outcome: 'not_found' });
        retryAfterMs = await releaseNotPaid(tx, payout, input.policy, { lastCode: null, newKey: false });
      } else if (r.kind === 'key_expired') {
        logger.error({ ...payoutLogFields(payout), keyAgeMs: r.keyAgeMs }, 'payout needs review: nothing found and its idempotency key is past the provider retention');
        await insertAttempt(tx, { ...base, outcome: 'not_found', providerCode: KEY_EXPIRED });
        await transition(tx, payout, { type: 'needs_review' }, { last_code: KEY_EXPIRED });
      } else {
        logger.error({ ...payoutLogFields(payout), reason: r.reason }, 'payout needs review: ambiguous provider evidence');
        await transition(tx, payout, { type: 'needs_review' }, { last_code: 'AMBIGUOUS_PROVIDER_EVIDENCE' });
      }
    }
    return { payout: await lockPayout(tx, input.payoutId, input.policy.attemptCap), retryAfterMs, balanceWallLowered };
  });
}

/** A batch's payout waiting for members a restore took out (resolution.ts `members_missing`). */
export const BATCH_MEMBERS_MISSING = 'BATCH_MEMBERS_MISSING';
/** How long a batch waiting for its members waits between looks at most. */
const MEMBERS_RECHECK_MAX_MS = 30_000;

/** Review codes of payouts only a human can move on. */
export const KEY_EXPIRED = 'IDEMPOTENCY_KEY_EXPIRED';
export const RESOLVER_LISTING_FAILING = 'RESOLVER_LISTING_FAILING';

/** The resolver could not list the provider's transfers for too long: a human looks. */
export async function recordResolverGaveUp(db: Db, input: { payoutId: string; attemptNo: number; failingForMs: number; policy: RecordingPolicy }): Promise<Recorded> {
  return inTransaction(db, async (tx) => {
    const payout = await lockPayout(tx, input.payoutId, input.policy.attemptCap);
    if (payout.status === 'processing' && payout.attempts === input.attemptNo) {
      logger.error({ ...payoutLogFields(payout), failingForMs: input.failingForMs }, 'payout needs review: the transfer listing keeps failing');
      await transition(tx, payout, { type: 'needs_review' }, { last_code: RESOLVER_LISTING_FAILING });
    }
    return { payout: await lockPayout(tx, input.payoutId, input.policy.attemptCap), retryAfterMs: null };
  });
}

/** The resolver found our transfer reversed: its reversals, as the provider listed them. */
export type ResolutionWithReversals = { kind: 'found_reversed'; transfer: RzpTransfer; reversals: ClassifiedReversal[] };

interface TransferEvidenceInput {
  transfer: RzpTransfer; source: string; runId?: string | null; policy: RecordingPolicy;
  /** The transfer's reversals, when it shows any (transferReversals.reversalsOf). */
  reversals?: readonly ClassifiedReversal[];
}

/** Settlement evidence for an accepted payout, from a webhook's fetch or the run's own fetch:
 * processed → `settled`; failed → not paid, retried with a new key; (partly) reversed → owed again,
 * parked for ops (transferReversals.ts), never retried by itself. Anything else, or a row that is
 * not waiting for this transfer, changes nothing. Returns the payout touched, if any, and whether
 * this evidence moved it. */
export async function applyTransferEvidence(tx: Tx, input: TransferEvidenceInput): Promise<{ payout: PayoutView; moved: boolean } | null> {
  const { rows } = await tx.query<{ id: string }>('SELECT id FROM payouts WHERE provider_transfer_id = $1', [input.transfer.id]);
  if (!rows[0]) return null;
  const payout = await lockPayout(tx, rows[0].id, input.policy.attemptCap);
  // The row was found by the transfer id before its lock: a later attempt may have taken it over
  // meanwhile (its own transfer accepted). Evidence about an older transfer moves nothing then.
  if (payout.status !== 'accepted' || payout.providerTransferId !== input.transfer.id) return { payout, moved: false };
  await recordEvidence(tx, payout, input);
  const after = await lockPayout(tx, payout.id, input.policy.attemptCap);
  return { payout: after, moved: after.status !== payout.status };
}

/** What the provider says about the transfer of `payout`, locked and `accepted`, recorded. */
async function recordEvidence(tx: Tx, payout: PayoutView, input: TransferEvidenceInput): Promise<void> {
  const base = { payoutId: payout.id, attemptNo: payout.attempts, idempotencyKey: payout.idempotencyKey, runId: input.runId ?? null, providerTransferId: input.transfer.id };
  if (input.transfer.status === 'processed') {
    await insertAttempt(tx, { ...base, outcome: 'settled', raw: { source: input.source, transfer: input.transfer } });
    await transition(tx, payout, { type: 'settlement_confirmed' }, { settled_at: new Date() });
  } else if (isReversed(input.transfer)) {
    await recordPayoutReversal(tx, payout, { transfer: input.transfer, reversals: input.reversals ?? [], source: input.source, runId: input.runId });
  } else if (input.transfer.status === 'failed') {
    await insertAttempt(tx, { ...base, outcome: 'failed_after_accept', providerCode: input.transfer.error.code, raw: { source: input.source, transfer: input.transfer } });
    await releaseNotPaid(tx, payout, input.policy, { lastCode: input.transfer.error.code ?? `TRANSFER_${input.transfer.status.toUpperCase()}`, newKey: true });
  }
}
