/** Finance's part of the campaign on the offline rail: settlement runs during the workload (one while
 * transfers are paused), each as finance does it through the API — start the run, download the bank
 * file, record lines paid with UTRs — with one line failed in the first round and re-paid by a later
 * one, and a last round once the system is quiet; then the bank statement with the rounds' debits.
 * What was paid is recorded for the checker; nothing here decides whether the system was right. */
import { istDateOf } from '../../src/domain/calendar';
import { plainRupees } from '../../src/domain/money';
import type { Topology } from '../../src/devstack/topologyTypes';
import { callRetrying, sleep } from './calls';
import type { WorldVendor } from './plan';
import { campaignVendors, type World } from './workload';

export interface PaidLine { reference: string; vendorId: string; amountPaise: number; utr: string; paidOn: string }

export interface OfflineSettlement {
  rounds: number;
  paid: PaidLine[];
  /** References recorded failed (their lines must be paid again by a later round). */
  failed: string[];
  /** Vendors the last round carried forward (their open lines net to zero or less). */
  carriedForward: string[];
  /** Lines of batches cancelled after their bank file was downloaded (confirmed not submitted): never paid. */
  cancelled?: string[];
  /** Cancels refused because the bank file was downloaded (409 settlement_batch_file_downloaded). */
  cancelsRefused?: number;
  problems: string[];
}

/** Every campaign vendor gets bank details (made up), so any offline line can be settled. */
export async function giveBankDetails(t: Topology, world: World): Promise<void> {
  for (const [n, [key, vendorId]] of (Object.entries(world.vendors) as Array<[WorldVendor, string]>).entries()) {
    await callRetrying(t, 'admin', 'PUT', `/v1/admin/vendors/${vendorId}/bank-details`, {
      accountNumber: String(918_000_000_000 + n), ifsc: 'UTIB0000123', beneficiaryName: `Campaign ${key.replace('_', ' ')}`,
    });
  }
  for (const [n, vendorId] of Object.values(world.batch?.vendors ?? {}).entries()) {
    await callRetrying(t, 'admin', 'PUT', `/v1/admin/vendors/${vendorId}/bank-details`, { accountNumber: String(918_100_000_000 + n), ifsc: 'UTIB0000123', beneficiaryName: `Campaign batch ${n}` });
  }
}

