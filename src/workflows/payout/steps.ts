/** The payout state machine's steps, one per state a row can be in. Each takes the run forward from
 * the row it last read and returns the workflow's result once the payout is final, or nothing to go
 * round again (the entry picks the next step from the row the step published). */
import { ActivityFailure, ApplicationFailure, condition, continueAsNew, patched, sleep, workflowInfo } from '@temporalio/workflow';
import type { TransferRequest, TransferSendOutcome } from '../../activities/payout';
import { MAX_PASS_PAGES, TRANSFERS_PAUSED, type PayoutPolicy, type PayoutStatus, type PayoutView, type PayoutWorkflowInput, type PayoutWorkflowResult } from '../../contracts/payout';
import type { MoneyOutcome, RzpTransfer } from '../../gateway/types';
import { resolverDelayMs } from '../../payouts/resolverBackoff';
import { localDb, providerBudgetCalls, remoteDb, workflowQueueCalls, type PayoutCalls, type ProviderCalls } from './proxies';
import type { PayoutRun } from './run';

/** Everything a step needs: the run's state, the policy read at start and the database calls. */
export interface PayoutContext {
  /** The payout's key: the order id, or a batch's id for a batch's own payout (payoutBatch.ts). */
  key: string;
  /** Starts the run afresh with its own input (continue-as-new). */
  restart: () => Promise<never>;
  run: PayoutRun;
  policy: PayoutPolicy;
  /** Local activities for runs started after issue 12, remote ones for runs recorded before; a
   * batch's run claims through claimBatchPayout. */
  db: PayoutDbCalls;
  /** The calls that reach Razorpay: on the provider budget's task queues for runs started after
   * issue 22, on the workflow's own queue for runs recorded before. */
  provider: ProviderCalls;
  /** Whether a refused listing (429, 5xx) makes the resolver back off exponentially (issue 22). */
  resolverBacksOff: boolean;
  /** The run's patches, evaluated before its first local activity (patchesUpFront); null for runs
   * recorded before that, which call each patch where it stands. */
  upFront: RunPatches | null;
  /** An order's run confirms its capture from a listing pass before its claim (issue 37); a batch's
   * own run and runs recorded before it do not. Set to what the listing step found. */
  captureListing?: 'due' | 'not_needed' | 'confirmed' | 'fetch';
}

/** Every patch a payout run takes after its start. The SDK (1.24.0) replays a local activity that
 * finished as a workflow task completed inside that task, where a patch called after it in the next
 * task is not known yet, and the replay fails (test/unit/payout.replaySdkBug.test.ts). So a run asks
 * one patch before its first local activity: a run that has it was started by code with all of those
 * below, so each is taken as true without a marker of its own (one marker where new runs wrote two to
 * five). Runs recorded before it replay as they ran, asking each patch where it stood. A later patch
 * needs a marker of its own asked before this one, standing for it and these: what a recorded marker
 * stands for never changes. */
const PATCHES_UP_FRONT = 'payout-patches-up-front';
const RUN_PATCHES = ['payout-local-db-steps', 'payout-provider-budget', 'payout-row-older-than-run', 'wait-while-transfers-paused', 'payout-resumes-counted'] as const;
/** Captures confirmed from the listing before the claim (issue 37): its marker stands for it and every
 * patch above. Runs recorded with PATCHES_UP_FRONT alone, or before it, never list. */
const CAPTURE_LISTING = 'payout-capture-listing';
/** A batched order's capture may wait for the once-more look's window (issue 37, the `daily` goal):
 * its marker stands for it, CAPTURE_LISTING and every patch above. */
const CAPTURE_BY_WINDOW = 'payout-capture-by-window';
/** A run waiting for ops (parked, review) also re-reads its row when the sweep wakes it: the sweep
 * wakes only open rows, so a wake means the row is no longer what the run waits on (a restored
 * database made it pending). Its marker stands for it, CAPTURE_BY_WINDOW and every patch above. */
const HUMAN_WAIT_HEARS_WAKE = 'payout-human-wait-hears-wake';
const UP_FRONT_ONLY = [CAPTURE_LISTING, CAPTURE_BY_WINDOW, HUMAN_WAIT_HEARS_WAKE] as const;
type RunPatch = (typeof RUN_PATCHES)[number] | (typeof UP_FRONT_ONLY)[number];
export type RunPatches = Record<RunPatch, boolean>;

