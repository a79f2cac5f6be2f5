/** The workflow bundle's entry: every workflow type the worker serves. */
export { probeWorkflow } from './probe';
export { payoutWorkflow } from './payout';
export { payoutBatchWorkflow } from './payoutBatch';
export { payoutSweepWorkflow } from './payoutSweep';
export { missedWebhookSweepWorkflow } from './missedWebhookSweep';
export { reconWorkflow, scheduledReconWorkflow } from './recon';
export { splitTransferSweepWorkflow } from './splitTransfer';
export { settlementRunWorkflow } from './settlement';
