/** Reads a payout's traces back from the trace store (Jaeger's query API, the one its UI uses:
 * GET /api/traces?service=…&tags=…), for the console to draw: every trace with a span tagged with
 * the order's (or batch's) id, as a tree of spans with their service, start and duration. The
 * answer is parsed with zod like any other input; a store that cannot be reached is said, not thrown. */
import { z } from 'zod';
import { TRACE_ID_ATTRIBUTES, TRACED_SERVICES } from './tracing';

const jaegerTraces = z.object({
  data: z.array(z.object({
    traceID: z.string(),
    spans: z.array(z.object({
      spanID: z.string(), operationName: z.string(), startTime: z.number(), duration: z.number(), processID: z.string(),
      references: z.array(z.object({ refType: z.string(), spanID: z.string() })).default([]),
      tags: z.array(z.object({ key: z.string(), value: z.unknown() })).default([]),
    })),
    processes: z.record(z.string(), z.object({ serviceName: z.string() })),
  })).nullable(),
});

export interface TraceSpan { spanId: string; parentId: string | null; name: string; service: string; startUs: number; durationUs: number; error: boolean; ids: Record<string, string> }
export interface StoredTrace { traceId: string; spans: TraceSpan[] }
export type TraceLookup = { ok: true; traces: StoredTrace[] } | { ok: false; why: string };

const SHOWN_TAGS = new Set<string>([...Object.values(TRACE_ID_ATTRIBUTES), 'razorpay.event', 'razorpay.operation']);

/** The traces in which a span carries `payouts.order_id` (or `payouts.batch_id` for a batch) = key,
 * newest first, spans in start order. */
export async function tracesOfPayout(queryUrl: string, key: string, opts: { isBatch: boolean; timeoutMs?: number }): Promise<TraceLookup> {
  const tag = opts.isBatch ? TRACE_ID_ATTRIBUTES.batchId : TRACE_ID_ATTRIBUTES.orderId;
  const byTrace = new Map<string, Map<string, TraceSpan>>();
  // One query per service the app reports under, at once: a store that is down costs one timeout.
  const answers = await Promise.all(TRACED_SERVICES.map(async (service) => {
    const url = `${queryUrl.replace(/\/+$/, '')}/api/traces?${new URLSearchParams({ service, tags: JSON.stringify({ [tag]: key }), lookback: '7d', limit: '20' })}`;
    const answer = await fetch(url, { signal: AbortSignal.timeout(opts.timeoutMs ?? 3_000) });
    return answer.ok ? jaegerTraces.safeParse(await answer.json()) : null; // a service that has reported nothing yet answers an error
  })).catch((err: unknown) => err as Error);
  if (answers instanceof Error) return { ok: false, why: `the trace store did not answer (${answers.message})` };
  for (const parsed of answers) {
    if (parsed === null) continue;
    if (!parsed.success) return { ok: false, why: `the trace store answered something unexpected (${parsed.error.issues[0]?.message})` };
    for (const t of parsed.data.data ?? []) {
      const spans = byTrace.get(t.traceID) ?? new Map<string, TraceSpan>();
      for (const s of t.spans) {
        const parent = s.references.find((r) => r.refType === 'CHILD_OF')?.spanID ?? null;
        const tags = Object.fromEntries(s.tags.map((x) => [x.key, x.value]));
        spans.set(s.spanID, {
          spanId: s.spanID, parentId: parent, name: s.operationName, service: t.processes[s.processID]?.serviceName ?? '?', startUs: s.startTime, durationUs: s.duration,
          error: tags.error === true || tags['otel.status_code'] === 'ERROR',
          ids: Object.fromEntries(Object.entries(tags).filter(([k]) => SHOWN_TAGS.has(k)).map(([k, v]) => [k, String(v)])),
        });
      }
      byTrace.set(t.traceID, spans);
    }
  }
  const traces = [...byTrace].map(([traceId, spans]) => ({ traceId, spans: [...spans.values()].sort((a, b) => a.startUs - b.startUs) }));
  return { ok: true, traces: traces.sort((a, b) => (b.spans[0]?.startUs ?? 0) - (a.spans[0]?.startUs ?? 0)) };
}

/** Spans in tree order (each after its parent, children by start), with their depth. */
export function spanTree(spans: readonly TraceSpan[]): Array<TraceSpan & { depth: number }> {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string | null, TraceSpan[]>();
  for (const s of spans) {
    const parent = s.parentId && ids.has(s.parentId) ? s.parentId : null;
    children.set(parent, [...(children.get(parent) ?? []), s]);
  }
  const out: Array<TraceSpan & { depth: number }> = [];
  const walk = (parent: string | null, depth: number) => {
    for (const s of (children.get(parent) ?? []).sort((a, b) => a.startUs - b.startUs)) {
      out.push({ ...s, depth });
      walk(s.spanId, depth + 1);
    }
  };
  walk(null, 0);
  return out;
}