/** Call first in a run, before any activity. */
export function patchesUpFront(): RunPatches | null {
  const hearsWake = patched(HUMAN_WAIT_HEARS_WAKE);
  const byWindow = hearsWake || patched(CAPTURE_BY_WINDOW);
  const listing = byWindow || patched(CAPTURE_LISTING);
  if (!listing && !patched(PATCHES_UP_FRONT)) return null;
  return {
    ...(Object.fromEntries(RUN_PATCHES.map((id) => [id, true])) as Record<(typeof RUN_PATCHES)[number], boolean>),
    [CAPTURE_LISTING]: listing, [CAPTURE_BY_WINDOW]: byWindow, [HUMAN_WAIT_HEARS_WAKE]: hearsWake,
  };
}

/** A patch's answer: the one taken up front, or (a run recorded before) asked where it stands; the
 * patches that exist only up front are false there. */
const isPatched = (upFront: RunPatches | null, id: RunPatch): boolean =>
  (upFront ? upFront[id] : !(UP_FRONT_ONLY as readonly string[]).includes(id) && patched(id));

/** How many times a run asks about its capture's listing before leaving it to the send's own fetch
 * (~30 s of a pass in flight: its pages wait for read-budget slots, and a payout that gave up would
 * spend one more read), and the bounds of its wait between two asks. They shape recorded histories:
 * changing them needs a patch. */
const LISTING_ROUNDS = 30;
const LISTING_WAIT_MIN_MS = 100;
const LISTING_WAIT_MAX_MS = 10_000;
/** How many times a batched order's run asks again while it waits for its window (the activity ends
 * the wait by the window's listing, the batch's cutoff or a late sweep: this only bounds a bug). */
const WINDOW_ROUNDS = 100;

/** The database steps the state machine takes. */
export type PayoutDbCalls = Pick<PayoutCalls, 'readPayout' | 'claimPayout' | 'recordTransferOutcome'>;

/** One step of the state machine: a result ends the run, nothing goes round again. */
export type PayoutStep = (ctx: PayoutContext) => Promise<PayoutWorkflowResult | undefined>;

const TERMINAL: ReadonlySet<string> = new Set(['settled', 'cancelled', 'rerouted', 'offline']);
/** Statuses after which a run that found no transfer due may end: final, or never claimed. */
const SETTLED_OR_OPEN_FOR_CLAIM: ReadonlySet<string> = new Set(['settled', 'cancelled', 'rerouted', 'offline', 'pending', 'failed']);
/** The failure type of a run that lost a claim on a row still waiting for one. */
const LOST_CLAIM = 'PayoutLostClaim';
/** The failure type of a run whose order says `batched` while no batch holds it (left for the sweep). */
const BATCH_MISSING = 'PayoutBatchMissing';

/** Reads the policy (and, for new runs, the row) and publishes where the payout stands. Runs started
 * before issue 12 replay their remote activities; new runs read both in one local step. */
export async function openPayoutRun(input: PayoutWorkflowInput, run: PayoutRun): Promise<PayoutContext> {
  const upFront = patchesUpFront();
  const cheap = isPatched(upFront, 'payout-local-db-steps');
  const db = cheap ? localDb : remoteDb;
  let firstRead: PayoutView | null | undefined;
  let policy: PayoutPolicy;
  if (cheap) ({ policy, payout: firstRead } = await localDb.startPayoutRun(input.orderId));
  else policy = await remoteDb.readPayoutPolicy();
  // One patch for the provider budget: the task queues and the resolver's backoff change together.
  const budgeted = isPatched(upFront, 'payout-provider-budget');
  const provider = budgeted ? providerBudgetCalls(policy) : workflowQueueCalls(policy);
  const restart = () => continueAsNew<(input: PayoutWorkflowInput) => Promise<PayoutWorkflowResult>>(input);
  const ctx: PayoutContext = {
    key: input.orderId, restart, run, policy, db, provider, resolverBacksOff: budgeted, upFront,
    ...(isPatched(upFront, CAPTURE_LISTING) ? { captureListing: 'due' as const } : {}),
  };
  run.publish(firstRead !== undefined ? firstRead : await db.readPayout(input.orderId));
  return ctx;
}

/** Long runs (a long resolve, a slow settlement) start afresh with the same input. */
export async function continueAsNewIfSuggested(ctx: PayoutContext): Promise<void> {
  if (workflowInfo().continueAsNewSuggested) await ctx.restart();
}

/** Takes the run from the row it last published to its result, one step per status. */
export async function runPayoutSteps(ctx: PayoutContext): Promise<PayoutWorkflowResult> {
  for (;;) {
    await continueAsNewIfSuggested(ctx);
    const result = await STEP_FOR[ctx.run.payout?.status ?? 'pending'](ctx);
    if (result) return result;
  }
}

