/** The one classifier at the provider boundary: every failed Razorpay call becomes `rejected`
 * (the provider said no, with a code) or `unknown` (we cannot know whether it acted). Callers
 * branch on the outcome type, never on message text. */
import type { MoneyOutcome, ProviderError } from './types';
import { providerErrorBodySchema } from './schemas';
import type { CallContext } from './sdkClient';

export type FailedOutcome = Exclude<MoneyOutcome<never>, { type: 'accepted' }>;
type TransportError = NonNullable<CallContext['transportError']>;

/** A 4xx without a provider error code: the provider broke its contract or we called a wrong URL.
 * Never guess here; fail loudly. */
export class ProviderContractError extends Error {
  override name = 'ProviderContractError';
  constructor(readonly httpStatus: number, readonly body: unknown) {
    super(`HTTP ${httpStatus} from Razorpay without a provider error code`);
  }
}

/** The SDK (axios builds) rejects HTTP errors with this plain object, not an Error. */
function isSdkHttpError(failure: unknown): failure is { statusCode: unknown; error: unknown } {
  return typeof failure === 'object' && failure !== null && !(failure instanceof Error) && 'statusCode' in failure;
}

const TIMEOUT_CODES = new Set(['ECONNABORTED', 'ETIMEDOUT', 'ERR_CANCELED']);
const CONNECTION_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ERR_BAD_RESPONSE']);

function classifyTransport(transport: TransportError): FailedOutcome {
  const detail = `${transport.code ?? 'no code'}: ${transport.message}`;
  if ((transport.code && TIMEOUT_CODES.has(transport.code)) || /timeout/i.test(transport.message)) return { type: 'unknown', reason: 'timeout', httpStatus: null, detail };
  if ((transport.code && CONNECTION_CODES.has(transport.code)) || /socket hang up|reset/i.test(transport.message)) return { type: 'unknown', reason: 'connection', httpStatus: null, detail };
  return { type: 'unknown', reason: 'no_response', httpStatus: null, detail };
}

export function classifyHttpError(status: number, errorBody: unknown): FailedOutcome {
  const describe = (): string => {
    const parsed = providerErrorBodySchema.safeParse({ error: errorBody });
    return parsed.success ? `${parsed.data.error.code} ${parsed.data.error.description}` : `HTTP ${status}`;
  };
  if (status === 429) return { type: 'unknown', reason: 'rate_limited', httpStatus: status, detail: describe() };
  // Documented for idempotent direct transfers: the first request with this key is still running.
  if (status === 409) return { type: 'unknown', reason: 'in_progress', httpStatus: status, detail: describe() };
  if (status >= 400 && status < 500) {
    const parsed = providerErrorBodySchema.safeParse({ error: errorBody });
    if (!parsed.success) throw new ProviderContractError(status, errorBody);
    const error: ProviderError = parsed.data.error;
    return { type: 'rejected', httpStatus: status, error };
  }
  return { type: 'unknown', reason: 'server_error', httpStatus: status, detail: describe() };
}

/**
 * `failure` is whatever the SDK rejected with; `transport` is what our axios interceptor saw when
 * there was no HTTP response (the SDK's normaliser then crashes with a TypeError and loses it).
 * Errors that are neither (e.g. the SDK's own argument checks) are rethrown: they are our bugs.
 */
export function classifyFailure(failure: unknown, transport: TransportError | null): FailedOutcome {
  if (isSdkHttpError(failure)) {
    const status = Number(failure.statusCode);
    if (!Number.isInteger(status) || status <= 0) return { type: 'unknown', reason: 'no_response', httpStatus: null, detail: 'SDK error without an HTTP status' };
    return classifyHttpError(status, failure.error);
  }
  if (transport) return classifyTransport(transport);
  if (failure instanceof TypeError) return { type: 'unknown', reason: 'no_response', httpStatus: null, detail: failure.message };
  throw failure;
}
