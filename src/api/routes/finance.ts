/** Finance API (role `finance`): start a reconciliation run and read its progress, list
 * and resolve exceptions, upload a bank statement (text/csv body, or JSON { fileName, csv }). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { csvSafe } from '../../domain/schemas';
import { reconWindowSchema } from '../../contracts/reconWindow';
import { importBankStatement } from '../../recon/bankStatementImport';
import { exceptionFilterSchema, listExceptions, resolveException } from '../../recon/exceptions';
import type { ReconStarter } from '../../recon/temporal';
import type { Config } from '../../config/config';
import type { Db } from '../../db/pool';
import { auditActor, requires } from '../../auth/routeAuth';
import { AppError } from '../errors';
import { documented } from '../openapi';

export interface FinanceDeps { config: Config; db: Db; reconStarter?: ReconStarter }

const workflowIdParams = z.object({ workflowId: z.string().regex(/^recon-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}$/, 'not a recon workflow id') });
const exceptionIdParams = z.object({ id: z.coerce.number().int().positive() });
// The exceptions CSV carries the note.
const resolveBody = z.object({ note: csvSafe(z.string().trim().min(3, 'a resolution note is required').max(2000)) });
const bankJsonBody = z.object({ fileName: z.string().max(200).optional(), csv: z.string().min(1) });

export async function financeRoutes(app: FastifyInstance, deps: FinanceDeps): Promise<void> {
  // Bank statements arrive as CSV bodies; this parser is scoped to the finance routes only.
  app.addContentTypeParser(['text/csv', 'application/csv'], { parseAs: 'string' }, (_req, body, done) => done(null, body));

  app.post('/finance/recon/runs', documented(requires('finance'), { summary: 'Start (or join) a reconciliation run for an IST window', tags: ['finance'], body: reconWindowSchema, success: 202 }), async (request, reply) => {
    const window = reconWindowSchema.parse(request.body ?? {});
    if (!deps.reconStarter) throw new AppError(503, 'recon_unavailable', 'reconciliation runs are not wired in this process');
    const started = await deps.reconStarter.start(window);
    request.log.debug({ ...started, actor: auditActor(request) }, 'recon run requested');
    return reply.status(202).send(started);
  });

  app.get('/finance/recon/runs/:workflowId', documented(requires('finance'), { summary: "A recon run's live progress and its recorded runs", tags: ['finance'], params: workflowIdParams }), async (request) => {
    const { workflowId } = workflowIdParams.parse(request.params);
    const { rows } = await deps.db.query(
      `SELECT run_id, status, to_char(from_day, 'YYYY-MM-DD') AS from, to_char(to_day, 'YYYY-MM-DD') AS to, to_char(as_of_day, 'YYYY-MM-DD') AS as_of,
              rows_fetched, summary, started_at, finished_at
       FROM recon_runs WHERE workflow_id = $1 ORDER BY started_at DESC LIMIT 20`,
      [workflowId],
    );
    const live = deps.reconStarter ? await deps.reconStarter.progress(workflowId) : null;
    if (rows.length === 0 && !live) throw new AppError(404, 'not_found', `no recon run ${workflowId}`);
    return { workflowId, live, runs: rows };
  });

  app.get('/finance/recon/exceptions', documented(requires('finance'), { summary: 'Recon exceptions by status, class, reason, severity and day', tags: ['finance'], querystring: exceptionFilterSchema }), async (request) => {
    const filter = exceptionFilterSchema.parse(request.query ?? {});
    const exceptions = await listExceptions(deps.db, filter);
    return { exceptions, next: exceptions.length === filter.limit ? exceptions[exceptions.length - 1]!.id : null };
  });

  app.post('/finance/recon/exceptions/:id/resolve', documented(requires('finance'), { summary: 'Resolve an exception with a note (audited)', tags: ['finance'], params: exceptionIdParams, body: resolveBody }), async (request) => {
    const { id } = exceptionIdParams.parse(request.params);
    const { note } = resolveBody.parse(request.body ?? {});
    const result = await resolveException(deps.db, id, auditActor(request), note);
    if (result.type === 'not_found') throw new AppError(404, 'not_found', `no recon exception ${id}`);
    if (result.type === 'already_resolved') throw new AppError(409, 'already_resolved', `recon exception ${id} is already resolved`, result.exception);
    return result.exception;
  });

  app.post('/finance/bank-statements', { ...documented(requires('finance'), { summary: 'Import a bank statement CSV (text/csv, or JSON { fileName, csv }); bad lines are listed and nothing is imported', tags: ['finance'], body: bankJsonBody, bodyTypes: ['text/csv', 'application/json'], success: 201 }), bodyLimit: deps.config.API_FILE_BODY_LIMIT_BYTES }, async (request, reply) => {
    const body = typeof request.body === 'string' ? { csv: request.body, fileName: undefined } : bankJsonBody.parse(request.body ?? {});
    const result = await importBankStatement(deps.db, { text: body.csv, fileName: body.fileName, actor: auditActor(request) });
    if (!result.ok) throw new AppError(400, 'invalid_bank_statement', 'the bank statement has bad lines; nothing was imported', { problems: result.problems });
    return reply.status(result.duplicateFile ? 200 : 201).send(result);
  });
}