/** `pending` or `failed`: wait out the backoff, claim (routing and the kill switch at fire time), send. */
export const claimAndSend: PayoutStep = async (ctx) => {
  const { run, db, key: orderId } = ctx;
  await waitForNextAttempt(ctx);
  if (ctx.captureListing === 'due') await awaitCaptureListed(ctx);
  const resumesBeforeClaim = run.resumes;
  // A row older than this run's history: the claim marks it, and its send asks the provider first.
  const rowOlderThanRun = run.rowOlderThanRun && isPatched(ctx.upFront, 'payout-row-older-than-run');
  const claim = await db.claimPayout(orderId, ...(rowOlderThanRun ? [{ rowOlderThanRun }] : []));
  if (rowOlderThanRun) run.note('restore', 'the row is older than this run\'s history: its send asks the provider first');
  if (claim.kind === 'claimed') run.rowOlderThanRun = false;
  run.note('claim', claim.kind);
  if (claim.kind === 'no_transfer') {
    run.publish(claim.payout);
    // Never complete over a row still in flight (e.g. `processing` when the route changed): follow it.
    if (claim.payout && !SETTLED_OR_OPEN_FOR_CLAIM.has(claim.payout.status)) return undefined;
    return { kind: 'no_transfer', orderId, reason: claim.reason };
  }
  if (claim.kind === 'paused') {
    // Runs started before this change failed here (the sweep started a new run after resume);
    // a routine pause no longer shows as failed runs: the run waits and the resume wakes it.
    if (!isPatched(ctx.upFront, 'wait-while-transfers-paused')) {
      throw ApplicationFailure.create({ type: TRANSFERS_PAUSED, message: 'direct transfers are paused; the payout stays pending for the sweep', nonRetryable: true });
    }
    run.publish(claim.payout);
    await waitWhilePaused(ctx, resumesBeforeClaim);
    return undefined;
  }
  if (claim.kind === 'batch_due') {
    // The pair pays on a schedule: join the batch of the order's window; the `batched` step then
    // makes sure the batch's run is there. A capture left to a fetch is confirmed by the join, on the
    // reads budget; one the listing confirmed (or none to confirm) joins by a local step.
    const captureSettled = ctx.captureListing === 'confirmed' || ctx.captureListing === 'not_needed';
    const joined = await (captureSettled ? localDb.joinPayoutBatch : ctx.provider.joinBatch)(orderId);
    run.note('batch', joined.kind === 'joined' ? `joined ${joined.batchId} (cutoff ${joined.cutoffAt})` : `not joined: ${joined.why}`);
    run.publish(joined.payout);
    return undefined;
  }
  if (claim.kind === 'lost') {
    // Never complete over a non-terminal row: follow what the row is now. A row still waiting for
    // a claim it cannot get fails the run, so the sweep may start a new one (as when paused).
    const now = await db.readPayout(orderId);
    if (now?.status === 'pending' || now?.status === 'failed') {
      throw ApplicationFailure.create({ type: LOST_CLAIM, message: `claim lost with the payout ${now.status}; left for the sweep`, nonRetryable: true });
    }
    run.publish(now);
    if (!now || TERMINAL.has(now.status)) return { kind: 'lost_claim', orderId, statusSeen: claim.statusSeen };
    return undefined;
  }
  run.publish(claim.payout);
  run.publish(await sendClaimedTransfer(ctx, claim.payout));
  return undefined;
};

/** `processing` with no answer: ask the provider's ledger, never release without asking. */
export const resolveUnknownTransfer: PayoutStep = async (ctx) => {
  const { run } = ctx;
  run.explain('resolving');
  let refusedInARow = 0;
  for (;;) {
    const found = await ctx.provider.askProviderLedger(run.payout!.id);
    run.note('resolve', found.listingRefused ? 'ask_again (listing refused)' : found.resolution);
    // Leave once the row is no longer `processing` (e.g. a retried activity whose first try recorded it).
    if (found.resolution !== 'ask_again' || found.payout.status !== 'processing') {
      run.publish(found.payout);
      return undefined;
    }
    await continueAsNewIfSuggested(ctx);
    refusedInARow = found.listingRefused ? refusedInARow + 1 : 0;
    await sleep(ctx.resolverBacksOff ? resolverDelayMs(ctx.policy, refusedInARow, Math.random()) : ctx.policy.resolverRetryMs);
  }
};

