/** Offline settlement (role `finance`, issue 20): start a settlement run for a period, read its batch,
 * download the bank bulk-payment file, record each line paid (the bank's UTR) or failed, import the
 * bank's response file, cancel a batch before any line is paid (after its bank file was downloaded,
 * only with finance's word that the file never reached the bank). Every decision is audited with its
 * actor; a refused one names the line and field and changes nothing. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { auditActor, requires } from '../../auth/routeAuth';
import { keyringFromConfig } from '../../banking/keyring';
import { bankFileForBatch } from '../../settlement/bankFileDownload';
import {
  cancelBody, failedBody, importResponseFile, paidBody, settlementBatchIdSchema, settlementBatchStatusSchema, settlementReferenceSchema, settlementRunBody, settlementStarterOf, settlementWorkflowIdSchema, tellRun,
} from '../../settlement/financeActions';
import { cancelBatch, listBatches, readBatch, recordLineFailed, recordLinePaid } from '../../settlement/repository';
import type { ApiDeps } from '../deps';
import { AppError } from '../errors';
import { documented } from '../openapi';

const workflowParams = z.object({ workflowId: settlementWorkflowIdSchema });
const batchParams = z.object({ batchId: settlementBatchIdSchema });
const lineParams = z.object({ reference: settlementReferenceSchema });
const listQuery = z.object({ status: settlementBatchStatusSchema.optional(), limit: z.coerce.number().int().min(1).max(200).default(50) }).strict();
const responseJsonBody = z.object({ fileName: z.string().max(200).optional(), csv: z.string().min(1) }).strict();

export async function settlementRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.addContentTypeParser(['text/csv', 'application/csv'], { parseAs: 'string' }, (_req, body, done) => done(null, body));
  const keyring = keyringFromConfig(deps.config);

  app.post('/finance/settlement/runs', documented(requires('finance'), { summary: "Start (or join) a settlement run: freeze a period's open offline lines into a batch, one line per vendor", tags: ['finance'], body: settlementRunBody, success: 202 }), async (request, reply) => {
    const body = settlementRunBody.parse(request.body ?? {});
    const started = await settlementStarterOf(deps).start({ from: body.from, to: body.to, vendorIds: body.vendorIds ? [...new Set(body.vendorIds)].sort() : null, actor: auditActor(request) });
    return reply.status(202).send(started);
  });

  app.get('/finance/settlement/runs/:workflowId', documented(requires('finance'), { summary: "A settlement run's live progress and the batches it froze", tags: ['finance'], params: workflowParams }), async (request) => {
    const { workflowId } = workflowParams.parse(request.params);
    const live = await settlementStarterOf(deps).progress(workflowId);
    const { rows } = await deps.db.query<{ id: string }>('SELECT id FROM settlement_batches WHERE workflow_id = $1 ORDER BY created_at DESC LIMIT 20', [workflowId]);
    if (!live && rows.length === 0) throw new AppError(404, 'not_found', `no settlement run ${workflowId}`);
    return { workflowId, live, batchIds: rows.map((r) => r.id) };
  });

  app.get('/finance/settlement/batches', documented(requires('finance'), { summary: 'Settlement batches, newest first, by status', tags: ['finance'], querystring: listQuery }), async (request) => {
    return { batches: await listBatches(deps.db, listQuery.parse(request.query ?? {})) };
  });

  app.get('/finance/settlement/batches/:batchId', documented(requires('finance'), { summary: 'A settlement batch: its lines (account numbers masked), totals and the vendors carried forward', tags: ['finance'], params: batchParams }), async (request) => {
    const { batchId } = batchParams.parse(request.params);
    const batch = await readBatch(deps.db, batchId);
    if (!batch) throw new AppError(404, 'not_found', `no settlement batch ${batchId}`);
    return batch;
  });

  app.get('/finance/settlement/batches/:batchId/bank-file', documented(requires('finance'), { summary: "The batch's bank bulk-payment file (text/csv) for its open lines; the only place account numbers are shown (audited)", tags: ['finance'], params: batchParams }), async (request, reply) => {
    const { batchId } = batchParams.parse(request.params);
    const file = await bankFileForBatch(deps.db, keyring, batchId, auditActor(request));
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${file.fileName}"`).header('cache-control', 'no-store').header('x-content-sha256', file.sha256).send(file.csv);
  });

  app.post('/finance/settlement/batches/:batchId/cancel', documented(requires('finance'), {
    summary: 'Cancel a batch none of whose lines is paid: its lines return to the open offline ledger', tags: ['finance'], params: batchParams, body: cancelBody,
    description: 'Once its bank file was downloaded the bank may be paying its lines, so the cancel is refused (409 settlement_batch_file_downloaded): record each line paid or failed instead, '
      + 'or, if the file was never submitted to the bank, say so with `confirmNotSubmitted: true` (audited with the downloads).',
  }), async (request) => {
    const { batchId } = batchParams.parse(request.params);
    const { reason, confirmNotSubmitted } = cancelBody.parse(request.body ?? {});
    const batch = await cancelBatch(deps.db, { batchId, reason, confirmNotSubmitted, actor: auditActor(request) });
    await tellRun(deps, [batchId]);
    return batch;
  });

  app.post('/finance/settlement/lines/:reference/paid', documented(requires('finance'), { summary: "Record a line paid with the bank's UTR (a UTR pays one line; the amount, if given, must be the line's)", tags: ['finance'], params: lineParams, body: paidBody }), async (request) => {
    const { reference } = lineParams.parse(request.params);
    const body = paidBody.parse(request.body ?? {});
    const result = await recordLinePaid(deps.db, { reference, ...body, actor: auditActor(request) });
    await tellRun(deps, [result.batchId]);
    return result;
  });

  app.post('/finance/settlement/lines/:reference/failed', documented(requires('finance'), { summary: 'Record that the bank did not pay a line: its offline lines are open again', tags: ['finance'], params: lineParams, body: failedBody }), async (request) => {
    const { reference } = lineParams.parse(request.params);
    const body = failedBody.parse(request.body ?? {});
    const result = await recordLineFailed(deps.db, { reference, ...body, actor: auditActor(request) });
    await tellRun(deps, [result.batchId]);
    return result;
  });

  app.post('/finance/settlement/bank-responses', { ...documented(requires('finance'), { summary: "Import the bank's response file (text/csv, or JSON { fileName, csv }): reference,status,utr,value_date,amount[,reason]; all rows or none", tags: ['finance'], body: responseJsonBody, bodyTypes: ['text/csv', 'application/json'] }), bodyLimit: deps.config.API_FILE_BODY_LIMIT_BYTES }, async (request) => {
    const body = typeof request.body === 'string' ? { csv: request.body, fileName: undefined } : responseJsonBody.parse(request.body ?? {});
    const results = await importResponseFile(deps, body, auditActor(request));
    await tellRun(deps, results.map((r) => r.batchId));
    return { results };
  });
}
