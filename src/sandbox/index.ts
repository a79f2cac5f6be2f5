/** The Razorpay sandbox: an HTTP server that behaves like the documented Razorpay API for every
 * endpoint the platform uses (entities, errors, limits, pagination, idempotency, signed webhooks
 * delivered at least once, settlements, a bank statement), with fault injection. State is in
 * memory. `baseUrl` is the host root (no /v1): it is what RAZORPAY_BASE_URL takes, and the SDK
 * appends /v1 itself. */
import Fastify from 'fastify';
import { DEFAULT_PLATFORM_ACCOUNT_ID, type Config } from '../config/config';
import type { AddressInfo } from 'node:net';
import { SandboxClock } from './clock';
import { Timers, type SandboxContext } from './context';
import type { SandboxControl } from './control';
import { FaultInjector } from './faults';
import type { RateLimitSettings } from './control';
import { RATE_LIMIT_OFF, TokenBuckets } from './rateLimit';
import { IdempotencyStore, REFUND_IDEMPOTENCY, TRANSFER_IDEMPOTENCY } from './idempotency';
import { SandboxState } from './state';
import { SettlementBook } from './settlements';
import { openSandboxJournal, type SandboxMemory } from './persistence';
import { DEFAULT_WEBHOOK_CONCURRENCY, WebhookDispatcher } from './webhooks';
import { apiRoutes } from './routes/api';
import { controlRoutes } from './routes/control';
import { createSandboxControl, type SandboxControlExtras } from './sandboxControl';

export type { SandboxControl } from './control';

export interface SandboxOptions {
  keyId: string;
  keySecret: string;
  webhookSecret: string;
  /** 0 = a free port. */
  port?: number;
  host?: string;
  webhookUrl?: string | null;
  /** pending → processed delay for transfers and refunds; 0 (default) = immediately processed. */
  transferProcessingDelayMs?: number;
  /** First webhook retry delay; doubles on each retry. */
  webhookRetryBaseMs?: number;
  /** Webhook attempts per event before the sandbox gives up (Razorpay: 24 h of retries). */
  webhookMaxAttempts?: number;
  /** How long a webhook receiver has to answer (Razorpay: 5 s). */
  webhookTimeoutMs?: number;
  /** Webhook deliveries in flight at once (default 8; Razorpay does not serialise them). Events of one
   * order/payment still start in emission order; 1 = strictly one at a time. */
  webhookConcurrency?: number;
  platformAccountId?: string;
  initialPlatformBalancePaise?: number;
  /** Razorpay's rate limit: a token bucket per API key and call class; absent or 0 rates = off. */
  rateLimit?: RateLimitSettings;
  /** Keep the sandbox's state in this file across restarts (the dev stack); absent: memory only. */
  stateFile?: string;
}

export interface RunningSandbox {
  baseUrl: string;
  control: SandboxControl & SandboxControlExtras;
  close(): Promise<void>;
}

export { DEFAULT_PLATFORM_ACCOUNT_ID };
/** ₹1 crore: enough that only a test that means to runs out. */
export const DEFAULT_PLATFORM_BALANCE_PAISE = 1_000_000_000;

/** The sandbox as configured for this platform: the same keys, webhook secret and account id. */
export function sandboxOptionsFrom(config: Config): SandboxOptions {
  return {
    keyId: config.RAZORPAY_KEY_ID,
    keySecret: config.RAZORPAY_KEY_SECRET,
    webhookSecret: config.RAZORPAY_WEBHOOK_SECRET,
    port: config.SANDBOX_PORT,
    host: config.SANDBOX_HOST,
    webhookUrl: config.SANDBOX_WEBHOOK_URL ?? null,
    transferProcessingDelayMs: config.SANDBOX_TRANSFER_DELAY_MS,
    webhookRetryBaseMs: config.SANDBOX_WEBHOOK_RETRY_BASE_MS,
    webhookConcurrency: config.SANDBOX_WEBHOOK_CONCURRENCY,
    platformAccountId: config.RAZORPAY_PLATFORM_ACCOUNT_ID,
    rateLimit: { writeRps: config.SANDBOX_RATE_LIMIT_WRITE_RPS, readRps: config.SANDBOX_RATE_LIMIT_READ_RPS, burst: config.SANDBOX_RATE_LIMIT_BURST },
  };
}

/** The sandbox without its HTTP server: the state, the settlement book and what works on them
 * (checkout.ts, transfers.ts, … and createSandboxControl take it). Its webhook deliveries stop with `signal`. */
export function createSandboxMemory(opts: SandboxOptions, signal: AbortSignal): SandboxMemory {
  const clock = new SandboxClock();
  const platformAccountId = opts.platformAccountId ?? DEFAULT_PLATFORM_ACCOUNT_ID;
  const ctx: SandboxContext = {
    state: new SandboxState(opts.initialPlatformBalancePaise ?? DEFAULT_PLATFORM_BALANCE_PAISE),
    clock,
    webhooks: new WebhookDispatcher({
      secret: opts.webhookSecret, accountId: platformAccountId, clock, target: opts.webhookUrl ?? null,
      retryBaseMs: opts.webhookRetryBaseMs ?? 1000, maxAttempts: opts.webhookMaxAttempts, timeoutMs: opts.webhookTimeoutMs,
      concurrency: opts.webhookConcurrency ?? DEFAULT_WEBHOOK_CONCURRENCY, signal,
    }),
    idempotency: new IdempotencyStore(TRANSFER_IDEMPOTENCY),
    refundIdempotency: new IdempotencyStore(REFUND_IDEMPOTENCY),
    faults: new FaultInjector(),
    rateLimit: new TokenBuckets(opts.rateLimit ?? RATE_LIMIT_OFF),
    timers: new Timers(),
    options: { platformAccountId, transferProcessingDelayMs: opts.transferProcessingDelayMs ?? 0 },
  };
  return { ctx, book: new SettlementBook() };
}

export async function startSandbox(opts: SandboxOptions): Promise<RunningSandbox> {
  const lifetime = new AbortController();
  const { ctx, book } = createSandboxMemory(opts, lifetime.signal);
  const control = createSandboxControl(ctx, book);
  const journal = opts.stateFile ? openSandboxJournal(opts.stateFile, { ctx, book }) : null;

  const app = Fastify({ logger: false, forceCloseConnections: true, bodyLimit: 5 * 1024 * 1024 });
  // Razorpay ignores a JSON content type on a bodiless request; so does the sandbox.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch {
      done(null, { __invalid_json: true });
    }
  });
  apiRoutes(app, ctx, book, { keyId: opts.keyId, keySecret: opts.keySecret }, lifetime.signal);
  controlRoutes(app, control);
  await app.listen({ port: opts.port ?? 0, host: opts.host ?? '127.0.0.1' });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`;

  // Transfers a stop left pending would otherwise wait for a timer that no longer exists.
  if (journal?.restored) await control.processPendingTransfers();
  let closed = false;
  return {
    baseUrl,
    control,
    async close() {
      if (closed) return;
      closed = true;
      journal?.close();
      lifetime.abort();
      ctx.timers.clear();
      ctx.webhooks.close();
      await app.close();
    },
  };
}
