/** Razorpay's knobs: the keys and webhook secrets, the provider budget, and our sandbox of it. */
import { z } from 'zod';
import { commaList, duration, port } from './fields';

/** The sandbox's own account (the default of RAZORPAY_PLATFORM_ACCOUNT_ID and of the sandbox). */
export const DEFAULT_PLATFORM_ACCOUNT_ID = 'acc_PlatformMeals1';

export const razorpayKnobs = {
  /** Razorpay API keys (the sandbox accepts exactly these). */
  RAZORPAY_KEY_ID: z.string().min(1).default('rzp_test_sandboxkey0001'),
  RAZORPAY_KEY_SECRET: z.string().min(1).default('sandbox_secret_change_me'),
  /** Base URL of the Razorpay API; empty means the real https://api.razorpay.com. Only a host on the
   * sandbox allow-list (loopback, SANDBOX_GATEWAY_HOSTS, RAZORPAY_SANDBOX_HOSTS) may be given the
   * sandbox's sample secrets; see mustUseRealSecrets. */
  RAZORPAY_BASE_URL: z.string().url().optional(),
  /** More host names that are our sandbox (comma-separated), beside loopback, `localhost` and the
   * compose service `sandbox`; a *.razorpay.com host is refused here. */
  RAZORPAY_SANDBOX_HOSTS: commaList,
  /** Our platform's own Razorpay account id (the `source` of direct transfers); the default is the
   * sandbox's, which real secrets refuse. */
  RAZORPAY_PLATFORM_ACCOUNT_ID: z.string().regex(/^acc_[A-Za-z0-9]{14}$/).default(DEFAULT_PLATFORM_ACCOUNT_ID),
  /** Webhook secret shared with Razorpay (not the API secret). */
  RAZORPAY_WEBHOOK_SECRET: z.string().min(8).default('sandbox_webhook_secret'),
  /** Earlier webhook secrets still accepted during a rotation (comma-separated): Razorpay signs
   * retries of older events with the secret they were first sent with. */
  RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: commaList.pipe(z.array(z.string().min(8))),
  /** Replay window (src/webhooks/eventAge.ts): a signed event whose created_at is older than this
   * (Razorpay retries for 24 h), or ahead of our clock by more than the skew, is set aside, not applied.
   * Keep the defaults in production; only tests that move the sandbox's clock by days widen them. */
  RAZORPAY_WEBHOOK_MAX_AGE_SECONDS: z.coerce.number().int().min(60).max(366 * 86_400).default(86_400),
  RAZORPAY_WEBHOOK_CLOCK_SKEW_SECONDS: z.coerce.number().int().min(0).max(31 * 86_400).default(300),
  /** Per-call timeout for every gateway request. */
  GATEWAY_TIMEOUT_MS: duration.default(8000),
  /** The provider budget the whole fleet obeys (issue 22): calls per second to Razorpay, enforced by
   * Temporal's task-queue rate limit (maxTaskQueueActivitiesPerSecond, the server's limit, so it holds
   * across any number of workers). Writes: the money-moving call; reads: the resolver's listing,
   * settlement fetches and the sweeps' provider reads. Defaults within Razorpay's 5–10/s guidance. */
  RAZORPAY_WRITE_RPS: z.coerce.number().min(0.1).max(1_000).default(8),
  RAZORPAY_READ_RPS: z.coerce.number().min(0.1).max(1_000).default(10),
  /** The API's own Razorpay calls (order create at checkout and for a wallet top-up): a token bucket
   * per API process (src/moneyin/providerBudget.ts), refilling at this rate and holding a burst of
   * API_RAZORPAY_BURST. A request it cannot admit gets 503 + Retry-After before anything is recorded.
   * Per process: with N API processes the API's share of the account's limit is N × this rate. */
  API_RAZORPAY_RPS: z.coerce.number().min(0.1).max(1_000).default(10),
  API_RAZORPAY_BURST: z.coerce.number().int().min(1).max(10_000).default(20),
  /** Captures are confirmed from the payment listing (src/payouts/captureListing.ts): a new listing
   * pass starts no sooner than this after the previous one, so the payouts due meanwhile share it. */
  CAPTURE_LISTING_GATHER_MS: duration.default(3_000),
  /** `on`: a batched order's capture waits for the once-more look's listing window instead of a pass
   * (src/payouts/captureWindow.ts). Off by default: in bench:day the per-order payouts' passes list
   * every payment anyway, so it moved the passes' cost between classes rather than cutting it (at
   * 3,000 orders 111 listing calls on, 98 off); see docs/performance.md. */
  CAPTURE_BY_WINDOW: z.enum(['on', 'off']).default('off'),
  /** A capture recorded longer ago than this (or authorised this long before) is asked for alone: a
   * listing pass never reaches further back. */
  CAPTURE_LISTING_LOOKBACK_SECONDS: z.coerce.number().int().min(10).max(86_400).default(300),
  /** The outbox drainer starts payout runs only while fewer than RAZORPAY_WRITE_RPS × this many
   * payouts wait in Temporal for the write budget (a burst waits as outbox rows instead). */
  OUTBOX_START_AHEAD_SECONDS: z.coerce.number().min(1).max(3_600).default(15),
  /** Alert (payouts_backlog_eta_seconds) when draining the due payouts at RAZORPAY_WRITE_RPS would take longer. */
  PAYOUT_BACKLOG_ETA_ALERT_SECONDS: z.coerce.number().int().min(1).default(3_600),
  SANDBOX_PORT: port.default(4010),
  /** `npm run dev` runs our Razorpay sandbox unless this is `off` or RAZORPAY_BASE_URL is set. */
  DEV_SANDBOX: z.enum(['on', 'off']).default('on'),
  /** Sandbox (npm run sandbox): bind address, where it posts webhooks, transfer pending→processed delay, first webhook retry delay. */
  SANDBOX_HOST: z.string().min(1).default('127.0.0.1'),
  SANDBOX_WEBHOOK_URL: z.string().url().optional(),
  SANDBOX_TRANSFER_DELAY_MS: z.coerce.number().int().min(0).default(0),
  SANDBOX_WEBHOOK_RETRY_BASE_MS: duration.default(1000),
  /** Sandbox: webhook deliveries in flight at once (Razorpay does not serialise them); events about
   * one order or payment still go one at a time, in order. */
  SANDBOX_WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /** Sandbox: Razorpay's rate limit, a token bucket per API key and call class (src/sandbox/rateLimit.ts;
   * writes create or move something, reads are the rest), calls per second; 0 = off (the default). */
  SANDBOX_RATE_LIMIT_WRITE_RPS: z.coerce.number().min(0).max(10_000).default(0),
  SANDBOX_RATE_LIMIT_READ_RPS: z.coerce.number().min(0).max(10_000).default(0),
  /** Sandbox: the rate limit's bucket size (calls at once); 0 = one second at each class's rate. */
  SANDBOX_RATE_LIMIT_BURST: z.coerce.number().int().min(0).max(100_000).default(0),
};
