/** Ops pages: the human queue with the kill switch, one payout's page, and the decisions — each a
 * confirm step with a required reason — calling the use cases the ops API calls. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { OPS_ACTIONS, payoutWorkflowId, type OpsAction } from '../contracts/payout';
import { formatRupees } from '../domain/money';
import { formatIst } from '../domain/istTime';
import { countOf } from '../domain/countWords';
import { AppError } from '../appError';
import { auditActor } from '../auth/routeAuth';
import { orderView } from '../moneyin/orderView';
import { batchOfPayoutKey } from '../payouts/batchView';
import { transferIdSchema } from '../domain/schemas';
import { createGateway } from '../gateway';
import { fetchTransferEvidence } from '../payouts/externalTransfer';
import { decideOnPayout, decisionNotTaken } from '../payouts/humanQueue';
import { pauseTransfers, readTransferSwitch, requestsPastTheGate, setTransfersPaused, type InFlightRequests } from '../payouts/killSwitch';
import { readBacklogReport, type BacklogReport } from '../payouts/backlog';
import { humanQueueTotals, listHumanQueue, type QueueTotals } from '../payouts/queue';
import { decidedByWords, explainPayoutCode } from '../payouts/reasons';
import { findPayoutByOrder } from '../payouts/repository';
import { signalDecisionAfterCommit, sweepAfterResume } from '../payouts/afterDecision';
import { awaitsHuman, statusesAllowing } from '../payouts/stateMachine';
import { batchSection } from './batchPages';
import { traceSection } from './traceSection';
import { isBatchKey } from '../contracts/payoutBatch';
import { html, type Html } from './html';
import { formatAge } from '../domain/durationWords';
import { csrfField, page } from './layout';
import { consoleRoute, sendPage, sessionOf, type ConsoleDeps } from './access';

const ACTION_OF_PATH: Record<string, OpsAction> = { retry: 'retry', 'mark-paid-externally': 'mark_paid_externally', 'pay-offline': 'pay_offline', cancel: 'cancel' };
const PATH_OF_ACTION = Object.fromEntries(Object.entries(ACTION_OF_PATH).map(([p, a]) => [a, p])) as Record<OpsAction, string>;
const ACTION_WORDS: Record<OpsAction, { label: string; explain: string }> = {
  retry: { label: 'Retry', explain: 'The payout gets a fresh budget of attempts and its run tries the transfer again.' },
  mark_paid_externally: { label: 'Mark paid externally', explain: 'Records that the vendor was paid outside our send: by the Razorpay transfer you found (checked against this payout before anything changes: its notes, amount and account), or with a bank reference. Nothing is sent.' },
  pay_offline: { label: 'Pay offline', explain: 'Finance pays the vendor by hand: the payout moves to offline and joins the open offline ledger, and no transfer is ever sent for it (a pending or failed payout too, e.g. while transfers are paused: no claim takes it afterwards). If a request of ours went out without a definitive answer, Razorpay is asked first, and a live transfer carrying this payout\'s id refuses the decision: mark paid externally with that transfer instead.' },
  cancel: { label: 'Cancel', explain: 'The payout is not owed by transfer. Nothing is sent.' },
};

const orderParams = z.object({ orderId: z.string().min(1).max(100) });
const decideParams = orderParams.extend({ action: z.enum(Object.keys(ACTION_OF_PATH) as [string, ...string[]]) });
const reasonBody = z.object({ reason: z.string().trim().min(3, 'a reason of at least 3 characters is required').max(500) });
// An empty form field is no value.
const blankIsAbsent = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const decisionBody = reasonBody.extend({
  reference: z.preprocess(blankIsAbsent, z.string().trim().min(3, 'a reference of at least 3 characters').max(100).optional()),
  transferId: z.preprocess(blankIsAbsent, transferIdSchema.optional()),
});

const webUiUrl = (deps: ConsoleDeps, orderId: string): string =>
  `${deps.config.TEMPORAL_UI_URL.replace(/\/$/, '')}/namespaces/${encodeURIComponent(deps.config.TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(payoutWorkflowId(orderId))}`;

const switchedQuery = z.object({ switched: z.enum(['paused', 'resumed']).optional(), inFlight: z.coerce.number().int().min(0).optional() });

const requestsWord = (n: number): string => `${n} request${n === 1 ? '' : 's'}`;

/** The pause's promise, with the count the pause answered. */
const pauseSnapshotWords = (count: number): string => count === 0
  ? 'No new request leaves, and none was past the gate at that moment.'
  : `No new request leaves; ${requestsWord(count)} ${count === 1 ? 'was' : 'were'} already past the gate at that moment and may still land.`;

