/** Vendor statements: a vendor key reads its own, finance reads any vendor's. JSON (amounts in paise,
 * how each order was paid, totals by rail) or the same statement as a CSV file (rupees with Indian
 * grouping). */
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/pool';
import { mayReadVendorStatement } from '../../auth/roles';
import { principalOf, requires } from '../../auth/routeAuth';
import { statementParamsSchema, statementQuerySchema } from '../../statements/contract';
import { readVendorStatement } from '../../statements/readModel';
import { statementCsv, statementFileName } from '../../statements/statementCsv';
import { AppError } from '../errors';
import { documented } from '../openapi';

export async function statementRoutes(app: FastifyInstance, deps: { db: Db }): Promise<void> {
  app.get('/v1/vendors/:vendorId/statement', documented(requires('vendor', 'finance'), {
    summary: "A vendor's statement for an IST period: every order paid in it with how it was paid (transfer and UTR, split, settlement batch line and UTR, cash kept, still owed, employer direct), refunds clawed back, totals by rail; a vendor key reads its own only",
    description: 'format=csv answers text/csv (rupees with Indian grouping, one total row per rail); the default is JSON with amounts in paise.',
    tags: ['statements'],
    params: statementParamsSchema,
    querystring: statementQuerySchema,
  }), async (request, reply) => {
    const { vendorId } = statementParamsSchema.parse(request.params);
    // Before anything is read: another vendor's key learns nothing, not even whether the vendor exists.
    if (!mayReadVendorStatement(principalOf(request).roles, vendorId)) {
      throw new AppError(403, 'forbidden', `a vendor key reads only its own statement; this one is not vendor:${vendorId}`);
    }
    const { format, ...period } = statementQuerySchema.parse(request.query ?? {});
    const statement = await readVendorStatement(deps.db, vendorId, period);
    if (!statement) throw new AppError(404, 'vendor_not_found', `vendor ${vendorId} does not exist`);
    if (format === 'json') return statement;
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${statementFileName(statement)}"`)
      .send(statementCsv(statement));
  });
}
