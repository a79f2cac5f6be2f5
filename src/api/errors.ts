/** The central HTTP error handler: every failure leaves the API
 * as `{ error: { code, message, details? } }` with a deliberate status. */
import type { FastifyError, FastifyInstance } from 'fastify';
import { ZodError } from 'zod';
import { AppError } from '../appError';
import { logger } from '../logger';

export { AppError };

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | AppError | ZodError | Error, request, reply) => {
    if (err instanceof AppError) {
      return reply.status(err.httpStatus).send({ error: { code: err.code, message: err.message, details: err.details } });
    }
    if (err instanceof ZodError) {
      return reply.status(400).send({ error: { code: 'invalid_request', message: 'request failed validation', details: err.issues } });
    }
    const status = (err as FastifyError).statusCode;
    if (status && status >= 400 && status < 500) {
      return reply.status(status).send({ error: { code: (err as FastifyError).code ?? 'bad_request', message: err.message } });
    }
    logger.error({ err, url: request.url, method: request.method }, 'unhandled API error');
    return reply.status(500).send({ error: { code: 'internal', message: 'internal error' } });
  });
  app.setNotFoundHandler((request, reply) => reply.status(404).send({ error: { code: 'not_found', message: `no route ${request.method} ${request.url}` } }));
}
