/** Runs one API call through the rate limiter (a 429 before anything else, counted as
 * `ratelimit:<class>`), then the fault injector: 5xx and 429 before any effect; latency at the
 * point the handler chooses (after an idempotency key is claimed, so a concurrent retry sees 409);
 * and after the effect, a dropped connection or an answer held past the client's timeout. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxContext } from '../context';
import type { FaultEndpoint } from '../control';
import { RazorpayApiError, rateLimited, serverError } from '../errors';
import { callClassOf } from '../rateLimit';
import { logger } from '../../logger';

export interface Answer {
  status: number;
  body: unknown;
}

export type Handler = (hold: () => Promise<void>) => Answer | Promise<Answer>;

/** Resolves after `ms`, or at once when the sandbox closes. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export function answerOf(err: unknown): Answer {
  if (err instanceof RazorpayApiError) return { status: err.httpStatus, body: err.body() };
  logger.error({ err }, 'sandbox handler failed');
  const e = serverError();
  return { status: e.httpStatus, body: e.body() };
}

export async function runGuarded(
  ctx: SandboxContext,
  signal: AbortSignal,
  endpoint: Exclude<FaultEndpoint, '*'>,
  request: FastifyRequest,
  reply: FastifyReply,
  handler: Handler,
): Promise<void> {
  const callClass = callClassOf(endpoint);
  if (ctx.rateLimit.enabled && !ctx.rateLimit.take(basicAuthKeyId(request), callClass)) {
    ctx.faults.onRefused(endpoint, `ratelimit:${callClass}`);
    return sendAnswer(reply, answerOf(rateLimited()));
  }
  const fault = ctx.faults.onCall(endpoint, request.url);
  if (fault?.kind === 'server_error_before') return sendAnswer(reply, answerOf(serverError()));
  if (fault?.kind === 'rate_limited') return sendAnswer(reply, answerOf(rateLimited()));
  const hold = fault?.kind === 'latency' ? () => sleep(fault.ms, signal) : async () => undefined;
  let answer: Answer;
  try {
    answer = await handler(hold);
  } catch (err) {
    answer = answerOf(err);
  }
  if (fault?.kind === 'drop_after_commit') {
    reply.hijack();
    request.raw.socket.destroy();
    return;
  }
  if (fault?.kind === 'delay_after_commit') await sleep(fault.ms, signal);
  return sendAnswer(reply, answer);
}

/** The key id of the request's HTTP Basic credential (the API's onRequest hook has checked it). */
function basicAuthKeyId(request: FastifyRequest): string {
  const header = request.headers.authorization ?? '';
  const decoded = Buffer.from(header.replace(/^Basic /, ''), 'base64').toString();
  return decoded.slice(0, Math.max(0, decoded.indexOf(':')));
}

function sendAnswer(reply: FastifyReply, answer: Answer): void {
  if (reply.raw.destroyed || reply.sent) return;
  void reply.code(answer.status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(answer.body));
}
