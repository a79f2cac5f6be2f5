/** What one payout run knows between its steps: the row as last read, the step log a query shows,
 * and the signals that wake it. Publishing a row keeps the Web UI's details and search attributes
 * current. */
import { setCurrentDetails, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import { payoutDetails, type PayoutSituation } from '../../contracts/payoutText';
import {
  opsDecisionSignal, payoutStateQuery, transferEvidenceSignal, transfersResumedSignal,
  type OpsDecision, type PayoutStepLog, type PayoutView,
} from '../../contracts/payout';
import { PayoutStatusAttr, VendorIdAttr } from '../../contracts/searchAttributes';

const MAX_STEP_LOG = 50;

export class PayoutRun {
  payout: PayoutView | null = null;
  readonly steps: PayoutStepLog[] = [];
  /** A transfer webhook arrived since the last settlement check. */
  settlementEvidence = false;
  /** An ops signal arrived since the last re-read, and which one (it counts only if recorded). */
  opsDecision = false;
  signalled: OpsDecision | null = null;
  /** How many resumes this run has heard: a wait compares against the count before its claim, so a
   * resume that lands while the claim is in flight is not lost (a flag cleared at the wait was). */
  resumes = 0;
  /** The flag runs recorded before the count replay with. */
  resumed = false;
  private published = '';
  /** The most attempts any row this run read has shown. Attempts only grow, so a row with fewer is
   * older than this run's history (a restored database): its next send asks the provider first. */
  private attemptsSeen = 0;
  rowOlderThanRun = false;

  constructor(readonly orderId: string) {
    setHandler(payoutStateQuery, () => ({ orderId, payout: this.payout, steps: this.steps }),
      { description: 'The payout row as this run last read it, and the steps the run took (newest last).' });
    setHandler(transferEvidenceSignal, (e) => { this.settlementEvidence = true; this.note('evidence', `${e.event} ${e.transferId}`); },
      { description: 'A transfer webhook arrived: fetch the transfer now instead of waiting for the next poll.' });
    setHandler(transfersResumedSignal, () => { this.resumed = true; this.resumes += 1; this.note('switch', 'transfers resumed'); },
      { description: 'Ops resumed direct transfers: a run waiting out the kill switch claims again.' });
    // A signal is only a nudge to re-read the row: a decision counts once it is recorded (the ops API
    // writes review_actions and the status first). One sent by hand from the Web UI or CLI with no
    // recorded decision changes nothing, and the step log says so.
    setHandler(opsDecisionSignal, (d) => {
      this.opsDecision = true;
      this.signalled = d;
      this.note('ops', `signal ${d.action} by ${d.actor}: re-reading the payout for a recorded decision`);
    }, { description: 'Sent by the ops API after it recorded a decision; the run re-reads the payout. Sent by hand, it changes nothing.' });
  }

  note(step: string, detail: string): void {
    this.steps.push({ step, detail });
    if (this.steps.length > MAX_STEP_LOG) this.steps.shift();
  }

  /** What the Web UI shows as the run's current details: the state and the next step. */
  explain(situation: PayoutSituation = null): void {
    setCurrentDetails(payoutDetails(this.payout, situation));
  }

  publish(view: PayoutView | null): void {
    this.payout = view;
    // Fewer attempts than seen, or no row at all after some: a row older than this run's history.
    if ((view?.attempts ?? 0) < this.attemptsSeen) this.rowOlderThanRun = true;
    this.attemptsSeen = Math.max(this.attemptsSeen, view?.attempts ?? 0);
    this.explain();
    // Search attributes only when they change: each upsert is a command in the history.
    if (!view || this.published === `${view.status}/${view.vendorId}`) return;
    this.published = `${view.status}/${view.vendorId}`;
    upsertSearchAttributes([{ key: PayoutStatusAttr, value: view.status }, { key: VendorIdAttr, value: view.vendorId }]);
  }
}
