/** The official razorpay SDK, configured in this one place: base URL override (the SDK hard-codes
 * https://api.razorpay.com), a timeout on every call (the SDK sets none), per-call headers the SDK
 * would drop (X-Transfer-Idempotency), and capture of the transport error that the SDK's error
 * normaliser loses when there is no HTTP response. All of it goes through the SDK's own axios
 * instance (`instance.api.rq`), so every call is still an ordinary SDK call. */
import { AsyncLocalStorage } from 'node:async_hooks';
import Razorpay from 'razorpay';
import type { Config } from '../config/config';

export type GatewayConfig = Pick<Config, 'RAZORPAY_KEY_ID' | 'RAZORPAY_KEY_SECRET' | 'RAZORPAY_BASE_URL' | 'GATEWAY_TIMEOUT_MS' | 'RAZORPAY_PLATFORM_ACCOUNT_ID'>;

/** What we know about one SDK call beyond what the SDK reports. */
export interface CallContext {
  headers: Record<string, string>;
  /** Set when the request got no HTTP response (timeout, reset, refused). */
  transportError?: { code: string | null; message: string };
}

/** The part of the SDK's axios instance we touch (axios is the SDK's dependency, not ours). */
interface SdkAxiosConfig { headers: { set?(name: string, value: string): void; [name: string]: unknown }; [key: symbol]: unknown }
interface SdkAxiosInstance {
  defaults: { baseURL?: string; timeout?: number };
  interceptors: {
    request: { use(onFulfilled: (c: SdkAxiosConfig) => SdkAxiosConfig): number };
    response: { use(onFulfilled: undefined, onRejected: (err: { response?: unknown; code?: string; message?: string; config?: SdkAxiosConfig }) => Promise<never>): number };
  };
}

const CONTEXT = Symbol('payouts.gatewayCallContext');
const currentCall = new AsyncLocalStorage<CallContext>();

export type SdkCallResult<T> =
  | { ok: true; value: T }
  | { ok: false; failure: unknown; transportError: NonNullable<CallContext['transportError']> | null };

/** Runs one SDK call with extra headers; a failure comes back with what the transport saw. */
export async function callSdk<T>(headers: Record<string, string>, fn: () => Promise<T>): Promise<SdkCallResult<T>> {
  const ctx: CallContext = { headers };
  try {
    return { ok: true, value: await currentCall.run(ctx, fn) };
  } catch (failure) {
    return { ok: false, failure, transportError: ctx.transportError ?? null };
  }
}

/** The SDK talks to `${baseUrl}/v1/...`; a configured URL may or may not end in /v1. */
export function sdkHostUrl(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

export function createSdk(config: GatewayConfig): Razorpay {
  const sdk = new Razorpay({ key_id: config.RAZORPAY_KEY_ID, key_secret: config.RAZORPAY_KEY_SECRET });
  const rq = (sdk as unknown as { api: { rq: SdkAxiosInstance } }).api.rq;
  if (config.RAZORPAY_BASE_URL) rq.defaults.baseURL = sdkHostUrl(config.RAZORPAY_BASE_URL);
  rq.defaults.timeout = config.GATEWAY_TIMEOUT_MS;
  rq.interceptors.request.use((request) => {
    const ctx = currentCall.getStore();
    if (ctx) {
      for (const [name, value] of Object.entries(ctx.headers)) {
        if (request.headers.set) request.headers.set(name, value);
        else request.headers[name] = value;
      }
      request[CONTEXT] = ctx;
    }
    return request;
  });
  rq.interceptors.response.use(undefined, (err) => {
    const ctx = err.config?.[CONTEXT] as CallContext | undefined;
    if (ctx && !err.response) ctx.transportError = { code: err.code ?? null, message: err.message ?? String(err) };
    return Promise.reject(err);
  });
  return sdk;
}
