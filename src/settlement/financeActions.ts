/** What finance's two doors to settlement — the API (src/api/routes/settlement.ts) and the console
 * (src/console/settlementPages.ts) — share: the shape of each request, the run starter, waking a run
 * after a decision, and importing the bank's response file. One definition each, so a page and an API
 * call refuse the same input with the same words. */
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { AppError } from '../appError';
import type { Config } from '../config/config';
import type { Db } from '../db/pool';
import { csvSafe, isoDateSchema, paiseSchema } from '../domain/schemas';
import { utrSchema } from '../recon/bankStatementCsv';
import { parseBankResponse } from './bankResponse';
import { SETTLEMENT_REFERENCE } from './references';
import { importBankResponse } from './repository';
import { SETTLEMENT_WORKFLOW_ID, temporalSettlementStarter, type SettlementStarter } from './temporal';

export const settlementVendorId = z.string().trim().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a vendor id: letters, digits, _ and - (at most 64)');
export const settlementRunBody = z.object({
  from: isoDateSchema,
  to: isoDateSchema,
  vendorIds: z.array(settlementVendorId).min(1).max(500).optional(),
}).strict().refine((b) => b.from <= b.to, { message: 'from must not be after to', path: ['to'] });
export const settlementWorkflowIdSchema = z.string().regex(SETTLEMENT_WORKFLOW_ID, 'not a settlement workflow id');
export const settlementBatchIdSchema = z.string().regex(/^stb_[A-Za-z0-9]{14}$/, 'a settlement batch id: stb_ and 14 letters or digits');
export const settlementBatchStatusSchema = z.enum(['open', 'closed', 'cancelled']);
export const settlementReferenceSchema = z.string().trim().toUpperCase().pipe(z.string().regex(SETTLEMENT_REFERENCE, 'a settlement line reference, e.g. STABCDEFGH0001'));
export const paidBody = z.object({ utr: utrSchema, paidOn: isoDateSchema, amountPaise: paiseSchema.positive().optional() }).strict();
export const failedBody = z.object({ reason: csvSafe(z.string().trim().min(3, 'say why the bank did not pay').max(500)), amountPaise: paiseSchema.positive().optional() }).strict();
/** `confirmNotSubmitted`: finance's word that the batch's downloaded bank file never reached the
 * bank; needed (and audited) to cancel a batch once its file was downloaded. */
export const cancelBody = z.object({ reason: z.string().trim().min(3, 'a reason is required').max(500), confirmNotSubmitted: z.boolean().optional() }).strict();

export interface SettlementDeps { temporal?: Client | undefined; config: Pick<Config, 'TEMPORAL_TASK_QUEUE'> }

export function settlementStarterOf(deps: SettlementDeps): SettlementStarter {
  if (!deps.temporal) throw new AppError(503, 'settlement_unavailable', 'settlement runs are not wired in this process (no Temporal client)');
  return temporalSettlementStarter(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE);
}

/** Wakes the batch's run so the Web UI shows the decision now (best effort; it rechecks hourly). */
export async function tellRun(deps: SettlementDeps & { db: Pick<Db, 'query'> }, batchIds: Iterable<string>): Promise<void> {
  if (!deps.temporal) return;
  const starter = settlementStarterOf(deps);
  for (const batchId of new Set(batchIds)) {
    const { rows: [b] } = await deps.db.query<{ workflow_id: string }>('SELECT workflow_id FROM settlement_batches WHERE id = $1', [batchId]);
    if (b) await starter.changed(b.workflow_id);
  }
}

/** The bank's response file, applied whole or not at all; a malformed one is refused with each bad line named. */
export async function importResponseFile(deps: { db: Db }, body: { csv: string; fileName?: string | undefined }, actor: string) {
  const parsed = parseBankResponse(body.csv);
  if (!parsed.ok) throw new AppError(400, 'invalid_bank_response', 'the bank response file has bad lines; nothing was imported', { problems: parsed.problems });
  return importBankResponse(deps.db, { rows: parsed.rows, fileName: body.fileName, actor });
}
