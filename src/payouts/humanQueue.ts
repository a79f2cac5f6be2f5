/** Human decisions on a parked or review payout: retry (a fresh budget of attempts), mark paid
 * externally (records the provider reference, sends nothing), pay offline (finance pays it by hand:
 * it joins the open offline ledger and no transfer is ever sent), cancel. Each commits the status change
 * and its review_actions row together; the caller signals the workflow after the commit. */
import type { OpsAction, PayoutView } from '../contracts/payout';
import { inTransaction, type Db, type Tx } from '../db/pool';
import { KEY_EXPIRED } from './outcomes';
import { findPayoutByOrder, freshKeyColumns, lockPayout, transition } from './repository';
import type { PayoutEvent } from './stateMachine';

export interface OpsDecisionInput {
  orderId: string;
  action: OpsAction;
  actor: string;
  reason: string;
  /** Required for mark_paid_externally: the provider or bank reference of the payment made. */
  reference?: string;
}

export type OpsDecisionResult =
  | { kind: 'applied'; payout: PayoutView }
  /** The same decision was made before and still stands (a repeated click, a retried request). */
  | { kind: 'already_in_effect'; payout: PayoutView }
  | { kind: 'not_found' }
  | { kind: 'not_awaiting_decision'; payout: PayoutView };

const EVENT_OF: Record<OpsAction, PayoutEvent> = {
  retry: { type: 'ops_retry' },
  mark_paid_externally: { type: 'ops_mark_paid_externally' },
  cancel: { type: 'ops_cancel' },
  pay_offline: { type: 'ops_pay_offline' },
};

/** The latest decision on this payout is this one (same reference for mark paid) and its outcome
 * still holds: a retry while the payout is being retried, a cancel on a cancelled payout… */
async function lastDecisionIs(tx: Tx, payout: PayoutView, input: OpsDecisionInput): Promise<boolean> {
  const { rows } = await tx.query<{ action: string; reference: string | null }>(
    'SELECT action, reference FROM review_actions WHERE payout_id = $1 ORDER BY id DESC LIMIT 1', [payout.id]);
  const last = rows[0];
  if (!last || last.action !== input.action) return false;
  if (input.action === 'mark_paid_externally') return payout.status === 'settled' && last.reference === (input.reference ?? null);
  const holds: Record<OpsAction, readonly string[]> = {
    retry: ['pending', 'processing', 'accepted', 'failed', 'settled'],
    cancel: ['cancelled'],
    pay_offline: ['offline'],
    mark_paid_externally: ['settled'],
  };
  return holds[input.action].includes(payout.status);
}

export async function applyOpsDecision(db: Db, input: OpsDecisionInput, attemptCap: number): Promise<OpsDecisionResult> {
  if (input.action === 'mark_paid_externally' && !input.reference) throw new Error('mark_paid_externally needs a reference');
  return inTransaction(db, async (tx) => {
    const found = await findPayoutByOrder(tx, input.orderId, attemptCap);
    if (!found) return { kind: 'not_found' };
    const payout = await lockPayout(tx, found.id, attemptCap);
    const set: Record<string, unknown> =
      // A retry after IDEMPOTENCY_KEY_EXPIRED: a human has checked the provider holds nothing under
      // the old key, so the next try goes with a fresh one.
      input.action === 'retry' ? { attempt_limit: payout.attempts + attemptCap, next_attempt_at: null, ...(payout.lastCode === KEY_EXPIRED ? freshKeyColumns() : {}) }
      : input.action === 'mark_paid_externally' ? { external_reference: input.reference, settled_at: new Date() }
      : {};
    if (!(await transition(tx, payout, EVENT_OF[input.action], set))) {
      return (await lastDecisionIs(tx, payout, input)) ? { kind: 'already_in_effect', payout } : { kind: 'not_awaiting_decision', payout };
    }
    await tx.query(
      'INSERT INTO review_actions (payout_id, actor, action, reason, reference) VALUES ($1, $2, $3, $4, $5)',
      [payout.id, input.actor, input.action, input.reason, input.reference ?? null],
    );
    return { kind: 'applied', payout: await lockPayout(tx, payout.id, attemptCap) };
  });
}
