/** Webhook delivery as Razorpay does it: the documented envelope, signed with HMAC-SHA256 of the
 * exact raw body (`X-Razorpay-Signature`), a unique `x-razorpay-event-id`, at least once, a 5 s
 * answer deadline, retries with exponential backoff on non-2xx or no answer. Like Razorpay, deliveries
 * do not wait for each other: up to `concurrency` are in flight at once, so a settlement or transfer
 * event never queues behind another entity's slow receiver. Events about the same order (or payment,
 * transfer, settlement) start in the order they were emitted, one at a time, so a sequence one test
 * asserts stays deterministic; only a fault (`out_of_order`), a retry or a duplicate reorders them.
 * Razorpay retries for 24 h; the sandbox stops after `maxAttempts` so a test run ends. */
import { hmacSha256Hex } from '../gateway/signatures';
import type { SandboxClock } from './clock';
import type { WebhookFault } from './control';
import { newId } from './ids';
import { logger } from '../logger';

export interface WebhookEventRecord {
  id: string;
  event: string;
  body: string;
  deliveredAt: number | null;
  attempts: number;
}

interface PendingFault {
  fault: WebhookFault;
  events: string[] | null;
  bodyIncludes: string | null;
  remaining: number;
}

interface Delivery {
  record: WebhookEventRecord;
  /** Deliveries with the same key are never in flight together (see `orderingKey`). */
  key: string;
  /** Skip the first attempt (counts as a failed try). */
  dropFirstTry: boolean;
  /** Deliver once more after the first success. */
  duplicate: boolean;
}

export interface WebhookDispatcherOptions {
  secret: string;
  accountId: string;
  clock: SandboxClock;
  target: string | null;
  retryBaseMs: number;
  maxAttempts?: number;
  timeoutMs?: number;
  /** Deliveries in flight at once (default 8; 1 = one at a time). */
  concurrency?: number;
  /** Aborted when the sandbox closes. */
  signal: AbortSignal;
}

const log = logger.child({ component: 'sandbox.webhooks' });

export const DEFAULT_WEBHOOK_CONCURRENCY = 8;
/** How far into the queue a free slot looks for a delivery whose key is not in flight. */
const SCAN_LIMIT = 1000;

type Snapshot = Record<string, unknown> | undefined;
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The entity chain an event belongs to: the order (payment, order and refund events carry it), else
 * the payment, else the event's own entity (transfer, settlement). */
export function orderingKey(payload: Record<string, unknown>, fallback: string): string {
  const payment = payload.payment as Snapshot;
  const order = payload.order as Snapshot;
  const refund = payload.refund as Snapshot;
  // A Route split's transfer is about its order (or payment): after that order's capture, as at
  // Razorpay, where the transfer only exists once the payment is captured.
  const source = str((payload.transfer as Snapshot)?.source);
  const orderId = str(order?.id) ?? str(payment?.order_id) ?? (source?.startsWith('order_') ? source : undefined);
  if (orderId) return `order:${orderId}`;
  const paymentId = str(payment?.id) ?? str(refund?.payment_id) ?? (source?.startsWith('pay_') ? source : undefined);
  if (paymentId) return `payment:${paymentId}`;
  for (const [name, entity] of Object.entries(payload)) {
    const id = str((entity as Snapshot)?.id);
    if (id) return `${name}:${id}`;
  }
  return `event:${fallback}`;
}

export class WebhookDispatcher {
  readonly records: WebhookEventRecord[] = [];
  private queue: Delivery[] = [];
  /** Held back by an out_of_order fault until the next event has gone first. */
  private held: Delivery[] = [];
  private retriesScheduled = new Set<NodeJS.Timeout>();
  private inFlightKeys = new Set<string>();
  private inFlightCount = 0;
  private faults: PendingFault[] = [];
  private readonly concurrency: number;
  /** The most deliveries ever in flight at once (for tests and benches). */
  maxInFlight = 0;
  /** What happened to deliveries, by `webhook:<what>`: faults applied, failed tries, events given up. */
  readonly fired: Record<string, number> = {};
  target: string | null;
  enabled = true;

