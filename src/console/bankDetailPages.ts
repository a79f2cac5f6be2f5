/** Vendors' bank details for admin and finance, masked (the last four digits; the full number is
 * only ever decrypted into a settlement bank file): who has details, who changed them and when, and
 * which vendors a settlement run could not pay by bank file. Read-only: details are set through
 * PUT /v1/admin/vendors/{vendorId}/bank-details. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { formatIst } from '../domain/istTime';
import { countOf } from '../domain/countWords';
import { bankDetailChanges, listVendorBankDetails } from '../banking/repository';
import { html } from './html';
import { page } from './layout';
import { consoleRoute, sendPage, sessionOf, type ConsoleDeps } from './access';

const PAGE = 200;
const blank = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const pageQuery = z.object({
  search: z.preprocess(blank, z.string().trim().max(100).optional()),
  vendor: z.preprocess(blank, z.string().trim().max(100).optional()),
});

export async function bankDetailPages(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  app.get('/console/vendors/bank-details', consoleRoute(['admin', 'finance'], "Console: vendors' bank details, masked, with their change history"), async (request, reply) => {
    const session = sessionOf(request);
    const q = pageQuery.parse(request.query ?? {});
    const [list, changes] = await Promise.all([
      listVendorBankDetails(deps.db, { search: q.search, limit: PAGE }),
      q.vendor ? bankDetailChanges(deps.db, q.vendor) : Promise.resolve(null),
    ]);
    const without = list.matching - list.withDetails;
    return sendPage(reply, page({
      title: 'Vendor bank details', session, current: '/console/vendors/bank-details',
      body: html`<p class="muted">Account numbers are sealed: only the last four digits are shown here; the full number goes only into a settlement run's bank file. Details are set or changed through the admin API (audited).</p>
<form method="get" action="/console/vendors/bank-details" class="inline"><label for="search">Vendor id or name</label><input id="search" name="search" value="${q.search ?? ''}" size="24" maxlength="100"><button type="submit" class="secondary">Find</button></form>
<p data-testid="bank-details-totals"><strong>${countOf(list.matching, 'vendor')}</strong>: ${list.withDetails.toLocaleString('en-IN')} with bank details, ${without.toLocaleString('en-IN')} without${without ? ' (a settlement run carries what they are owed until details are added)' : ''}${list.vendors.length < list.matching ? ` · the first ${list.vendors.length} shown` : ''}.</p>
<table aria-label="Vendor bank details"><thead><tr><th scope="col">Vendor</th><th scope="col">Linked account</th><th scope="col">Beneficiary</th><th scope="col">Account</th><th scope="col">IFSC</th><th scope="col">Last changed</th><th scope="col">History</th></tr></thead>
<tbody>${list.vendors.length === 0 ? html`<tr><td colspan="7">No vendor matches.</td></tr>` : list.vendors.map((v) => html`<tr data-vendor-id="${v.vendorId}">
<td><strong>${v.vendorName}</strong><br><code>${v.vendorId}</code></td><td>${v.linkedAccountId ? html`<code>${v.linkedAccountId}</code>` : 'none (paid offline)'}</td>
${v.details ? html`<td>${v.details.beneficiaryName}</td><td><code>${v.details.accountMasked}</code></td><td><code>${v.details.ifsc}</code></td><td>${formatIst(v.details.updatedAt)}<br><span class="muted">by ${v.details.updatedBy}</span></td>`
    : html`<td colspan="4" class="muted">No bank details</td>`}
<td><a href="/console/vendors/bank-details?${new URLSearchParams({ ...(q.search ? { search: q.search } : {}), vendor: v.vendorId }).toString()}#history">changes</a></td></tr>`)}</tbody></table>
${changes ? html`<h2 id="history">Changes to ${q.vendor}'s bank details (newest first)</h2>
<table aria-label="Bank detail changes"><thead><tr><th scope="col">At</th><th scope="col">Who</th><th scope="col">Change</th><th scope="col">Beneficiary</th><th scope="col">Account</th><th scope="col">IFSC</th><th scope="col">Key</th></tr></thead>
<tbody>${changes.length === 0 ? html`<tr><td colspan="7">No change recorded.</td></tr>` : changes.map((c) => html`<tr><td>${formatIst(c.at)}</td><td>${c.actor}</td><td>${c.action.replace('_', ' ')}</td><td>${c.beneficiaryName}</td><td><code>${c.accountMasked}</code></td><td><code>${c.ifsc}</code></td><td><code>${c.keyId}</code></td></tr>`)}</tbody></table>` : ''}`,
    }));
  });
}
