/** Traces, OpenTelemetry end to end (issue 39): one order followed from the webhook request, through
 * the outbox row (its trace context is stored with it), the workflow start, the workflow and every
 * activity (Temporal's OpenTelemetry interceptors), to each Razorpay call. Spans carry the order,
 * payout, batch and vendor ids, never an account number, key or signature. With TRACES_OTLP_URL
 * unset nothing is exported and every span is a no-op. */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** The service a process reports as (Jaeger's "service"). */
export type TracedService = 'payouts-api' | 'payouts-worker' | 'payouts';
/** Every service name the app reports under (`payouts`: API and worker in one process, npm run dev). */
export const TRACED_SERVICES: readonly TracedService[] = ['payouts', 'payouts-api', 'payouts-worker'];

export interface Tracing {
  /** What the workflow spans are handed to (the worker's exporter sink); a no-op when off. */
  spanProcessor: SpanProcessor;
  resource: Resource;
  enabled: boolean;
  /** Sends what is buffered; before a process exits. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

let started: Tracing | null = null;

const off = (resource: Resource): Tracing => ({ spanProcessor: new NoopSpanProcessor(), resource, enabled: false, flush: async () => {}, shutdown: async () => {} });

/** What this process traces with: what startTracing started, or nothing (no-op spans). */
export const tracingNow = (): Tracing => started ?? off(new Resource({ 'service.name': 'payouts' }));

/** Once per process: the global tracer provider exporting to `otlpUrl` (`…/v1/traces` is added). */
export function startTracing(service: TracedService, otlpUrl: string | undefined): Tracing {
  if (started) return started;
  const resource = new Resource({ 'service.name': service });
  if (!otlpUrl) {
    started = off(resource);
    return started;
  }
  const exporter = new OTLPTraceExporter({ url: `${otlpUrl.replace(/\/+$/, '')}/v1/traces`, timeoutMillis: 5_000 });
  // Small and frequent batches: a person following an order wants its spans within a second.
  const spanProcessor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500, maxExportBatchSize: 256, maxQueueSize: 8_192 });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  started = { spanProcessor, resource, enabled: true, flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
  return started;
}

export const tracer = () => trace.getTracer('payouts');

/** The ids a span may carry, under stable names (Jaeger searches by them). */
export interface TraceIds { orderId?: string | null; payoutId?: string | null; batchId?: string | null; vendorId?: string | null }
export const TRACE_ID_ATTRIBUTES: Record<keyof TraceIds, string> = {
  orderId: 'payouts.order_id', payoutId: 'payouts.payout_id', batchId: 'payouts.batch_id', vendorId: 'payouts.vendor_id',
};

export function idAttributes(ids: TraceIds): Attributes {
  const out: Attributes = {};
  for (const [key, name] of Object.entries(TRACE_ID_ATTRIBUTES) as Array<[keyof TraceIds, string]>) {
    const v = ids[key];
    if (v) out[name] = v;
  }
  return out;
}

/** Adds ids to the span running now (an activity's, a request's); nothing when none runs. */
export function annotateSpan(ids: TraceIds, more: Attributes = {}): void {
  trace.getActiveSpan()?.setAttributes({ ...idAttributes(ids), ...more });
}

/** Runs `fn` in a new active span; an error is recorded on it and thrown on. */
export function inSpan<T>(name: string, opts: { kind?: SpanKind; attributes?: Attributes }, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The W3C `traceparent` of the span running now, to store with work another process picks up
 * (the outbox row); null when no span is recording. */
export function currentTraceparent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The id of the trace running now (null when no span is recording). */
export function currentTraceId(): string | null {
  const ctx = trace.getActiveSpan()?.spanContext();
  return ctx && ctx.traceFlags & 1 ? ctx.traceId : null;
}

/** Runs `fn` as a continuation of the stored `traceparent` (none: a root of its own). */
export function underTraceparent<T>(traceparent: string | null, fn: () => T): T {
  if (!traceparent) return fn();
  return context.with(propagation.extract(ROOT_CONTEXT, { traceparent }), fn);
}

export { SpanKind };
