/** Ops' page for payout batches (pairs on an hourly or daily schedule): found by pair, status and
 * the IST day their window overlaps, with totals past the page; each links to its own payout page,
 * which lists the orders inside and the batch's one transfer. Same use case as GET /ops/batches. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { formatIst } from '../domain/istTime';
import { countOf } from '../domain/countWords';
import { formatRupees } from '../domain/money';
import { AppError } from '../appError';
import { auditActor } from '../auth/routeAuth';
import { closeBatchNow } from '../payouts/closeBatchNow';
import { batchFilterSchema, batchIdSchema, batchOfPayoutKey, batchTotals, listBatches, type BatchOrder, type BatchTotals, type BatchView } from '../payouts/batchView';
import { html, type Html } from './html';
import { csrfField, page } from './layout';
import { traceSection } from './traceSection';
import { consoleRoute, sendPage, sessionOf, type ConsoleDeps } from './access';

const PAGE = 200;
// The form sends every field, empty when unset: empty means "any".
const pageFilter = z.preprocess(
  (q) => Object.fromEntries(Object.entries((q ?? {}) as Record<string, unknown>).filter(([, v]) => v !== '')),
  batchFilterSchema.omit({ limit: true }),
);


function totalsLine(t: BatchTotals, shown: number): Html {
  return html`<p data-testid="batch-totals">${t.batches === 0 ? 'No batch matches.'
    : html`<strong>${countOf(t.batches, 'batch', 'batches')}</strong> (${t.open} open) · ${countOf(t.orders, 'order')} · <strong>${formatRupees(t.totalPaise)}</strong>${shown < t.batches ? ` · the newest ${shown} shown` : ''}`}</p>`;
}

function transferCell(b: BatchView): Html | string {
  if (!b.payout) return b.status === 'open' ? 'not closed yet' : 'no transfer (no orders)';
  return html`${b.payout.status}${b.payout.providerTransferId ? html` <code>${b.payout.providerTransferId}</code>` : ''}${b.payout.lastCode ? html`<br><code>${b.payout.lastCode}</code>` : ''}`;
}

/** A batch's own payout lists the orders its one transfer pays; a member order links to its batch. */
export function batchSection(b: BatchView & { orders: BatchOrder[] }, shownKey: string): Html {
  const own = shownKey === b.batchId;
  return html`<h2>${own ? 'The orders this batch pays' : 'The batch that pays it'}</h2>
<table><tbody>
<tr><th scope="row">Batch</th><td>${own ? b.batchId : html`<a href="/console/payouts/${b.batchId}">${b.batchId}</a>`} (${b.schedule}, ${b.status})</td></tr>
<tr><th scope="row">Employer / vendor</th><td>${b.employerId} / ${b.vendorId}</td></tr>
<tr><th scope="row">Window</th><td>${formatIst(b.windowStart)} to ${formatIst(b.cutoffAt)}</td></tr>
<tr><th scope="row">Orders / sum</th><td>${b.orderCount} / ${formatRupees(b.totalPaise)}</td></tr>
<tr><th scope="row">Its transfer</th><td>${b.payout ? html`${b.payout.status}, <code>${b.payout.providerTransferId ?? '—'}</code>` : 'not closed yet'}</td></tr>
</tbody></table>
${own ? html`<table aria-label="Orders in the batch"><thead><tr><th scope="col">Order</th><th scope="col" class="num">Net</th><th scope="col">Status</th><th scope="col">Joined</th></tr></thead>
<tbody>${b.orders.map((o) => html`<tr data-order-id="${o.orderId}"><td><a href="/console/payouts/${o.orderId}">${o.orderId}</a></td><td class="num">${formatRupees(o.amountPaise)}</td><td>${o.status}</td><td>${formatIst(o.joinedAt)}</td></tr>`)}</tbody></table>` : ''}`;
}

const batchParams = z.object({ batchId: batchIdSchema });
const reasonBody = z.object({ reason: z.string().trim().min(3, 'a reason of at least 3 characters is required').max(500) });

