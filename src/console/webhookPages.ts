/** Ops' page for the webhook quarantine: each signed event set aside instead of applied, why in
 * words, whether its effect has been recovered since, and the acknowledgement once read (audited).
 * The body is behind a click; the signature is never shown. Same use cases as /ops/webhooks/quarantine. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { formatIst } from '../domain/istTime';
import { countOf } from '../domain/countWords';
import { auditActor } from '../auth/routeAuth';
import { acknowledgeBody, quarantineIdParams } from '../contracts/webhookQuarantine';
import { acknowledgeOrRefuse, quarantineCounts, quarantinedWebhooks, QUARANTINE_RECOVERY, SET_ASIDE_REASONS, type QuarantinedWebhookView, type QuarantineCounts, type SetAsideReason } from '../webhooks/quarantine';
import { html, type Html } from './html';
import { csrfField, page } from './layout';
import { consoleRoute, sendPage, sessionOf } from './access';
import type { ConsoleDeps } from './access';

const PAGE = 50;
const REASON_LABELS: Record<SetAsideReason, string> = { schema_refused: 'schema refused', too_old: 'too old', from_future: 'from the future' };
const blank = (v: unknown) => (v === '' ? undefined : v);
const pageQuery = z.object({
  show: z.preprocess(blank, z.enum(['open', 'acknowledged', 'all']).default('open')),
  reason: z.preprocess(blank, z.enum(SET_ASIDE_REASONS).optional()),
  beforeId: z.preprocess(blank, z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional()),
  acknowledged: z.string().max(200).optional(),
  already: z.string().optional(),
});

const eventsWord = (n: number): string => countOf(n, 'event');

function totals(c: QuarantineCounts): Html {
  const byReason = SET_ASIDE_REASONS.filter((r) => c.openByReason[r] > 0).map((r) => `${REASON_LABELS[r]} ${c.openByReason[r]}`);
  return html`<p data-testid="quarantine-totals">${c.total === 0 ? 'No webhook has been set aside.'
    : html`<strong>${eventsWord(c.open)} open</strong>${byReason.length ? ` (${byReason.join(', ')})` : ''} of ${eventsWord(c.total)} set aside.`}</p>`;
}

function prettyBody(body: string): string {
  try { return JSON.stringify(JSON.parse(body), null, 2); } catch { return body; }
}

function row(e: QuarantinedWebhookView, session: Parameters<typeof csrfField>[0]): Html {
  return html`<tr data-quarantine-id="${e.id}">
<td class="nowrap">${formatIst(e.receivedAt)}${e.eventCreatedAt ? html`<br><span class="muted">dated ${formatIst(e.eventCreatedAt)}</span>` : ''}</td>
<td><strong>${e.event ?? '(no event name)'}</strong><br><code>${e.eventId}</code></td>
<td>${REASON_LABELS[e.reason]}: ${e.why}</td>
<td data-recovery="${e.recovery.state}">${e.recovery.words}</td>
<td>${e.acknowledged
    ? html`Acknowledged by <strong>${e.acknowledged.by}</strong> at ${formatIst(e.acknowledged.at)}: “${e.acknowledged.note}”`
    : html`<form method="post" action="/console/webhooks/quarantine/${e.id}/acknowledge" class="inline">${csrfField(session)}
<label for="note-${e.id}" class="skip">What you concluded about ${e.eventId}</label><input id="note-${e.id}" name="note" required minlength="3" maxlength="500" size="22" placeholder="what you concluded">
<button type="submit" class="secondary" aria-label="Acknowledge ${e.eventId}">Acknowledge</button></form>`}</td>
</tr>
<tr data-body-of="${e.id}"><td colspan="5"><details><summary>Body of ${e.eventId} as Razorpay sent it</summary><pre>${prettyBody(e.body)}</pre></details></td></tr>`;
}

export async function webhookPages(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  app.get('/console/webhooks/quarantine', consoleRoute('ops', 'Console: the webhook quarantine (signed events set aside, not applied), with acknowledgements'), async (request, reply) => {
    const session = sessionOf(request);
    const q = pageQuery.parse(request.query ?? {});
    const [events, counts] = await Promise.all([
      quarantinedWebhooks(deps.db, { show: q.show, reason: q.reason, beforeId: q.beforeId, limit: PAGE }),
      quarantineCounts(deps.db),
    ]);
    const more = events.length === PAGE ? new URLSearchParams({ show: q.show, ...(q.reason ? { reason: q.reason } : {}), beforeId: String(events[events.length - 1]!.id) }) : null;
    return sendPage(reply, page({
      title: 'Webhook quarantine', session, current: '/console/webhooks/quarantine',
      body: html`${q.acknowledged ? html`<p class="notice" role="status">${q.acknowledged}: ${q.already ? 'already acknowledged (the first note stands)' : 'acknowledged'} (audited).</p>` : ''}
${totals(counts)}
<p class="muted">${QUARANTINE_RECOVERY}</p>
<form method="get" action="/console/webhooks/quarantine" class="inline">
<label for="show">Show</label><select id="show" name="show">${(['open', 'acknowledged', 'all'] as const).map((s) => html`<option value="${s}"${s === q.show ? html` selected` : ''}>${s}</option>`)}</select>
<label for="reason">Reason</label><select id="reason" name="reason"><option value="">any</option>${SET_ASIDE_REASONS.map((r) => html`<option value="${r}"${r === q.reason ? html` selected` : ''}>${REASON_LABELS[r]}</option>`)}</select>
<button type="submit" class="secondary">Filter</button></form>
<table aria-label="Set-aside webhooks"><thead><tr><th scope="col">Received</th><th scope="col">Event</th><th scope="col">Why it was set aside</th><th scope="col">Its effect</th><th scope="col">Acknowledged</th></tr></thead>
<tbody>${events.length === 0 ? html`<tr><td colspan="5">${q.show === 'open' ? 'Nothing open: every set-aside event has been acknowledged.' : 'None.'}</td></tr>` : events.map((e) => row(e, session))}</tbody></table>
${more ? html`<p><a href="/console/webhooks/quarantine?${more.toString()}">Older events</a></p>` : ''}`,
    }));
  });

  app.post('/console/webhooks/quarantine/:id/acknowledge', consoleRoute('ops', 'Console: acknowledge a set-aside webhook with what you concluded (audited)'), async (request, reply) => {
    const { id } = quarantineIdParams.parse(request.params);
    const { note } = acknowledgeBody.parse(request.body ?? {});
    const done = await acknowledgeOrRefuse(deps.db, id, { actor: auditActor(request), note });
    return reply.redirect(`/console/webhooks/quarantine?${new URLSearchParams({ acknowledged: done.eventId, ...(done.already ? { already: '1' } : {}) })}`, 303);
  });
}