/** `accepted` is not settled: wait for the webhook's signal, or poll the transfer on a durable timer. */
export const awaitSettlement: PayoutStep = async (ctx) => {
  const { run } = ctx;
  const payoutId = run.payout!.id;
  for (;;) {
    await condition(() => run.settlementEvidence, ctx.policy.settlementPollMs);
    run.settlementEvidence = false;
    // A provider fetch: a remote activity (a slow gateway must not stretch a workflow task).
    const view = await ctx.provider.checkSettlement(payoutId);
    // No row, or not `accepted`: a restored database can hold a row older than this run's history
    // (or none yet); the run follows the row, whose claim asks the provider before any send.
    if (view?.status !== 'accepted') {
      run.publish(view);
      return undefined;
    }
    await continueAsNewIfSuggested(ctx);
  }
};

/** `parked` or `review`: only ops can move it. Re-read now and then in case a signal was lost, and
 * when the sweep wakes the run (it wakes open rows only: a restore may have reopened this one). */
export const awaitHumanDecision: PayoutStep = async (ctx) => {
  const { run } = ctx;
  const before = run.payout!;
  const resumesBefore = run.resumes;
  const hearsWake = isPatched(ctx.upFront, HUMAN_WAIT_HEARS_WAKE);
  await condition(() => run.opsDecision || (hearsWake && run.resumes > resumesBefore), ctx.policy.humanRecheckMs);
  run.opsDecision = false;
  const after = await ctx.db.readPayout(ctx.key);
  const heard = run.signalled;
  run.signalled = null;
  if (heard && after?.status === before.status) run.note('ops', `ignored ${heard.action} by ${heard.actor}: no recorded decision (use the ops API)`);
  run.publish(after);
  return undefined;
};

/** A final row: the run ends with what it found. */
export const finish: PayoutStep = async ({ run, key }) => {
  const p = run.payout!;
  return { kind: 'finished', orderId: key, payoutId: p.id, status: p.status, attempts: p.attempts };
};

/** `batched`: the batch's run pays the order. Make sure it is there (an idempotent start that sends the
 * run nothing, so a join whose start was lost still gets one), then end: the order's row takes the
 * batch's final status. */
export const followBatch: PayoutStep = async ({ run, key, db }) => {
  const batch = await remoteDb.startBatchRunFor(key);
  if (!batch) {
    // The join this run made is gone: the database was restored to before it (a row older than the
    // run). Follow the row as it is now (pending: join again); never end over an open row.
    const now = await db.readPayout(key);
    if (now?.status === 'batched') throw ApplicationFailure.create({ type: BATCH_MISSING, message: `order ${key} is batched but in no batch`, nonRetryable: true });
    run.note('batch', `the join is gone (a restored database): following the row, ${now?.status ?? 'none'}`);
    run.publish(now);
    return undefined;
  }
  run.note('batch', `paid by batch ${batch.batchId} at ${batch.cutoffAt}`);
  return { kind: 'batched', orderId: key, batchId: batch.batchId, cutoffAt: batch.cutoffAt };
};

/** The step for each status; no row yet is treated as `pending` (the claim finds out). */
export const STEP_FOR: Record<PayoutStatus, PayoutStep> = {
  pending: claimAndSend, failed: claimAndSend,
  processing: resolveUnknownTransfer,
  accepted: awaitSettlement,
  parked: awaitHumanDecision, review: awaitHumanDecision,
  settled: finish, cancelled: finish, rerouted: finish, offline: finish,
  batched: followBatch,
};