/** While paused: the requests past the gate that still have no answer (they may land). */
function inFlightSection(live: InFlightRequests): Html {
  if (live.count === 0) return html`<p data-testid="in-flight">No request past the gate is waiting for an answer: nothing more can leave while paused.</p>`;
  return html`<div data-testid="in-flight"><p>${requestsWord(live.count)} past the gate still ${live.count === 1 ? 'has' : 'have'} no answer and may land (the oldest first):</p>
<table><thead><tr><th scope="col">Order</th><th scope="col" class="num">Amount</th><th scope="col">Linked account</th><th scope="col">Claimed</th><th scope="col">Sent</th><th scope="col">Answer</th></tr></thead>
<tbody>${live.payouts.map((p) => html`<tr><td><a href="/console/payouts/${p.orderId}">${p.orderId}</a></td><td class="num">${formatRupees(p.amountPaise)}</td><td><code>${p.linkedAccountId}</code></td><td>${formatIst(p.claimedAt)}</td><td>${formatIst(p.requestSentAt)}</td><td>${p.outcome ?? 'none yet'}</td></tr>`)}</tbody></table>
${live.payouts.length < live.count ? html`<p class="muted">The oldest ${live.payouts.length} of ${live.count} are shown.</p>` : ''}</div>`;
}

const payoutsWord = (n: number): string => countOf(n, 'payout');

/** What waits on Razorpay, how long the writes take at the configured rate, and the balance wall. */
function backlogSection(b: BacklogReport): Html {
  const toSend = b.write.due + b.write.claimed;
  const rows: Array<[string, string, number]> = [
    ['write', 'due to be sent', b.write.due], ['write', 'claimed, waiting for the write budget', b.write.claimed], ['write', 'sent, no answer yet', b.write.inFlight],
    ['read', 'answer lost, waiting for the resolver\'s listing', b.read.unknown], ['read', 'accepted, waiting for settlement', b.read.awaitingSettlement],
  ];
  return html`<section id="backlog" aria-labelledby="backlog-title"${polling('backlog')}><h2 id="backlog-title">Provider backlog</h2>
<p data-testid="backlog-eta">${toSend === 0 ? 'No transfer waits to be sent' : html`Sending the ${payoutsWord(toSend)} still to be requested takes about <strong>${formatAge(b.etaSeconds)}</strong>`} at ${b.budgetRps.write} transfers a second (reads: ${b.budgetRps.read} a second)${b.overEtaBound ? html` — <span class="paused">past the alert bound of ${formatAge(b.etaAlertSeconds)}</span>` : ''}.</p>
<table data-testid="backlog"><thead><tr><th scope="col">Call class</th><th scope="col">Waiting</th><th scope="col" class="num">Payouts</th></tr></thead>
<tbody>${rows.map(([klass, words, n]) => html`<tr><td>${klass}</td><td>${words}</td><td class="num">${n.toLocaleString('en-IN')}</td></tr>`)}</tbody></table>
<p data-testid="balance-wall">${b.balanceWall
    ? html`<span class="paused">Balance wall: the platform balance is short</span> since ${formatIst(b.balanceWall.since)} (<code>${b.balanceWall.code}</code>). The ${payoutsWord(b.balanceWall.waitingPayouts)} waiting need <strong>${b.balanceWall.needed.rupees}</strong>: finance adds it to the Razorpay balance; transfers resume by themselves once a probe is accepted${b.balanceWall.nextProbeAt ? html` (next probe ${formatIst(b.balanceWall.nextProbeAt)})` : ''}, or at once on resume.`
    : 'No balance wall: the platform balance has not refused a transfer.'}</p></section>`;
}

const LIVE_PARTS = ['switch', 'backlog', 'queue'] as const;
type LivePart = (typeof LIVE_PARTS)[number];
const livePartParams = z.object({ part: z.enum(LIVE_PARTS) });
/** The switch's state the polling element was drawn with. */
const shownPausedQuery = z.object({ paused: z.enum(['true', 'false']).optional() });
/** htmx: the element asks for its own fresh copy every few seconds and swaps itself. */
const polling = (part: LivePart, query = ''): Html => html` hx-get="/console/payouts/live/${part}${query}" hx-trigger="every 3s" hx-swap="outerHTML"`;

