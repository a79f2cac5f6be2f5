/** A payout's trace on its console page: the spans of every trace that names the order (or the
 * batch), drawn as a tree from the trace store's query API — the webhook request, the outbox's
 * workflow start, the run and its activities, each Razorpay call — with a link to the store's own
 * UI when one is configured (TRACES_UI_URL: Jaeger's, in docker compose). */
import { formatIst } from '../domain/istTime';
import { idAttributes, TRACE_ID_ATTRIBUTES } from '../observability/tracing';
import { spanTree, tracesOfPayout } from '../observability/traceStore';
import { html, raw, type Html } from './html';
import type { ConsoleDeps } from './access';

const ms = (us: number): string => (us >= 10_000 ? `${Math.round(us / 1000)} ms` : `${(us / 1000).toFixed(1)} ms`);

export async function traceSection(deps: ConsoleDeps, key: string, isBatch: boolean): Promise<Html> {
  const { TRACES_QUERY_URL: queryUrl, TRACES_UI_URL: uiUrl } = deps.config;
  const tag = JSON.stringify(idAttributes(isBatch ? { batchId: key } : { orderId: key }));
  const uiLink = uiUrl ? html` · <a href="${uiUrl.replace(/\/$/, '')}/search?${new URLSearchParams({ service: 'payouts-api', tags: tag }).toString()}" target="_blank" rel="noopener">open in the trace store's UI</a>` : '';
  if (!queryUrl) return html`<h2 id="trace">Trace</h2><p class="muted">No trace store is configured (TRACES_QUERY_URL).${uiLink}</p>`;
  const found = await tracesOfPayout(queryUrl, key, { isBatch });
  if (!found.ok) return html`<h2 id="trace">Trace</h2><p class="muted">${found.why}.${uiLink}</p>`;
  if (found.traces.length === 0) return html`<h2 id="trace">Trace</h2><p class="muted">No span names ${isBatch ? TRACE_ID_ATTRIBUTES.batchId : TRACE_ID_ATTRIBUTES.orderId} ${key} yet (spans reach the store within a second or two).${uiLink}</p>`;
  return html`<h2 id="trace">Trace</h2><p class="muted">Every span of the ${found.traces.length === 1 ? 'trace that names' : `${found.traces.length} traces that name`} ${key}, as the trace store holds them.${uiLink}</p>
${found.traces.map((t) => {
    const t0 = t.spans[0]?.startUs ?? 0;
    return html`<table aria-label="Trace ${t.traceId}" data-trace-id="${t.traceId}"><caption class="muted">trace <code>${t.traceId}</code>, started ${formatIst(new Date(t0 / 1000))}</caption>
<thead><tr><th scope="col">Span</th><th scope="col">Service</th><th scope="col" class="num">Starts at</th><th scope="col" class="num">Took</th><th scope="col">Ids</th></tr></thead>
<tbody>${spanTree(t.spans).map((s) => html`<tr data-span="${s.name}" data-depth="${s.depth}"${s.error ? raw(' class="paused"') : ''}>
<td><span style="padding-left:${s.depth * 14}px">${s.name}</span></td><td>${s.service}</td><td class="num">+${ms(s.startUs - t0)}</td><td class="num">${ms(s.durationUs)}</td>
<td>${Object.entries(s.ids).map(([k, v]) => html`<code>${k.replace(/^payouts\.|^razorpay\./, '')}=${v}</code> `)}</td></tr>`)}</tbody></table>`;
  })}`;
}
