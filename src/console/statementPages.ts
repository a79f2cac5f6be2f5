/** Finance pages for vendor statements: the vendors with their orders in a period, one vendor's
 * statement (how each order was paid, totals by rail, the offline balance) and its CSV download —
 * the same statement and file as GET /v1/vendors/:vendorId/statement. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../appError';
import { istDateOf } from '../domain/calendar';
import { formatRupees } from '../domain/money';
import { isoDateSchema } from '../domain/schemas';
import { statementPeriodSchema, vendorIdSchema, type Statement } from '../statements/contract';
import { listVendorsWithActivity, readVendorStatement, type VendorActivity } from '../statements/readModel';
import { statementCsv, statementFileName } from '../statements/statementCsv';
import { totalRows } from '../statements/statementLines';
import { html, type Html } from './html';
import { page } from './layout';
import { consoleRoute, sendPage, sessionOf, type ConsoleDeps } from './access';

const blank = (v: unknown) => (v === '' ? undefined : v);
const pageQuerySchema = z.object({
  vendor: z.preprocess(blank, vendorIdSchema.optional()),
  from: z.preprocess(blank, isoDateSchema.optional()),
  to: z.preprocess(blank, isoDateSchema.optional()),
});

/** The period asked for; by default this IST month so far. */
function periodOf(query: unknown, today = istDateOf(new Date())) {
  const q = pageQuerySchema.parse(query ?? {});
  const period = statementPeriodSchema.parse({ from: q.from ?? `${today.slice(0, 8)}01`, to: q.to ?? today });
  return { vendor: q.vendor, period };
}

const rupees = (paise: number | null): string => (paise === null ? '—' : formatRupees(paise));
const statementQuery = (vendorId: string, period: { from: string; to: string }): string => new URLSearchParams({ vendor: vendorId, ...period }).toString();

