/** Finance exports (role `finance`): the recon exceptions as a CSV file for spreadsheets and the
 * books. The same filters as the JSON listing (GET /finance/recon/exceptions) plus `severity`;
 * the whole filtered set in one file, not a page. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Db } from '../../db/pool';
import { exceptionFilterSchema } from '../../recon/exceptions';
import { exceptionsCsv, listAllExceptions, SEVERITIES } from '../../reports/exceptionsCsv';
import { requires } from '../../auth/routeAuth';
import { documented } from '../openapi';

const exportFilterSchema = exceptionFilterSchema.omit({ limit: true, after: true }).extend({ severity: z.enum(SEVERITIES).optional() });


export async function financeExportRoutes(app: FastifyInstance, deps: { db: Db }): Promise<void> {
  app.get('/finance/recon/exceptions.csv', documented(requires('finance'), {
    summary: 'Recon exceptions as a CSV file (text/csv): one header row, rupees with Indian grouping beside paise, UTR and gateway ids',
    tags: ['finance'],
    querystring: exportFilterSchema,
  }), async (request, reply) => {
    const filter = exportFilterSchema.parse(request.query ?? {});
    // Built whole before the first byte: a failure answers in the error envelope, never as a
    // truncated file that looks complete.
    const rows = await listAllExceptions(deps.db, filter);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="recon-exceptions.csv"')
      .send(exceptionsCsv(rows));
  });
}
