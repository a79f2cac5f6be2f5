/** The first connections at boot (PostgreSQL, Temporal), retried with capped exponential backoff
 * until STARTUP_CONNECT_DEADLINE_MS, so a worker or API started together with its dependencies
 * (compose, Kubernetes) waits for them instead of crashing; past the deadline it fails with one
 * clear error and the process exits non-zero. */
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config/config';
import type { Db } from '../db/pool';
import type { Logger } from '../logger';
import {
  clientFromOptions, temporalConnectionOptions, workerConnectionFromOptions, type TemporalConnectionConfig,
} from '../temporal/connection';

export interface RetryLogLine {
  what: string;
  /** The attempt that just failed (1 for the first). */
  attempt: number;
  /** Delay before the next attempt. */
  nextInMs: number;
  err: unknown;
}

export interface RetryOptions {
  /** Total time allowed, from the first attempt; one last attempt is made at the deadline. */
  deadlineMs: number;
  /** Called once per failed attempt that will be retried. */
  log: (line: RetryLogLine) => void;
  /** First backoff (default 250 ms); doubles per attempt up to `maxDelayMs` (default 5 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** For tests. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  random?: () => number;
}

export const DEFAULT_INITIAL_DELAY_MS = 250;
export const DEFAULT_MAX_DELAY_MS = 5_000;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'object' && err !== null) {
    try { return JSON.stringify(err); } catch { /* fall through */ }
  }
  return String(err);
}

/** The backoff before attempt `attempt + 1`: the capped exponential step with "equal jitter"
 * (half fixed, half random), so it grows, never exceeds the cap, and processes started together
 * do not retry in lockstep. */
export function backoffDelay(attempt: number, initialDelayMs: number, maxDelayMs: number, random: () => number): number {
  const step = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(step / 2 + random() * (step / 2));
}

export interface AttemptInfo {
  /** 1 for the first attempt. */
  attempt: number;
  /** Time left before the deadline, so an attempt can bound its own connect timeout. */
  remainingMs: number;
}

/** Runs `attempt` until it resolves or the deadline passes. An attempt is never cut short here (it
 * gets `remainingMs` to bound its own connect timeout), so the total can exceed the deadline by
 * one attempt's duration. */
export async function retryUntilDeadline<T>(what: string, attempt: (info: AttemptInfo) => Promise<T>, opts: RetryOptions): Promise<T> {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? realSleep;
  const random = opts.random ?? Math.random;
  const initialDelayMs = opts.initialDelayMs ?? DEFAULT_INITIAL_DELAY_MS;
  const maxDelayMs = Math.max(opts.maxDelayMs ?? DEFAULT_MAX_DELAY_MS, initialDelayMs);
  const start = now();
  for (let n = 1; ; n++) {
    try {
      return await attempt({ attempt: n, remainingMs: Math.max(0, opts.deadlineMs - (now() - start)) });
    } catch (err) {
      const remaining = opts.deadlineMs - (now() - start);
      if (remaining <= 0) {
        throw new Error(`could not connect to ${what} within ${opts.deadlineMs / 1000}s: ${errorText(err)}`, { cause: err });
      }
      const nextInMs = Math.min(backoffDelay(n, initialDelayMs, maxDelayMs, random), remaining);
      opts.log({ what, attempt: n, nextInMs, err });
      await sleep(nextInMs);
    }
  }
}

type StartupLogger = Pick<Logger, 'warn'>;
type Deadline = Pick<Config, 'STARTUP_CONNECT_DEADLINE_MS'>;

function logWith(logger: StartupLogger, message: string): RetryOptions['log'] {
  return ({ what, attempt, nextInMs, err }) => logger.warn({ what, attempt, nextInMs, err }, message);
}

/** The client's own wait for a channel (grpc-js keeps reconnecting inside it; the SDK default is
 * 10 s), bounded by the time left so the deadline holds. */
const CLIENT_ATTEMPT_MAX_MS = 10_000;
const CLIENT_ATTEMPT_MIN_MS = 1_000;

/** A Temporal client, retried until STARTUP_CONNECT_DEADLINE_MS. A TLS config mistake (cert
 * without key, unreadable file) throws at once: the options are built before the first attempt. */
export function connectClientWithRetry(config: TemporalConnectionConfig & Pick<Config, 'TEMPORAL_NAMESPACE'> & Deadline, logger: StartupLogger): Promise<Client> {
  const options = temporalConnectionOptions(config);
  const attempt = ({ remainingMs }: AttemptInfo) =>
    clientFromOptions(options, config.TEMPORAL_NAMESPACE, Math.max(CLIENT_ATTEMPT_MIN_MS, Math.min(CLIENT_ATTEMPT_MAX_MS, remainingMs)));
  return retryUntilDeadline(`Temporal at ${config.TEMPORAL_ADDRESS}`, attempt, {
    deadlineMs: config.STARTUP_CONNECT_DEADLINE_MS,
    log: logWith(logger, 'waiting for Temporal'),
  });
}

/** The worker's native Temporal connection, retried until STARTUP_CONNECT_DEADLINE_MS. */
export function connectWorkerWithRetry(config: TemporalConnectionConfig & Deadline, logger: StartupLogger): Promise<NativeConnection> {
  const options = temporalConnectionOptions(config);
  return retryUntilDeadline(`Temporal at ${config.TEMPORAL_ADDRESS}`, () => workerConnectionFromOptions(options), {
    deadlineMs: config.STARTUP_CONNECT_DEADLINE_MS,
    log: logWith(logger, 'waiting for Temporal'),
  });
}

/** Resolves once `SELECT 1` succeeds on `db`, retried until STARTUP_CONNECT_DEADLINE_MS. */
export async function waitForDatabase(db: Db, config: Deadline, logger: StartupLogger): Promise<void> {
  await retryUntilDeadline('PostgreSQL', () => db.query('SELECT 1'), {
    deadlineMs: config.STARTUP_CONNECT_DEADLINE_MS,
    log: logWith(logger, 'waiting for PostgreSQL'),
  });
}