function statementSection(s: Statement): Html {
  const csvHref = `/console/statements.csv?${statementQuery(s.vendor.id, s.period)}`;
  return html`<section aria-labelledby="statement-title" data-vendor-id="${s.vendor.id}">
<h2 id="statement-title">${s.vendor.name} (<code>${s.vendor.id}</code>), ${s.period.from} → ${s.period.to}</h2>
<p><a class="button secondary" id="statement-csv" href="${csvHref}" download="${statementFileName(s)}">Download this statement as CSV</a></p>
<p class="${s.balance.carriedForward ? 'notice' : 'muted'}" data-testid="balance">${s.balance.words}</p>
${s.totals.unexplainedPaise !== 0 ? html`<p class="error" role="alert">${rupees(s.totals.unexplainedPaise)} of the orders' net is not accounted for by any rail: see the lines marked "not accounted for".</p>` : ''}
<table data-testid="statement-totals" style="width:auto;min-width:560px"><caption class="muted">${s.totals.orders} order${s.totals.orders === 1 ? '' : 's'}: total ${rupees(s.totals.totalPaise)}, subsidy ${rupees(s.totals.subsidyPaise)}, customer share ${rupees(s.totals.customerSharePaise)}, commission ${rupees(s.totals.commissionPaise)}, net ${rupees(s.totals.vendorNetPaise)}</caption>
<thead><tr><th scope="col">Rail</th><th scope="col">What</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${totalRows(s).map(([rail, what, paise]) => html`<tr data-total="${rail}:${what}"><td>${rail}</td><td>${what}</td><td class="num">${rupees(paise)}</td></tr>`)}</tbody></table>
<h2>Lines</h2>
<table data-testid="statement-lines"><thead><tr><th scope="col">Day</th><th scope="col">Order</th><th scope="col">Route</th><th scope="col" class="num">Total</th><th scope="col" class="num">Subsidy</th><th scope="col" class="num">Customer</th><th scope="col" class="num">Commission</th><th scope="col" class="num">Net</th><th scope="col" class="num">Amount</th><th scope="col">How paid (with its references)</th></tr></thead>
<tbody>${s.lines.length === 0 ? html`<tr><td colspan="10">No order paid and no refund clawed back in this period.</td></tr>` : s.lines.map((l) => html`<tr data-order-id="${l.orderId}" data-kind="${l.kind}" data-rail="${l.paidBy.rail}">
<td>${l.day}</td><td><code>${l.orderId}</code>${l.kind === 'refund_clawback' ? html`<br><span class="muted">refund clawback</span>` : ''}</td><td>${l.route ?? '—'}</td>
<td class="num">${rupees(l.totalPaise)}</td><td class="num">${rupees(l.subsidyPaise)}</td><td class="num">${rupees(l.customerSharePaise)}</td><td class="num">${rupees(l.commissionPaise)}</td><td class="num">${rupees(l.vendorNetPaise)}</td>
<td class="num">${rupees(l.paidBy.amountPaise)}</td><td>${l.howPaid}</td></tr>`)}</tbody></table></section>`;
}

function vendorTable(vendors: readonly VendorActivity[], period: { from: string; to: string }): Html {
  return html`<table data-testid="vendors"><caption class="muted">Every vendor, with its orders paid in the period.</caption>
<thead><tr><th scope="col">Vendor</th><th scope="col">Name</th><th scope="col" class="num">Orders paid</th><th scope="col" class="num">Net</th><th scope="col">Statement</th></tr></thead>
<tbody>${vendors.length === 0 ? html`<tr><td colspan="5">No vendors yet.</td></tr>` : vendors.map((v) => html`<tr data-vendor-id="${v.id}"><td><code>${v.id}</code></td><td>${v.name}</td><td class="num">${v.orders}</td><td class="num">${rupees(v.vendorNetPaise)}</td>
<td><a href="/console/statements?${statementQuery(v.id, period)}" aria-label="Statement: ${v.id}">open</a></td></tr>`)}</tbody></table>`;
}

export async function statementPages(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  app.get('/console/statements', consoleRoute('finance', 'Console: vendor statements (vendors in a period, one vendor\'s statement with its CSV download)'), async (request, reply) => {
    const session = sessionOf(request);
    const { vendor, period } = periodOf(request.query);
    const vendors = await listVendorsWithActivity(deps.db, period);
    const statement = vendor ? await readVendorStatement(deps.db, vendor, period) : null;
    if (vendor && !statement) throw new AppError(404, 'vendor_not_found', `vendor ${vendor} does not exist`);
    return sendPage(reply, page({
      title: 'Vendor statements', session, current: '/console/statements',
      body: html`<form method="get" action="/console/statements" aria-label="Choose a statement"><fieldset><legend>A vendor's statement for IST days, both included</legend>
<div class="field"><label for="s-vendor">Vendor</label><select id="s-vendor" name="vendor"><option value="">choose…</option>${vendors.map((v) => html`<option value="${v.id}"${v.id === vendor ? html` selected` : ''}>${v.id} — ${v.name}</option>`)}</select></div>
<div class="field"><label for="s-from">From</label><input id="s-from" name="from" type="date" required value="${period.from}"></div>
<div class="field"><label for="s-to">To</label><input id="s-to" name="to" type="date" required value="${period.to}"></div>
<div class="field"><button type="submit">Show statement</button></div></fieldset></form>
${statement ? statementSection(statement) : vendorTable(vendors, period)}`,
    }));
  });

  app.get('/console/statements.csv', consoleRoute('finance', "Console: a vendor's statement as CSV (the same file as GET /v1/vendors/:vendorId/statement?format=csv)"), async (request, reply) => {
    const { vendor, period } = periodOf(request.query);
    if (!vendor) throw new AppError(400, 'invalid_request', 'choose a vendor: ?vendor=<vendorId>');
    const statement = await readVendorStatement(deps.db, vendor, period);
    if (!statement) throw new AppError(404, 'vendor_not_found', `vendor ${vendor} does not exist`);
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${statementFileName(statement)}"`).send(statementCsv(statement));
  });
}
