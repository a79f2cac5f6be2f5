/** The whole payout stack for an integration test file: an isolated database, the Razorpay sandbox,
 * an in-process worker on its own task queue, and the API (money in + ops) listening on a free port
 * as the sandbox's webhook target. `env` overrides config, so durations stay short. */
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { loadConfig, type Config } from '../../src/config/config';
import type { Db } from '../../src/db/pool';
import { createGateway } from '../../src/gateway';
import { startWorkerPollers } from '../../src/startup/pollers';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { temporalReconStarter } from '../../src/recon/temporal';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox';
import { isolatedPool } from '../support/db';
import { mintRoleKeys, type RoleKeys } from '../support/apiKeys';
import { startTestWorker, type TestTemporal } from '../support/temporal';
import { seedPair, topUp, type MoneyInHarness } from './moneyinHarness';

export interface PayoutStack {
  db: Db;
  config: Config;
  sandbox: RunningSandbox;
  temporal: TestTemporal;
  api: FastifyInstance;
  apiUrl: string;
  /** One API key per role in this stack's database. */
  keys: RoleKeys;
  close(): Promise<void>;
}

export async function startPayoutStack(opts: { name: string; env?: Record<string, string>; sandbox?: Partial<SandboxOptions> }): Promise<PayoutStack> {
  const { db } = await isolatedPool();
  const defaults = loadConfig();
  const sandbox = await startSandbox({
    keyId: defaults.RAZORPAY_KEY_ID, keySecret: defaults.RAZORPAY_KEY_SECRET, webhookSecret: defaults.RAZORPAY_WEBHOOK_SECRET,
    webhookRetryBaseMs: 200, ...opts.sandbox,
  });
  const taskQueue = `${opts.name}-${Date.now()}`;
  const config = loadConfig({ ...process.env, RAZORPAY_BASE_URL: sandbox.baseUrl, TEMPORAL_TASK_QUEUE: taskQueue, ...opts.env });
  const gateway = createGateway(config);
  const temporal = await startTestWorker({ db, config, gateway }, taskQueue);
  const payoutStarter = temporalPayoutStarter(temporal.client, taskQueue, db);
  const api = await buildApi({ config, db, gateway, temporal: temporal.client, payoutStarter, reconStarter: temporalReconStarter(temporal.client, taskQueue) });
  // As the worker does: a webhook leaves its payout's start to the outbox drainer, and a refund it could not read to the follower.
  const drainer = startWorkerPollers({ db, gateway, payoutStarter, attemptCap: config.PAYOUT_ATTEMPT_CAP, outboxPollMs: 100, refundPollMs: 250 });
  const apiUrl = await api.listen({ port: 0, host: '127.0.0.1' });
  await sandbox.control.setWebhookTarget(`${apiUrl}/webhooks/razorpay`);
  const keys = await mintRoleKeys(db);
  return {
    db, config, sandbox, temporal, api, apiUrl, keys,
    async close() {
      await api.close();
      await drainer.stop();
      await temporal.close();
      await sandbox.close();
      await db.end();
    },
  };
}

/** Calls the stack's API with its ops key (and `X-Actor: person`); the answer's JSON for field-by-field checks. */
export function opsApi(stack: Pick<PayoutStack, 'apiUrl' | 'keys'>, person = 'asha') {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.apiUrl}${path}`, {
      method, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { ...stack.keys.ops, 'x-actor': person, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
    return { status: res.status, body: (await res.json()) as any };
  };
}

/** An order of the pair below: 10 000 paise, 9 000 of them subsidy, so the customer pays 1 000
 * online, and 19% commission leaves the vendor 8 100 (paid by direct transfer). */
export const PAIR_ORDER = { totalPaise: 10_000, subsidyPaise: 9_000, customerSharePaise: 1_000 } as const;
export const PAIR_ORDER_NET_PAISE = 8_100;

/** The stack with one employer–vendor pair (a linked account at the sandbox, 19% commission) seeded
 * through the API, the employer's wallet and the platform balance funded, and the stack seen as a
 * money-in harness (its helpers place and pay orders through the real API). */
export async function startPayoutStackWithPair(opts: { name: string; env?: Record<string, string>; sandbox?: Partial<SandboxOptions>; employerId: string; vendorId: string }): Promise<{ stack: PayoutStack; h: MoneyInHarness; linkedAccountId: string }> {
  const stack = await startPayoutStack({ name: opts.name, env: opts.env, ...(opts.sandbox && { sandbox: opts.sandbox }) });
  const h: MoneyInHarness = {
    db: stack.db, config: stack.config, gateway: createGateway(stack.config), sandbox: stack.sandbox, app: stack.api, baseUrl: stack.apiUrl,
    payoutStarts: [], keys: stack.keys, close: () => stack.close(),
  };
  const { linkedAccountId } = await seedPair(h, { employerId: opts.employerId, vendorId: opts.vendorId, commissionBps: 1_900 });
  await topUp(h, 'employer', opts.employerId, 1_000_000);
  await stack.sandbox.control.setPlatformBalance(10_000_000);
  return { stack, h, linkedAccountId: linkedAccountId! };
}

/** The stack the batch tests share: short timeouts and backoffs, settlement polled every second, a
 * human recheck that never fires during a test, and a platform balance that never runs out. */
export async function startBatchPayoutStack(name: string): Promise<PayoutStack> {
  const stack = await startPayoutStack({
    name,
    sandbox: { transferProcessingDelayMs: 200 },
    env: {
      GATEWAY_TIMEOUT_MS: '1500', PAYOUT_TRANSFER_TIMEOUT_MS: '4000', PAYOUT_RETRY_BACKOFF_MS: '200', PAYOUT_RETRY_BACKOFF_MAX_MS: '800',
      PAYOUT_SETTLEMENT_POLL_MS: '1000', PAYOUT_RESOLVER_RETRY_MS: '300', PAYOUT_STALE_CLAIM_MS: '5000', PAYOUT_HUMAN_RECHECK_MS: '60000',
    },
  });
  await stack.sandbox.control.setPlatformBalance(10_000_000);
  return stack;
}