function switchLive(sw: Awaited<ReturnType<typeof readTransferSwitch>>, live: InFlightRequests | null): Html {
  return html`<div id="switch-live"${polling('switch', `?paused=${sw.paused}`)}><p data-testid="switch-state">Direct transfers are <span class="${sw.paused ? 'paused' : 'running'}">${sw.paused ? 'PAUSED' : 'running'}</span>${sw.changedBy ? html` — set by <strong>${sw.changedBy}</strong> at ${formatIst(sw.changedAt)}${sw.reason ? html`: “${sw.reason}”` : ''}` : ''}.</p>
${live ? inFlightSection(live) : ''}</div>`;
}

function queueSection(queue: Awaited<ReturnType<typeof listHumanQueue>>, totals: QueueTotals): Html {
  return html`<section id="queue" aria-labelledby="queue-title"${polling('queue')}><h2 id="queue-title">Parked and review payouts (oldest first)</h2>
<p data-testid="queue-totals">${totals.payouts === 0 ? 'Nothing waits for ops.' : html`<strong>${payoutsWord(totals.payouts)}, ${totals.amount.rupees} waiting</strong> (${totals.parked} parked, ${totals.review} in review)${queue.next ? ' · the oldest 200 are shown' : ''}.`}</p>
<table><thead><tr><th scope="col">Order</th><th scope="col">Vendor</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Why it waits</th><th scope="col">Next step</th><th scope="col" class="num">Waiting</th><th scope="col" class="num">Attempts</th><th scope="col">Run</th><th scope="col">Decide</th></tr></thead>
<tbody>${queue.items.length === 0 ? html`<tr><td colspan="10">Nothing waits for ops.</td></tr>` : queue.items.map((i) => html`<tr data-order-id="${i.orderId}">
<td><a href="/console/payouts/${i.orderId}">${i.orderId}</a></td><td>${i.vendorId}</td><td>${i.status}</td><td class="num">${i.amount.rupees}</td>
<td>${i.reason.words}${i.reason.code ? html`<br><code>${i.reason.code}</code> · decided by ${decidedByWords(i.reason.decidedBy)}` : ''}</td><td>${i.reason.nextStep}</td><td class="num">${formatAge(i.ageSeconds)}</td><td class="num">${i.attempts}</td>
<td><a href="${i.webUiUrl}" target="_blank" rel="noopener">Web UI<span class="skip"> run of ${i.orderId}</span></a></td>
<td>${OPS_ACTIONS.map((a) => html`<a class="button secondary" href="/console/payouts/${i.orderId}/decide/${PATH_OF_ACTION[a]}" aria-label="${ACTION_WORDS[a].label}: ${i.orderId}">${ACTION_WORDS[a].label}</a> `)}</td></tr>`)}</tbody></table></section>`;
}

