/** Finance's close after the campaign: the sandbox clock moves past T+2, Razorpay settles (with the
 * planted discrepancies), finance imports the bank statement and runs recon over the campaign's
 * days through the finance API. Every open exception must be one the seed planted, with its reason. */
import { istDateOf, settlementDueDate } from '../../src/domain/calendar';
import type { Topology } from '../../src/devstack/topologyTypes';
import { callRetrying, sleep } from './calls';
import type { CampaignPlan } from './plan';
import type { OrderHistory } from './workload';

export interface ReconOutcome {
  window: { from: string; to: string };
  settlements: number;
  matched: number;
  exceptions: Array<{ reason: string; class: string; entityId: string | null; orderId: string | null; planted: boolean }>;
  /** Planted exceptions recon did not raise. */
  missing: string[];
  violations: string[];
}

export async function closeTheBooks(t: Topology, plan: CampaignPlan, histories: OrderHistory[], campaignStart: Date, log: (line: string) => void): Promise<ReconOutcome> {
  const from = istDateOf(campaignStart);
  const lastCapture = istDateOf(new Date(await t.sandbox.now()));
  const due = settlementDueDate(lastCapture);
  const heldPayments = new Map<string, string>();
  for (const p of plan.planted) {
    if (p.kind !== 'on_hold') continue;
    const h = histories[p.orderIndex]!;
    const paymentId = h.paymentIds[h.paymentIds.length - 1];
    if (paymentId) {
      await t.sandbox.putOnHold(paymentId);
      heldPayments.set(paymentId, h.orderId ?? '');
    }
  }
  try {
    await t.sandbox.setClock(Date.parse(`${due}T06:30:00Z`)); // noon IST on the due day
    for (const p of plan.planted) {
      if (p.kind === 'adjustment') await t.sandbox.injectAdjustment({ amountPaise: p.amountPaise, description: `fault campaign seed ${plan.seed}: planted adjustment`, date: due });
    }
    const settled = await t.sandbox.runSettlements({ date: due });
    log(`recon: the sandbox clock moves to ${due}; Razorpay settles ${settled.length} settlement(s)`);
    const csv = await t.sandbox.bankStatementCsv({ from, to: due });
    await callRetrying(t, 'finance', 'POST', '/finance/bank-statements', { fileName: `campaign-${plan.seed}-bank.csv`, csv });
    const { body: started } = await callRetrying(t, 'finance', 'POST', '/finance/recon/runs', { from, to: due, asOf: due });
    const summary = await waitForRun(t, started.workflowId as string);
    const exceptions: ReconOutcome['exceptions'] = [];
    for (let after = 0; ;) {
      const { body } = await callRetrying(t, 'finance', 'GET', `/finance/recon/exceptions?status=open&from=${from}&to=${due}&limit=1000&after=${after}`);
      const page = body.exceptions as Array<{ id: number; reason: string; class: string; entityId: string | null; orderId: string | null }>;
      for (const e of page) exceptions.push({ reason: e.reason, class: e.class, entityId: e.entityId, orderId: e.orderId, planted: false });
      if (page.length < 1000) break;
      after = page[page.length - 1]!.id;
    }
    // Each planted discrepancy claims one exception of its reason (the held payment by its id).
    const missing: string[] = [];
    for (const p of plan.planted) {
      const forged = p.kind === 'forged_capture' ? histories[p.orderIndex]?.forgedPaymentId : undefined;
      const claim = exceptions.find((e) => !e.planted && e.reason === p.reason
        && (p.kind === 'adjustment' || (p.kind === 'on_hold' ? e.entityId !== null && heldPayments.has(e.entityId) : e.entityId === forged)));
      if (claim) claim.planted = true;
      else missing.push(`${p.reason} (${p.kind})`);
    }
    // A Dashboard refund after the payout raises refund-outside-app (the vendor owes it back): planned.
    // (A refund seen while the payout's request was in flight raised it too, before the transfer turned out not to pay.)
    // Likewise a batched order's (issue 36), before or after its batch paid.
    const refundedOutside = new Set(histories.filter((h) => (h.planned.expect.transfers === 'direct' || h.planned.expect.transfers === 'batched') && h.planned.expect.refundedOutside && h.orderId).map((h) => h.orderId!));
    // A batched order's refund recorded as owed back must be raised (the batch's fixed sum paid it).
    for (const h of histories.filter((x) => x.batch?.owedBack)) {
      const claim = exceptions.find((e) => !e.planted && e.reason === 'refund-outside-app' && e.orderId === h.orderId);
      if (claim) claim.planted = true;
      else missing.push(`refund-outside-app (order ${h.orderId ?? '?'}, refunded from the Dashboard after its batch closed)`);
    }
    for (const e of exceptions) if (!e.planted && e.reason === 'refund-outside-app' && e.orderId !== null && refundedOutside.has(e.orderId)) e.planted = true;
    // A Dashboard refund whose webhooks were all given up is known to recon only.
    for (const refundId of histories.flatMap((h) => h.unrecordedRefundIds ?? [])) {
      const claim = exceptions.find((e) => !e.planted && e.reason === 'refund-not-in-app' && e.entityId === refundId);
      if (claim) claim.planted = true;
      else missing.push(`refund-not-in-app (Dashboard refund ${refundId}, its webhooks lost)`);
    }
    // A Dashboard reversal whose webhook was lost is known to recon only: it must raise it.
    for (const h of histories.filter((x) => x.reversed && !x.reversed.seen)) {
      const claim = exceptions.find((e) => !e.planted && e.reason === 'reversal-not-in-app' && e.entityId === h.reversed!.reversalId);
      if (claim) claim.planted = true;
      else missing.push(`reversal-not-in-app (reversal ${h.reversed!.reversalId} of ${h.reversed!.transferId}, its webhook lost)`);
    }
    const violations = [
      ...exceptions.filter((e) => !e.planted).map((e) => `recon exception not planted: ${e.reason} (${e.class}) on ${e.entityId ?? '?'}${e.orderId ? `, order ${e.orderId}` : ''}`),
      ...missing.map((m) => `planted discrepancy not raised by recon: ${m}`),
    ];
    return { window: { from, to: due }, settlements: settled.length, matched: summary.matched, exceptions, missing, violations };
  } finally {
    await t.sandbox.setClock(null);
  }
}

async function waitForRun(t: Topology, workflowId: string): Promise<{ matched: number; exceptions: number }> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { body } = await callRetrying(t, 'finance', 'GET', `/finance/recon/runs/${workflowId}`);
    const run = (body.runs as Array<{ status: string; summary: { matched: number; exceptions: number } | null }>)[0];
    if (body.live && body.live.status !== 'RUNNING') {
      if (body.live.status !== 'COMPLETED' || run?.status !== 'completed' || !run.summary) throw new Error(`recon run ${workflowId} ended ${body.live.status}`);
      return run.summary;
    }
    if (Date.now() > deadline) throw new Error(`recon run ${workflowId} did not finish in 300 s`);
    await sleep(500);
  }
}