  constructor(private readonly opts: WebhookDispatcherOptions) {
    this.target = opts.target;
    const concurrency = opts.concurrency ?? DEFAULT_WEBHOOK_CONCURRENCY;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`webhook concurrency must be a positive integer, got ${concurrency}`);
    this.concurrency = concurrency;
  }

  /** Deliveries in flight right now. */
  get inFlight(): number {
    return this.inFlightCount;
  }

  /** Records an event and queues its delivery. `payload` maps entity names to snapshots. */
  emit(event: string, payload: Record<string, unknown>): WebhookEventRecord {
    const envelope = {
      entity: 'event',
      account_id: this.opts.accountId,
      event,
      contains: Object.keys(payload),
      payload: Object.fromEntries(Object.entries(payload).map(([name, entity]) => [name, { entity: structuredClone(entity) }])),
      // Razorpay stamps an event when it sends it. A clock moved ahead (to play a settlement day)
      // still sends now: the receiver never meets an event from its future. One moved back keeps
      // its time (an old event is a case the receiver must judge).
      created_at: Math.min(this.opts.clock.nowSec(), Math.floor(Date.now() / 1000)),
    };
    const record: WebhookEventRecord = { id: newId('evt'), event, body: JSON.stringify(envelope), deliveredAt: null, attempts: 0 };
    this.records.push(record);
    if (this.takeFault('lose', event, record.body)) return record; // recorded, never delivered
    const delivery: Delivery = { record, key: orderingKey(payload, record.id), dropFirstTry: this.takeFault('drop_first_try', event, record.body), duplicate: this.takeFault('duplicate', event, record.body) };
    if (this.takeFault('out_of_order', event, record.body)) {
      this.held.push(delivery);
      return record;
    }
    this.queue.push(delivery);
    // The next event overtakes the held ones: they follow it.
    if (this.held.length > 0) this.queue.push(...this.held.splice(0));
    this.pump();
    return record;
  }

  addFault(fault: WebhookFault, opts: { events?: string[]; count?: number; bodyIncludes?: string } = {}): void {
    this.faults.push({ fault, events: opts.events ?? null, bodyIncludes: opts.bodyIncludes ?? null, remaining: opts.count ?? 1 });
  }

  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    this.pump();
  }

  setTarget(url: string | null): void {
    this.target = url;
    this.pump();
  }

  /** True when nothing deliverable is queued, held, waiting for a retry or in flight. */
  idle(): boolean {
    if (!this.enabled || !this.target) return true;
    return this.queue.length === 0 && this.held.length === 0 && this.retriesScheduled.size === 0 && this.inFlightCount === 0;
  }

  async drain(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    // Held events would wait for a next event forever: release them now.
    if (this.held.length > 0) {
      this.queue.push(...this.held.splice(0));
      this.pump();
    }
    while (!this.idle()) {
      if (Date.now() > deadline) throw new Error(`webhooks not drained within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  reset(): void {
    for (const t of this.retriesScheduled) clearTimeout(t);
    this.retriesScheduled.clear();
    this.queue = [];
    this.held = [];
    this.faults = [];
    this.records.length = 0;
    this.enabled = true;
    for (const k of Object.keys(this.fired)) delete this.fired[k];
  }

  close(): void {
    for (const t of this.retriesScheduled) clearTimeout(t);
    this.retriesScheduled.clear();
    this.queue = [];
    this.held = [];
  }

  private takeFault(fault: WebhookFault, event: string, body: string): boolean {
    const match = this.faults.find((f) => f.fault === fault && f.remaining > 0 && (!f.events || f.events.includes(event)) && (f.bodyIncludes === null || body.includes(f.bodyIncludes)));
    if (!match) return false;
    match.remaining -= 1;
    this.count(fault);
    return true;
  }

  private count(what: string): void {
    this.fired[`webhook:${what}`] = (this.fired[`webhook:${what}`] ?? 0) + 1;
  }

  /** Starts queued deliveries while a slot is free: the first queued one whose key is not in flight. */
  private pump(): void {
    while (this.inFlightCount < this.concurrency && this.queue.length > 0 && this.enabled && this.target && !this.opts.signal.aborted) {
      const limit = Math.min(this.queue.length, SCAN_LIMIT);
      let index = -1;
      for (let i = 0; i < limit; i++) {
        if (!this.inFlightKeys.has(this.queue[i]!.key)) {
          index = i;
          break;
        }
      }
      if (index < 0) return; // everything near the head waits for its key: a finishing delivery pumps again
      const [delivery] = this.queue.splice(index, 1) as [Delivery];
      this.inFlightCount += 1;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlightCount);
      this.inFlightKeys.add(delivery.key);
      void this.attempt(delivery, this.target)
        .catch((err: unknown) => log.error({ err, eventId: delivery.record.id }, 'webhook attempt failed unexpectedly'))
        .finally(() => {
          this.inFlightCount -= 1;
          this.inFlightKeys.delete(delivery.key);
          this.pump();
        });
    }
  }

  private async attempt(delivery: Delivery, url: string): Promise<void> {
    const { record } = delivery;
    record.attempts += 1;
    let ok = false;
    if (delivery.dropFirstTry) {
      delivery.dropFirstTry = false;
    } else {
      ok = await this.post(url, record);
    }
    if (ok) {
      record.deliveredAt ??= this.opts.clock.nowMs();
      if (delivery.duplicate) {
        delivery.duplicate = false;
        this.queue.push(delivery);
      }
      return;
    }
    this.count('failed_try');
    if (record.attempts >= (this.opts.maxAttempts ?? 8)) {
      this.count('given_up');
      log.warn({ eventId: record.id, event: record.event, attempts: record.attempts }, 'webhook given up');
      return;
    }
    const delay = this.opts.retryBaseMs * 2 ** (record.attempts - 1);
    const timer = setTimeout(() => {
      this.retriesScheduled.delete(timer);
      this.queue.push(delivery);
      this.pump();
    }, delay);
    this.retriesScheduled.add(timer);
  }

  private async post(url: string, record: WebhookEventRecord): Promise<boolean> {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Razorpay-Webhook/v1',
          'x-razorpay-signature': hmacSha256Hex(record.body, this.opts.secret),
          'x-razorpay-event-id': record.id,
        },
        body: record.body,
        signal: AbortSignal.any([AbortSignal.timeout(this.opts.timeoutMs ?? 5000), this.opts.signal]),
      });
      await res.arrayBuffer().catch(() => undefined);
      return res.status >= 200 && res.status < 300;
    } catch (err) {
      log.debug({ err, eventId: record.id }, 'webhook delivery failed');
      return false;
    }
  }
}