export async function batchPages(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  app.get('/console/batches', consoleRoute('ops', 'Console: payout batches by pair, status and day, with totals'), async (request, reply) => {
    const session = sessionOf(request);
    const filter = pageFilter.parse(request.query ?? {});
    const [batches, totals] = await Promise.all([listBatches(deps.db, { ...filter, limit: PAGE }), batchTotals(deps.db, { ...filter, limit: PAGE })]);
    const field = (name: 'employerId' | 'vendorId', label: string) =>
      html`<div class="field"><label for="${name}">${label}</label><input id="${name}" name="${name}" value="${filter[name] ?? ''}" size="16" maxlength="100"></div>`;
    return sendPage(reply, page({
      title: 'Payout batches', session, current: '/console/batches',
      body: html`<form method="get" action="/console/batches" aria-label="Filter batches">
${field('employerId', 'Employer')}${field('vendorId', 'Vendor')}
<div class="field"><label for="day">Window on (IST day)</label><input id="day" name="day" type="date" value="${filter.day ?? ''}"></div>
<div class="field"><label for="status">Status</label><select id="status" name="status"><option value="">any</option>${(['open', 'closed'] as const).map((s) => html`<option value="${s}"${s === filter.status ? html` selected` : ''}>${s}</option>`)}</select></div>
<div class="field"><button type="submit">Find batches</button></div></form>
${totalsLine(totals, batches.length)}
<table aria-label="Payout batches"><thead><tr><th scope="col">Batch</th><th scope="col">Employer / vendor</th><th scope="col">Schedule</th><th scope="col">Window (IST)</th><th scope="col">Status</th><th scope="col" class="num">Orders</th><th scope="col" class="num">Sum</th><th scope="col">Its transfer</th></tr></thead>
<tbody>${batches.length === 0 ? html`<tr><td colspan="8">No batch matches.</td></tr>` : batches.map((b) => html`<tr data-batch-id="${b.batchId}">
<td><a href="/console/batches/${b.batchId}"><code>${b.batchId}</code></a></td><td>${b.employerId} / ${b.vendorId}</td><td>${b.schedule}</td>
<td class="nowrap">${formatIst(b.windowStart, { seconds: false })}<br>to ${formatIst(b.cutoffAt, { seconds: false })}</td>
<td>${b.status}${b.closedAt ? html`<br><span class="muted">${formatIst(b.closedAt)}</span>` : ''}</td><td class="num">${b.orderCount.toLocaleString('en-IN')}</td><td class="num">${formatRupees(b.totalPaise)}</td><td>${transferCell(b)}</td></tr>`)}</tbody></table>`,
    }));
  });

  app.get('/console/batches/:batchId', consoleRoute('ops', "Console: one payout batch: its window, orders and transfer; close it now while open"), async (request, reply) => {
    const session = sessionOf(request);
    const { batchId } = batchParams.parse(request.params);
    const [batch, trace] = await Promise.all([batchOfPayoutKey(deps.db, batchId), traceSection(deps, batchId, true)]);
    if (!batch) throw new AppError(404, 'batch_not_found', `no batch ${batchId}`);
    const closing = z.object({ closing: z.string().optional() }).parse(request.query ?? {}).closing !== undefined;
    return sendPage(reply, page({
      title: `Batch ${batchId}`, session, current: '/console/batches',
      body: html`${closing ? html`<p class="notice" role="status">Closing now (audited): its run closes the batch and pays it; later orders go to the next window.</p>` : ''}
<p><a href="/console/batches?${new URLSearchParams({ employerId: batch.employerId, vendorId: batch.vendorId }).toString()}">← This pair's batches</a>${batch.payout ? html` · <a href="/console/payouts/${batchId}">its payout: attempts and decisions</a>` : ''}</p>
<p>Status <strong data-testid="batch-status">${batch.status}</strong>${batch.closedAt ? ` since ${formatIst(batch.closedAt)}` : ` until its cutoff at ${formatIst(batch.cutoffAt)}`}.</p>
${batchSection(batch, batchId)}
${batch.status === 'open' ? html`<form method="post" action="/console/batches/${batchId}/close" class="inline">${csrfField(session)}
<label for="close-reason">Reason</label><input id="close-reason" name="reason" required minlength="3" maxlength="500" size="40">
<button type="submit">Close and pay now</button></form>` : ''}
${trace}`,
    }));
  });

  app.post('/console/batches/:batchId/close', consoleRoute('ops', 'Console: close an open batch now and pay it, with a reason (audited in the log)'), async (request, reply) => {
    const { batchId } = batchParams.parse(request.params);
    const { reason } = reasonBody.parse(request.body ?? {});
    await closeBatchNow({ db: deps.db, temporal: deps.temporal, taskQueue: deps.config.TEMPORAL_TASK_QUEUE }, batchId, { actor: auditActor(request), reason });
    return reply.redirect(`/console/batches/${batchId}?closing=1`, 303);
  });
}