export function offlineSettler(t: Topology, world: World, seed: number, log: (line: string) => void) {
  const state: OfflineSettlement = { rounds: 0, paid: [], failed: [], carriedForward: [], cancelled: [], cancelsRefused: 0, problems: [] };
  let utrs = 0;
  const utr = () => `CMPN${seed}R${String(++utrs).padStart(5, '0')}`;

  /** One round: freeze, the bank file, decisions, and the run seen to its end. */
  async function round(opts: RoundOptions): Promise<void> {
    const to = istDateOf(new Date());
    state.rounds += 1;
    // Read each round: the workload makes vendors of its own as it goes (batch_reversed).
    const vendorIds = campaignVendors(world).map((v) => v.vendorId);
    const { body: started } = await callRetrying(t, 'finance', 'POST', '/finance/settlement/runs', { from: opts.from, to, vendorIds });
    const workflowId = started.workflowId as string;
    const batchId = await until(`settlement ${workflowId} froze a batch`, async () => {
      const { body } = await callRetrying(t, 'finance', 'GET', `/finance/settlement/runs/${workflowId}`);
      return (body.live?.progress?.batchId as string | null | undefined) ?? null;
    });
    const { body: batch } = await callRetrying(t, 'finance', 'GET', `/finance/settlement/batches/${batchId}`);
    const lines = (batch.lines as Array<{ reference: string; vendorId: string; amountPaise: number; status: string }>).filter((l) => l.status === 'open');
    if (lines.length > 0) {
      const { body: file } = await callRetrying(t, 'finance', 'GET', `/finance/settlement/batches/${batchId}/bank-file`);
      for (const line of lines) {
        if (!String(file).includes(`${line.reference},`) || !String(file).includes(`,${plainRupees(line.amountPaise)},${line.amountPaise},`)) state.problems.push(`bank file of ${batchId} lacks line ${line.reference} of ${line.amountPaise} paise`);
      }
    }
    if (opts.cancelAfterDownload && lines.length > 0 && await cancelAfterDownload(batchId, lines.map((l) => l.reference))) {
      await until(`settlement ${workflowId} ended after its cancel`, async () => {
        const { body } = await callRetrying(t, 'finance', 'GET', `/finance/settlement/runs/${workflowId}`);
        return body.live && body.live.status !== 'RUNNING' ? true : null;
      });
      log(`finance (${opts.why}): batch ${batchId}, ${lines.length} line(s): cancel refused after the download, then cancelled as never submitted; its lines go to a later round`);
      return;
    }
    const paidOn = istDateOf(new Date());
    for (const [i, line] of lines.entries()) {
      if (opts.failOne && i === 0) {
        await callRetrying(t, 'finance', 'POST', `/finance/settlement/lines/${line.reference}/failed`, { reason: 'campaign: beneficiary bank returned it', amountPaise: line.amountPaise });
        state.failed.push(line.reference);
        continue;
      }
      const paid = { reference: line.reference, vendorId: line.vendorId, amountPaise: line.amountPaise, utr: utr(), paidOn };
      await callRetrying(t, 'finance', 'POST', `/finance/settlement/lines/${line.reference}/paid`, { utr: paid.utr, paidOn, amountPaise: line.amountPaise });
      state.paid.push(paid);
    }
    // Every line decided: the batch closes and its run ends, so the next round starts a new one.
    await until(`settlement ${workflowId} ended`, async () => {
      const { body } = await callRetrying(t, 'finance', 'GET', `/finance/settlement/runs/${workflowId}`);
      return body.live && body.live.status !== 'RUNNING' ? true : null;
    });
    state.carriedForward = (batch.skipped as Array<{ vendorId: string }>).map((x) => x.vendorId);
    const skipped = state.carriedForward.length;
    log(`finance (${opts.why}): batch ${batchId}, ${lines.length} line(s): ${lines.length - (opts.failOne && lines.length > 0 ? 1 : 0)} paid${opts.failOne && lines.length > 0 ? ', 1 failed' : ''}; ${skipped} vendor(s) carried forward`);
  }

  /** Issue 36 item 4: a cancel after the bank file was downloaded is refused (409) and changes
   * nothing; confirmed never submitted, it cancels and the lines are owed again (true). */
  async function cancelAfterDownload(batchId: string, references: string[]): Promise<boolean> {
    const cancel = (confirmNotSubmitted?: boolean) => callRetrying(t, 'finance', 'POST', `/finance/settlement/batches/${batchId}/cancel`,
      { reason: 'fault campaign: wrong debit account chosen', ...(confirmNotSubmitted === undefined ? {} : { confirmNotSubmitted }) }, { accept: [409] });
    for (const confirm of [undefined, false]) {
      const refused = await cancel(confirm);
      const code = (refused.body?.error?.code as string | undefined) ?? '';
      if (refused.status !== 409 || code !== 'settlement_batch_file_downloaded') {
        state.problems.push(`settlement batch ${batchId}: a cancel after its bank file was downloaded (confirmNotSubmitted ${String(confirm)}) was answered ${refused.status} ${code}, not 409 settlement_batch_file_downloaded`);
        return refused.status === 200;
      }
      state.cancelsRefused = (state.cancelsRefused ?? 0) + 1;
    }
    const { body: still } = await callRetrying(t, 'finance', 'GET', `/finance/settlement/batches/${batchId}`);
    if (still.status !== 'open') state.problems.push(`settlement batch ${batchId} is ${String(still.status)} after refused cancels, not open`);
    const done = await cancel(true);
    if (done.status !== 200) {
      state.problems.push(`settlement batch ${batchId}: the confirmed cancel was answered ${done.status} ${JSON.stringify(done.body)}`);
      return false;
    }
    state.cancelled!.push(...references);
    return true;
  }

  return {
    state,
    /** A round that must not stop the campaign: a failure is a problem to report. */
    async settle(opts: RoundOptions): Promise<void> {
      try {
        await round(opts);
      } catch (err) {
        state.problems.push(`settlement round (${opts.why}): ${err instanceof Error ? err.message : String(err)}`);
      }
    },
    /** The bank statement's debits for every paid line (a file of its own, `type` DR). */
    async importDebits(): Promise<void> {
      if (state.paid.length === 0) return;
      const csv = ['utr,amount,value_date,narration,type', ...state.paid.map((p) => `${p.utr},${plainRupees(p.amountPaise)},${p.paidOn},NEFT ${p.reference},DR`)].join('\r\n');
      await callRetrying(t, 'finance', 'POST', '/finance/bank-statements', { fileName: `campaign-${seed}-debits.csv`, csv });
    },
  };
}

interface RoundOptions { from: string; failOne: boolean; why: string; cancelAfterDownload?: true }

/** Past a worker killed mid-freeze (its activity is retried after 30 s) and a Temporal restart. */
async function until<T>(what: string, probe: () => Promise<T | null>, ms = 180_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(300);
  }
}