export async function opsPages(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const cap = deps.config.PAYOUT_ATTEMPT_CAP;
  // Fetches the transfer a mark-paid decision names; lists transfers before a pay-offline one.
  const gateway = deps.gateway ?? createGateway(deps.config);

  const links = { temporalUiUrl: deps.config.TEMPORAL_UI_URL, namespace: deps.config.TEMPORAL_NAMESPACE };
  /** The switch's state, read once, and its live part drawn from it. */
  const liveSwitch = async () => {
    const sw = await readTransferSwitch(deps.db);
    return { paused: sw.paused, part: switchLive(sw, sw.paused ? await requestsPastTheGate(deps.db) : null) };
  };
  const LIVE: Record<LivePart, () => Promise<Html>> = {
    switch: async () => (await liveSwitch()).part,
    backlog: async () => backlogSection(await readBacklogReport(deps.db, deps.config)),
    queue: async () => {
      const [queue, totals] = await Promise.all([listHumanQueue(deps.db, { limit: 200 }, links), humanQueueTotals(deps.db)]);
      return queueSection(queue, totals);
    },
  };

  app.get('/console/payouts', consoleRoute('ops', 'Console: the payout queue and the kill switch (live: each part polls)'), async (request, reply) => {
    const session = sessionOf(request);
    const [{ paused, part: live }, backlog, queue] = await Promise.all([liveSwitch(), LIVE.backlog(), LIVE.queue()]);
    const done = switchedQuery.parse(request.query ?? {});
    return sendPage(reply, page({
      title: 'Payout queue', session, current: '/console/payouts',
      body: html`${done.switched ? html`<p class="notice" role="status">Direct transfers ${done.switched} (audited).${done.switched === 'paused' && done.inFlight !== undefined ? html` ${pauseSnapshotWords(done.inFlight)}` : ''}</p>` : ''}
<section aria-labelledby="switch-title"><fieldset><legend id="switch-title">Kill switch for direct transfers</legend>
${live}
<form method="post" action="/console/transfers/${paused ? 'resume' : 'pause'}" class="inline">${csrfField(session)}
<label for="switch-reason">Reason</label><input id="switch-reason" name="reason" required minlength="3" maxlength="500" size="50">
<button type="submit" class="${paused ? '' : 'danger'}">${paused ? 'Resume direct transfers' : 'Pause direct transfers'}</button></form></fieldset></section>
${backlog}
${queue}`,
    }));
  });

  // The parts of the queue page that watch moving numbers, each polled by its own element.
  app.get('/console/payouts/live/:part', consoleRoute('ops', 'Console: a live part of the payout queue page (an htmx fragment: switch, backlog or queue)'), async (request, reply) => {
    const { part } = livePartParams.parse(request.params);
    if (part !== 'switch') return sendPage(reply, (await LIVE[part]()).text);
    const now = await liveSwitch();
    // The switch flipped elsewhere: the form under it must flip too, so the whole page reloads.
    const was = shownPausedQuery.parse(request.query ?? {}).paused;
    if (request.headers['hx-request'] && was !== undefined && (was === 'true') !== now.paused) reply.header('hx-refresh', 'true');
    return sendPage(reply, now.part.text);
  });

  for (const [path, paused] of [['pause', true], ['resume', false]] as const) {
    app.post(`/console/transfers/${path}`, consoleRoute('ops', `Console: ${path} direct transfers with a reason (audited)`), async (request, reply) => {
      const { reason } = reasonBody.parse(request.body ?? {});
      const actor = auditActor(request);
      if (paused) {
        // The count at the moment of the pause travels with the redirect; the page lists those still unanswered.
        const { inFlight } = await pauseTransfers(deps.db, { actor, reason });
        return reply.redirect(`/console/payouts?switched=paused&inFlight=${inFlight.count}`, 303);
      }
      await setTransfersPaused(deps.db, { paused, actor, reason });
      await sweepAfterResume(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE);
      return reply.redirect('/console/payouts?switched=resumed', 303);
    });
  }

  app.get('/console/payouts/:orderId', consoleRoute('ops', "Console: one payout's attempts, decisions and order"), async (request, reply) => {
    const session = sessionOf(request);
    const { orderId } = orderParams.parse(request.params);
    const payout = await findPayoutByOrder(deps.db, orderId, cap);
    if (!payout) throw new AppError(404, 'payout_not_found', `no payout for order ${orderId}`);
    const [attempts, actions, order, batch, trace] = await Promise.all([
      deps.db.query<{ attempt_no: number; outcome: string; provider_code: string | null; provider_transfer_id: string | null; raw: unknown; created_at: Date }>(
        'SELECT attempt_no, outcome, provider_code, provider_transfer_id, raw, created_at FROM payout_attempts WHERE payout_id = $1 ORDER BY id', [payout.id]),
      deps.db.query<{ actor: string; action: string; reason: string | null; reference: string | null; created_at: Date }>(
        'SELECT actor, action, reason, reference, created_at FROM review_actions WHERE payout_id = $1 ORDER BY id', [payout.id]),
      orderView(deps.db, orderId),
      batchOfPayoutKey(deps.db, orderId),
      traceSection(deps, orderId, isBatchKey(orderId)),
    ]);
    const waiting = awaitsHuman(payout.status);
    const reason = waiting ? explainPayoutCode(payout.lastCode, payout.status) : null;
    // Pending or failed: no decision is waited for, but finance may pay it by hand (e.g. while paused).
    const payableByHand = !waiting && statusesAllowing({ type: 'ops_pay_offline' }).includes(payout.status);
    const decided = z.object({ decided: z.enum(OPS_ACTIONS).optional(), already: z.string().optional() }).parse(request.query ?? {});
    return sendPage(reply, page({
      title: `Payout for ${orderId}`, session, current: '/console/payouts',
      body: html`${decided.decided ? html`<p class="notice" role="status">${ACTION_WORDS[decided.decided].label}: ${decided.already ? 'already in effect' : 'done'} (audited).</p>` : ''}
<p><a href="/console/payouts">← Back to the queue</a> · <a href="${webUiUrl(deps, orderId)}" target="_blank" rel="noopener">Temporal Web UI: ${payoutWorkflowId(orderId)}</a> · <a href="#trace">its trace</a></p>
<table><tbody>
<tr><th scope="row">Status</th><td data-testid="payout-status">${payout.status}</td></tr>
<tr><th scope="row">Amount</th><td>${formatRupees(payout.amountPaise)}</td></tr>
<tr><th scope="row">Vendor / linked account</th><td>${payout.vendorId} / <code>${payout.linkedAccountId}</code></td></tr>
<tr><th scope="row">Attempts</th><td>${payout.attempts} of ${payout.attemptLimit}</td></tr>
<tr><th scope="row">Last code</th><td><code>${payout.lastCode ?? '—'}</code>${reason ? html` — ${reason.words} (decided by ${decidedByWords(reason.decidedBy)}). Next: ${reason.nextStep}` : ''}</td></tr>
<tr><th scope="row">Provider transfer</th><td><code>${payout.providerTransferId ?? '—'}</code>${payout.externalReference ? html` · external reference <code>${payout.externalReference}</code>` : ''}</td></tr>
</tbody></table>
${waiting ? html`<p>${OPS_ACTIONS.map((a) => html`<a class="button secondary" href="/console/payouts/${orderId}/decide/${PATH_OF_ACTION[a]}">${ACTION_WORDS[a].label}</a> `)}</p>` : ''}
${payableByHand ? html`<p>Not paid yet: its run sends the transfer when it is due${payout.nextAttemptAt ? ` (${formatIst(payout.nextAttemptAt)})` : ''}, or waits while transfers are paused. To have finance pay it by hand instead: <a class="button secondary" href="/console/payouts/${orderId}/decide/${PATH_OF_ACTION.pay_offline}">${ACTION_WORDS.pay_offline.label}</a></p>` : ''}
<h2>Attempts</h2>
<table><thead><tr><th scope="col" class="num">#</th><th scope="col">Outcome</th><th scope="col">Provider code</th><th scope="col">Transfer</th><th scope="col">At</th><th scope="col">Raw answer</th></tr></thead>
<tbody>${attempts.rows.length ? attempts.rows.map((a) => html`<tr><td class="num">${a.attempt_no}</td><td>${a.outcome}</td><td><code>${a.provider_code ?? '—'}</code></td><td><code>${a.provider_transfer_id ?? '—'}</code></td><td>${formatIst(a.created_at)}</td>
<td>${a.raw === null ? '—' : html`<details><summary>show</summary><pre>${JSON.stringify(a.raw, null, 2)}</pre></details>`}</td></tr>`) : html`<tr><td colspan="6">No attempt yet.</td></tr>`}</tbody></table>
<h2>Decisions</h2>
<table><thead><tr><th scope="col">At</th><th scope="col">Who</th><th scope="col">Decision</th><th scope="col">Reason</th><th scope="col">Reference</th></tr></thead>
<tbody>${actions.rows.length ? actions.rows.map((r) => html`<tr><td>${formatIst(r.created_at)}</td><td>${r.actor}</td><td>${r.action}</td><td>${r.reason ?? ''}</td><td>${r.reference ?? ''}</td></tr>`) : html`<tr><td colspan="5">No decision yet.</td></tr>`}</tbody></table>
${batch ? batchSection(batch, orderId) : ''}
${trace}
${batch && !order ? '' : html`<h2>The order it pays</h2>
${order ? html`<table><tbody>
<tr><th scope="row">Order</th><td>${order.orderId} (${order.status}, ${order.paymentMethod}${order.paidVia ? `, paid via ${order.paidVia}` : ''})</td></tr>
<tr><th scope="row">Employer / vendor / employee</th><td>${order.employerId} / ${order.vendorId} / ${order.employeeId}</td></tr>
<tr><th scope="row">Total / subsidy / customer share</th><td>${formatRupees(order.totalPaise)} / ${formatRupees(order.subsidyPaise)} / ${formatRupees(order.customerSharePaise)}</td></tr>
<tr><th scope="row">Commission / vendor net</th><td>${formatRupees(order.commissionPaise)} (${order.commissionBps / 100}%) / ${formatRupees(order.vendorNetPaise)}</td></tr>
<tr><th scope="row">Paid at</th><td>${formatIst(order.paidAt)}</td></tr></tbody></table>` : html`<p>No order ${orderId}.</p>`}`}`,
    }));
  });

  const decidePage = (request: Parameters<typeof sessionOf>[0], orderId: string, action: OpsAction, summary: Html, error?: string) => {
    const session = sessionOf(request);
    const words = ACTION_WORDS[action];
    return page({
      title: `${words.label}: ${orderId}`, session, current: '/console/payouts',
      body: html`${error ? html`<p class="error" role="alert">${error}</p>` : ''}${summary}
<form method="post" action="/console/payouts/${orderId}/decide/${PATH_OF_ACTION[action]}" aria-label="Confirm ${words.label}"><fieldset><legend>Confirm: ${words.label}</legend>
<p>${words.explain}</p>${csrfField(session)}
<div class="field"><label for="reason">Reason (required, audited)</label><input id="reason" name="reason" required minlength="3" maxlength="500" size="70" autofocus></div><br>
${action === 'mark_paid_externally' ? html`<p>Give the transfer id, the reference, or both.</p>
<div class="field"><label for="transferId">Razorpay transfer id that paid it (<code>trf_…</code>, from the dashboard)</label><input id="transferId" name="transferId" pattern="trf_[A-Za-z0-9]{14}" maxlength="18" size="24" spellcheck="false" autocomplete="off"></div><br>
<div class="field"><label for="reference">Bank or other reference of the payment made</label><input id="reference" name="reference" minlength="3" maxlength="100" size="40"></div><br>` : ''}
<button type="submit" class="${action === 'cancel' ? 'danger' : ''}">Confirm ${words.label.toLowerCase()}</button> <a class="button secondary" href="/console/payouts/${orderId}">Go back, do nothing</a></fieldset></form>`,
    });
  };

  app.get('/console/payouts/:orderId/decide/:action', consoleRoute('ops', 'Console: confirm a decision on a payout (the confirm step)'), async (request, reply) => {
    const { orderId, action: path } = decideParams.parse(request.params);
    const payout = await findPayoutByOrder(deps.db, orderId, cap);
    if (!payout) throw new AppError(404, 'payout_not_found', `no payout for order ${orderId}`);
    const summary = html`<p>Payout of <strong>${formatRupees(payout.amountPaise)}</strong> to ${payout.vendorId} is <strong>${payout.status}</strong>${payout.lastCode ? html` (<code>${payout.lastCode}</code>)` : ''}.</p>`;
    return sendPage(reply, decidePage(request, orderId, ACTION_OF_PATH[path]!, summary));
  });

  app.post('/console/payouts/:orderId/decide/:action', consoleRoute('ops', 'Console: decide on a parked or review payout, or pay a pending or failed one offline (audited, then signalled to its run)'), async (request, reply) => {
    const { orderId, action: path } = decideParams.parse(request.params);
    const action = ACTION_OF_PATH[path]!;
    const body = decisionBody.parse(request.body ?? {});
    const markPaid = action === 'mark_paid_externally';
    if (markPaid && !body.reference && !body.transferId) throw new AppError(400, 'invalid_request', 'mark paid externally needs the Razorpay transfer id, the reference of the payment made, or both');
    const actor = auditActor(request);
    // Asked before the decision's transaction: no transaction waits on the provider.
    const transfer = markPaid && body.transferId ? await fetchTransferEvidence(gateway, body.transferId) : undefined;
    const result = await decideOnPayout(deps.db, gateway, { orderId, action, actor, reason: body.reason, reference: markPaid ? body.reference : undefined, transfer }, cap);
    if (result.kind !== 'applied' && result.kind !== 'already_in_effect') throw decisionNotTaken(orderId, result);
    if (result.kind === 'applied') await signalDecisionAfterCommit(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE, orderId, { action, actor }, result.decidedFrom);
    return reply.redirect(`/console/payouts/${encodeURIComponent(orderId)}?decided=${action}${result.kind === 'already_in_effect' ? '&already=1' : ''}`, 303);
  });
}
