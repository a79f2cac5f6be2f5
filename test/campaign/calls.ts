/** Calls the campaign makes as a real client would: through the load balancer with a role's key,
 * retried (same request, same idempotency reference) while the system answers 5xx or not at all —
 * an API whose PostgreSQL or Temporal is restarting, a gateway fault behind it. */
import type { TopologyRole } from '../../src/devstack/topologyEnv';
import { callApi, type ApiAnswer } from '../../src/devstack/topologyScenario';
import type { Topology } from '../../src/devstack/topologyTypes';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class CampaignCallError extends Error {}

/** While the database is being taken back in time (the db_rollback fault), the campaign's own
 * clients and operators write nothing: what they wrote in the lost window would be lost with it by
 * the definition of a restore, and the fault is about what the provider's side did meanwhile
 * (captures, webhooks answered, transfers sent). Their writes wait, in order, until the restore. */
let writesHeld: Promise<void> | null = null;
/** Writes sent and not yet answered: the hold waits for them, so none is answered after the snapshot. */
let writesInFlight = 0;

/** Holds every write not yet sent until `until` settles; resolves once the writes already sent have
 * been answered (then nothing the clients were told is newer than a snapshot taken now). */
export async function holdClientWrites(until: Promise<void>): Promise<void> {
  const held = until.finally(() => { if (writesHeld === held) writesHeld = null; });
  writesHeld = held;
  while (writesInFlight > 0) await sleep(20);
}

/** Retries until a non-5xx answer or the deadline; answers in `accept` (default 2xx) are returned,
 * any other 4xx throws (the campaign's own request was wrong, or the system refused it). */
export async function callRetrying(t: Pick<Topology, 'proxyUrl' | 'keys'>, role: TopologyRole, method: string, route: string, body?: unknown,
  opts: { accept?: number[]; deadlineMs?: number; onRetry?: () => void } = {}): Promise<ApiAnswer> {
  const deadline = Date.now() + (opts.deadlineMs ?? 120_000);
  let last = '';
  for (let attempt = 0; ; attempt++) {
    const answer = await (method === 'GET' ? callApi(t, role, method, route, body) : writeOnce(t, role, method, route, body))
      .catch((err: unknown) => ({ status: 0, body: String(err) }) as ApiAnswer);
    if ((answer.status >= 200 && answer.status < 300) || opts.accept?.includes(answer.status)) return answer;
    last = `${answer.status} ${JSON.stringify(answer.body)}`;
    if (answer.status !== 0 && answer.status < 500 && answer.status !== 429) throw new CampaignCallError(`${method} ${route} as ${role} → ${last}`);
    if (Date.now() > deadline) throw new CampaignCallError(`${method} ${route} as ${role}: still failing at the deadline (last: ${last})`);
    opts.onRetry?.();
    await sleep(Math.min(250 * 2 ** Math.min(attempt, 3), 2_000));
  }
}

/** One write of the campaign's own (an API call, a webhook it signs itself), sent once no hold is
 * in force, counted while it is unanswered. */
export async function heldWrite<T>(send: () => Promise<T>): Promise<T> {
  while (writesHeld) await writesHeld.catch(() => undefined);
  writesInFlight += 1;
  try {
    return await send();
  } finally {
    writesInFlight -= 1;
  }
}

const writeOnce = (t: Pick<Topology, 'proxyUrl' | 'keys'>, role: TopologyRole, method: string, route: string, body: unknown): Promise<ApiAnswer> =>
  heldWrite(() => callApi(t, role, method, route, body));

/** Retries a step that must eventually work (a sandbox control call, a PostgreSQL read across a restart). */
export async function eventually<T>(what: string, step: () => Promise<T>, deadlineMs = 60_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (Date.now() > deadline) throw new CampaignCallError(`${what}: ${err instanceof Error ? err.message : String(err)}`);
      await sleep(Math.min(200 * 2 ** Math.min(attempt, 3), 2_000));
    }
  }
}

/** Ops' answers when the payout left the queue before their decision: 409 (it moved on), or 404
 * (a database restore forgot its row, which its run writes again). */
export const LEFT_THE_QUEUE = [404, 409];

/** Reads until `done` holds or `ms` pass (null then). */
export async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, ms: number): Promise<T | null> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await read();
    if (done(value)) return value;
    await sleep(500);
  }
  return null;
}
