/** Webhook delivery as Razorpay does it: the documented envelope, signed with HMAC-SHA256 of the
 * exact raw body (`X-Razorpay-Signature`), a unique `x-razorpay-event-id`, at least once, a 5 s
 * answer deadline, retries with exponential backoff on non-2xx or no answer. Deliveries go one at a
 * time in event order unless a fault says otherwise. Razorpay retries for 24 h; the sandbox stops
 * after `maxAttempts` so a test run ends. */
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
  remaining: number;
}

interface Delivery {
  record: WebhookEventRecord;
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
  /** Aborted when the sandbox closes. */
  signal: AbortSignal;
}

const log = logger.child({ component: 'sandbox.webhooks' });

export class WebhookDispatcher {
  readonly records: WebhookEventRecord[] = [];
  private queue: Delivery[] = [];
  /** Held back by an out_of_order fault until the next event has gone first. */
  private held: Delivery[] = [];
  private retriesScheduled = new Set<NodeJS.Timeout>();
  private pumping = false;
  private faults: PendingFault[] = [];
  target: string | null;
  enabled = true;

  constructor(private readonly opts: WebhookDispatcherOptions) {
    this.target = opts.target;
  }

  /** Records an event and queues its delivery. `payload` maps entity names to snapshots. */
  emit(event: string, payload: Record<string, unknown>): WebhookEventRecord {
    const envelope = {
      entity: 'event',
      account_id: this.opts.accountId,
      event,
      contains: Object.keys(payload),
      payload: Object.fromEntries(Object.entries(payload).map(([name, entity]) => [name, { entity: structuredClone(entity) }])),
      created_at: this.opts.clock.nowSec(),
    };
    const record: WebhookEventRecord = { id: newId('evt'), event, body: JSON.stringify(envelope), deliveredAt: null, attempts: 0 };
    this.records.push(record);
    const delivery: Delivery = { record, dropFirstTry: this.takeFault('drop_first_try', event), duplicate: this.takeFault('duplicate', event) };
    if (this.takeFault('out_of_order', event)) {
      this.held.push(delivery);
      return record;
    }
    this.queue.push(delivery);
    // The next event overtakes the held ones: they follow it.
    if (this.held.length > 0) this.queue.push(...this.held.splice(0));
    this.pump();
    return record;
  }

  addFault(fault: WebhookFault, opts: { events?: string[]; count?: number } = {}): void {
    this.faults.push({ fault, events: opts.events ?? null, remaining: opts.count ?? 1 });
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
    return this.queue.length === 0 && this.held.length === 0 && this.retriesScheduled.size === 0 && !this.pumping;
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
  }

  close(): void {
    for (const t of this.retriesScheduled) clearTimeout(t);
    this.retriesScheduled.clear();
    this.queue = [];
    this.held = [];
  }

  private takeFault(fault: WebhookFault, event: string): boolean {
    const match = this.faults.find((f) => f.fault === fault && f.remaining > 0 && (!f.events || f.events.includes(event)));
    if (!match) return false;
    match.remaining -= 1;
    return true;
  }

  private pump(): void {
    if (this.pumping || !this.enabled || !this.target || this.opts.signal.aborted) return;
    this.pumping = true;
    void this.pumpLoop().finally(() => {
      this.pumping = false;
      if (this.queue.length > 0 && this.enabled && this.target && !this.opts.signal.aborted) this.pump();
    });
  }

  private async pumpLoop(): Promise<void> {
    while (this.queue.length > 0 && this.enabled && this.target && !this.opts.signal.aborted) {
      const delivery = this.queue.shift()!;
      await this.attempt(delivery, this.target);
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
    if (record.attempts >= (this.opts.maxAttempts ?? 8)) {
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
