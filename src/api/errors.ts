/** The central HTTP error handler: every failure leaves the API as
 * `{ error: { code, message, details? } }` with a deliberate status and one of the app's codes.
 * Fastify's own errors (bad JSON, wrong media type, a URL it cannot route) are mapped to ours:
 * callers never see an `FST_…` code or Fastify's error shape. */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { ZodError } from 'zod';
import { AppError } from '../appError';
import { logger } from '../logger';

export { AppError };

/** Fastify's codes, as the app names them. */
const FRAMEWORK_CODES: Record<string, { status: number; code: string; message?: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'malformed_json', message: 'the body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'malformed_json', message: 'the body is empty but says it is JSON' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'unsupported_media_type', message: 'send application/json (or text/csv for bank statements)' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'bad_request', message: 'the Content-Length does not match the body' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'body_too_large', message: 'the body is larger than the API accepts' },
  FST_ERR_BAD_URL: { status: 400, code: 'bad_url', message: 'the URL is not valid' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: 'url_too_long', message: 'a path parameter is longer than any id the API has' },
  FST_ERR_ASYNC_CONSTRAINT: { status: 400, code: 'bad_request' },
};

function send(reply: FastifyReply, status: number, code: string, message: string, details?: unknown) {
  return reply.status(status).send({ error: details === undefined ? { code, message } : { code, message, details } });
}

/** Errors Fastify raises before routing (passed to the Fastify constructor). */
export const frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']> = (err, _request: FastifyRequest, reply: FastifyReply) => {
  const mapped = FRAMEWORK_CODES[(err as FastifyError).code];
  return send(reply, mapped?.status ?? 400, mapped?.code ?? 'bad_request', mapped?.message ?? 'the request could not be routed');
};

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | AppError | ZodError | Error, request, reply) => {
    if (err instanceof AppError) {
      // A refusal that knows when to come back says so the way HTTP clients read it.
      const retryAfter = (err.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
      if (typeof retryAfter === 'number' && (err.httpStatus === 429 || err.httpStatus === 503)) reply.header('retry-after', String(retryAfter));
      return send(reply, err.httpStatus, err.code, err.message, err.details);
    }
    if (err instanceof ZodError) return send(reply, 400, 'invalid_request', 'request failed validation', err.issues);
    const fastifyCode = (err as FastifyError).code;
    const mapped = fastifyCode ? FRAMEWORK_CODES[fastifyCode] : undefined;
    if (mapped) return send(reply, mapped.status, mapped.code, mapped.message ?? err.message);
    const status = (err as FastifyError).statusCode;
    if (status && status >= 400 && status < 500) return send(reply, status, 'bad_request', err.message);
    logger.error({ err, url: request.url, method: request.method }, 'unhandled API error');
    return send(reply, 500, 'internal', 'internal error');
  });
  app.setNotFoundHandler((request, reply) => send(reply, 404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`));
}