/** Sends the claimed transfer once; a failed activity (timeout, dead worker) is an unknown outcome. */
async function sendClaimedTransfer(ctx: PayoutContext, claimed: PayoutView): Promise<PayoutView> {
  const { run, db, key: orderId } = ctx;
  const req: TransferRequest = {
    payoutId: claimed.id, orderId, linkedAccountId: claimed.linkedAccountId, amountPaise: claimed.amountPaise,
    idempotencyKey: claimed.idempotencyKey, attemptNo: claimed.attempts,
    ...(claimed.batchId ? { batchId: claimed.batchId } : {}),
  };
  const resumesBeforeSend = run.resumes;
  let sent: TransferSendOutcome;
  try {
    sent = await ctx.provider.send(req);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    sent = { type: 'unknown', reason: 'no_response', httpStatus: null, detail: `createTransfer activity failed: ${err.cause?.message ?? err.message}` };
  }
  if (sent.type === 'not_sent') {
    // The activity recorded why and moved the row (released to `pending`, or to `review`).
    run.note('transfer', `not sent: ${sent.reason}`);
    const now = await db.readPayout(orderId);
    if (sent.reason === 'transfers_paused') {
      // Runs recorded before paused runs waited failed here, and the sweep started a new run after
      // the resume: their histories replay that way (the claim's pause path took the same patch).
      if (!isPatched(ctx.upFront, 'wait-while-transfers-paused')) {
        run.publish(now);
        throw ApplicationFailure.create({ type: TRANSFERS_PAUSED, message: 'direct transfers were paused before the request was sent; the payout stays pending for the sweep', nonRetryable: true });
      }
      run.publish(now);
      await waitWhilePaused(ctx, resumesBeforeSend);
    }
    return now!;
  }
  const outcome: MoneyOutcome<RzpTransfer> = sent;
  run.note('transfer', outcome.type === 'accepted' ? `accepted ${outcome.entity.id}` : outcome.type === 'rejected' ? `rejected ${outcome.error.code}` : `unknown ${outcome.reason}`);
  return (await db.recordTransferOutcome(req, outcome)).payout;
}

/** Before the claim, once per run: the order's capture confirmed by a listing pass shared with the
 * other payouts due, this run running the pass when it is its turn. Whatever the listing cannot
 * settle is left to the send's (or the join's) own fetch of the payment. */
async function awaitCaptureListed(ctx: PayoutContext): Promise<void> {
  const byWindow = isPatched(ctx.upFront, CAPTURE_BY_WINDOW);
  let windowRounds = 0;
  for (let round = 0; round < LISTING_ROUNDS; round++) {
    const step = byWindow && windowRounds < WINDOW_ROUNDS
      ? await localDb.awaitCaptureListing(ctx.key, { byWindow: true })
      : await localDb.awaitCaptureListing(ctx.key);
    if (step.kind === 'await_window') {
      // A batched order's capture, confirmed by the window that lists its payment before the cutoff:
      // these waits are not listing rounds.
      if (windowRounds === 0) {
        ctx.run.note('capture', 'waiting for the once-more look\'s window to list the payment');
        ctx.run.explain('capture_window');
      }
      windowRounds += 1;
      round -= 1;
      await sleep(step.ms);
      continue;
    }
    if (step.kind === 'settled') {
      ctx.captureListing = step.why;
      if (step.why !== 'not_needed') ctx.run.note('capture', step.why === 'confirmed' ? 'confirmed from the payment listing' : 'left to a fetch of the payment alone');
      return;
    }
    if (step.kind === 'wait') {
      await sleep(Math.min(LISTING_WAIT_MAX_MS, Math.max(LISTING_WAIT_MIN_MS, step.ms)));
      continue;
    }
    if (step.kind === 'list') {
      try {
        // A page per call, each on the reads budget; answers recorded before that have no `done`.
        let pass = await ctx.provider.listPayments(step.passId);
        for (let page = 1; pass.done === false && page <= MAX_PASS_PAGES; page++) pass = await ctx.provider.listPayments(step.passId);
        ctx.run.note('capture', `listing pass ${pass.passId}: ${pass.pages} page(s), ${pass.confirmed} capture(s) confirmed${pass.error ? `, failed: ${pass.error}` : ''}`);
      } catch (err) {
        // The pass's activity died: its lease lets another pass start; this run asks again.
        if (!(err instanceof ActivityFailure)) throw err;
      }
    }
  }
  ctx.captureListing = 'fetch';
}

/** Transfers are paused: wait for a resume heard since `resumesBefore` (counted before the step that
 * found the pause), or re-check now and then, instead of failing the run. */
async function waitWhilePaused({ run, policy, upFront }: PayoutContext, resumesBefore: number): Promise<void> {
  run.note('switch', 'transfers paused: waiting for resume');
  run.explain('waiting_for_resume');
  if (isPatched(upFront, 'payout-resumes-counted')) {
    await condition(() => run.resumes > resumesBefore, policy.humanRecheckMs);
    return;
  }
  run.resumed = false;
  await condition(() => run.resumed, policy.humanRecheckMs);
  run.resumed = false;
}

async function waitForNextAttempt({ run }: PayoutContext): Promise<void> {
  const next = run.payout?.nextAttemptAt;
  const due = next ? Date.parse(next) - Date.now() : 0;
  if (due > 0) {
    run.note('backoff', `${due} ms`);
    run.explain('backoff');
    await sleep(due);
  }
}
