/** The CLI's one way to the Payouts API: fetch with the API key and the person (X-Actor), every
 * answer checked with zod, and every failure turned into one line a person can act on — the app's
 * error envelope `{ error: { code, message, details? } }`, an unreachable API, or an answer of an
 * unexpected shape. Schemas keep unknown fields (`--json` prints what the API said). */
import { z } from 'zod';
import type { OpsAction } from '../../contracts/payout';
import type { ReconProgress } from '../../contracts/recon';
import { statementSchema } from '../../statements/contract';

/** The API answered with an error (any non-2xx). */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(readonly status: number, readonly code: string, message: string, readonly details?: unknown) {
    super(message);
  }
  /** `409 payout_not_awaiting_decision: payout is settled; …` plus validation issues, on one line. */
  oneLine(): string {
    return `${this.status} ${this.code}: ${this.message}${describeIssues(this.details)}`;
  }
}

/** No answer at all: refused, DNS, timeout. */
export class ApiUnreachable extends Error {
  override name = 'ApiUnreachable';
}

/** A 2xx answer that is not what this CLI understands (a proxy page, another version of the API). */
export class UnexpectedAnswer extends Error {
  override name = 'UnexpectedAnswer';
}

const envelopeSchema = z.object({ error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }) });
const issueSchema = z.array(z.object({ path: z.array(z.union([z.string(), z.number()])).optional(), message: z.string() }));

function describeIssues(details: unknown): string {
  const issues = issueSchema.safeParse(details);
  if (!issues.success || issues.data.length === 0) return '';
  const shown = issues.data.slice(0, 3).map((i) => (i.path?.length ? `${i.path.join('.')}: ${i.message}` : i.message));
  return ` (${shown.join('; ')}${issues.data.length > 3 ? `; ${issues.data.length - 3} more` : ''})`;
}

const text = z.string();
const nullableText = z.string().nullable();
const int = z.number().int();

const queueItemSchema = z.looseObject({
  orderId: text, payoutId: text, vendorId: text, linkedAccountId: text, status: text,
  amount: z.looseObject({ paise: int, rupees: text }),
  reason: z.looseObject({ code: nullableText, words: text, nextStep: text, decidedBy: z.enum(['razorpay', 'app']).optional() }),
  waitingSince: text, ageSeconds: z.number(), attempts: int,
  lastAttempt: z.looseObject({ outcome: text, providerCode: nullableText, at: text }).nullable(),
  workflowId: text, webUiUrl: text,
});
export type QueueItem = z.infer<typeof queueItemSchema>;
const queuePageSchema = z.looseObject({ items: z.array(queueItemSchema), next: nullableText });

const payoutSchema = z.looseObject({
  id: text, orderId: text, vendorId: text, linkedAccountId: text, amountPaise: int, status: text, attempts: int, attemptLimit: int,
  providerTransferId: nullableText, lastCode: nullableText, externalReference: nullableText, nextAttemptAt: nullableText,
});
const batchSchema = z.looseObject({
  batchId: text, employerId: text, vendorId: text, schedule: text, windowStart: text, cutoffAt: text, status: text, closedAt: nullableText,
  orderCount: int, totalPaise: int,
  payout: z.looseObject({ id: text, status: text, attempts: int, providerTransferId: nullableText, lastCode: nullableText }).nullable(),
});
const batchWithOrdersSchema = batchSchema.extend({ orders: z.array(z.looseObject({ orderId: text, amountPaise: int, status: text, joinedAt: text })) });
export type BatchWithOrders = z.infer<typeof batchWithOrdersSchema>;
export type Batch = z.infer<typeof batchSchema>;

const payoutDetailSchema = z.looseObject({
  payout: payoutSchema,
  reason: z.looseObject({ code: nullableText, words: text, nextStep: text, decidedBy: z.enum(['razorpay', 'app']).optional() }).optional(),
  order: z.looseObject({
    orderId: text, totalPaise: int, subsidyPaise: int, customerSharePaise: int, commissionBps: int, commissionPaise: int, vendorNetPaise: int,
    paymentMethod: text, status: text, paidVia: nullableText, paidAt: nullableText,
  }).nullable(),
  attempts: z.array(z.looseObject({ attempt_no: int, outcome: text, provider_code: nullableText, provider_transfer_id: nullableText, created_at: text })),
  reviewActions: z.array(z.looseObject({ actor: text, action: text, reason: nullableText, reference: nullableText, created_at: text })),
  workflowId: text,
  webUiUrl: text.optional(),
  /** The batch that pays it, or for a batch's own payout the orders it pays (absent before batches). */
  batch: batchWithOrdersSchema.nullable().optional(),
});
export type PayoutDetail = z.infer<typeof payoutDetailSchema>;

const decisionSchema = z.looseObject({ payout: payoutSchema, alreadyInEffect: z.boolean() });
const bulkDecisionSchema = z.looseObject({ action: text, results: z.array(z.looseObject({ orderId: text, result: text, status: nullableText })) });
export type BulkDecision = z.infer<typeof bulkDecisionSchema>;

const switchSchema = z.looseObject({ paused: z.boolean(), reason: nullableText, changedBy: nullableText, changedAt: text });
export type TransferSwitch = z.infer<typeof switchSchema>;
const resumeSchema = switchSchema.extend({ sweep: z.looseObject({ workflowId: text }).nullable().optional() });
const pauseSchema = switchSchema.extend({
  inFlight: z.looseObject({
    count: int,
    payouts: z.array(z.looseObject({ orderId: text, payoutId: text, amountPaise: int, linkedAccountId: text, claimedAt: nullableText, requestSentAt: text, outcome: nullableText })),
  }),
});
export type PauseAnswer = z.infer<typeof pauseSchema>;

const auditSchema = z.looseObject({
  entries: z.array(z.looseObject({ at: text, actor: text, kind: text, action: text, subject: nullableText, reason: nullableText, reference: nullableText })),
});
export type AuditEntry = z.infer<typeof auditSchema>['entries'][number];

export const reconProgressSchema = z.looseObject({
  phase: z.enum(['starting', 'pulling', 'matching', 'completed']),
  daysTotal: int, daysPulled: int, rowsFetched: int, settlementsFetched: int, matched: int, exceptions: int,
}) satisfies z.ZodType<ReconProgress>;
const reconStartedSchema = z.looseObject({ workflowId: text, runId: text });
const reconRunSchema = z.looseObject({
  workflowId: text,
  live: z.looseObject({ status: text, progress: reconProgressSchema.nullable() }).nullable(),
  runs: z.array(z.looseObject({ run_id: text, status: text, from: text, to: text, as_of: nullableText, summary: z.unknown(), started_at: text, finished_at: nullableText })),
});
export type ReconRun = z.infer<typeof reconRunSchema>;

const exceptionSchema = z.looseObject({
  id: int, key: text, class: text, reason: text, severity: text, nextAction: text, status: text, day: text,
  entityId: nullableText, settlementId: nullableText, orderId: nullableText, bankLineId: int.nullable(),
  expectedPaise: int.nullable(), actualPaise: int.nullable(), details: z.unknown(),
  resolvedAt: nullableText, resolvedBy: nullableText, resolutionNote: nullableText,
});
export type ReconException = z.infer<typeof exceptionSchema>;
const exceptionPageSchema = z.looseObject({ exceptions: z.array(exceptionSchema), next: int.nullable() });

const bankImportSchema = z.looseObject({ importId: int, duplicateFile: z.boolean(), lineCount: int, linesAdded: int });
export type BankImport = z.infer<typeof bankImportSchema>;
const settlementProgressSchema = z.looseObject({
  phase: z.enum(['freezing', 'awaiting_bank', 'closed', 'cancelled']), batchId: nullableText,
  lines: int, open: int, paid: int, failed: int, cancelled: int, amountPaise: int, paidPaise: int, skippedVendors: int,
});
const settlementRunSchema = z.looseObject({
  workflowId: text, live: z.looseObject({ status: text, progress: settlementProgressSchema.nullable() }).nullable(), batchIds: z.array(text),
});
const settlementLineSchema = z.looseObject({
  reference: text, vendorId: text, vendorName: text, amountPaise: int, members: int, beneficiaryName: text, ifsc: text, accountMasked: text,
  status: z.enum(['open', 'paid', 'failed', 'cancelled']), utr: nullableText, paidOn: nullableText, failureReason: nullableText,
});
const settlementBatchSchema = z.looseObject({
  id: text, workflowId: text, from: text, to: text, status: z.enum(['open', 'closed', 'cancelled']), createdBy: text, createdAt: text,
  skipped: z.array(z.looseObject({ vendorId: text, netPaise: int, lines: int, reason: text })),
  totals: z.looseObject({ lines: int, open: int, paid: int, failed: int, cancelled: int, amountPaise: int, paidPaise: int, openPaise: int }),
  lines: z.array(settlementLineSchema),
  // Absent from an older API: read as never downloaded.
  bankFile: z.looseObject({ downloads: int, lastDownloadedAt: text, lastDownloadedBy: text }).nullable().optional(),
});
export type SettlementBatch = z.infer<typeof settlementBatchSchema>;
const settlementBatchListSchema = z.looseObject({
  batches: z.array(z.looseObject({ id: text, from: text, to: text, status: text, createdBy: text, createdAt: text, lines: int, amountPaise: int, paidPaise: int, openLines: int })),
});
const settlementDecisionSchema = z.looseObject({ reference: text, batchId: text, status: text, alreadyRecorded: z.boolean(), batchStatus: text });
export type SettlementDecision = z.infer<typeof settlementDecisionSchema>;

/** The `details` of a 400 invalid_bank_statement. */
export const bankProblemsSchema = z.object({ problems: z.array(z.object({ line: int, message: text })) });

export type OpsDecisionPath = 'retry' | 'mark-paid-externally' | 'pay-offline' | 'cancel';
type Query = Record<string, string | number | undefined>;

export interface ApiClientOptions {
  apiUrl: string;
  key: string;
  /** Sent as X-Actor: the person beside the key's name in audit rows. */
  actor?: string;
  timeoutMs?: number;
  /** Added to "cannot reach the API" (e.g. where the URL came from). */
  unreachableHint?: string;
  fetch?: typeof fetch;
}

export function createApiClient(opts: ApiClientOptions) {
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? 30_000;

  async function call<T>(method: 'GET' | 'POST', path: string, schema: z.ZodType<T>, input: { query?: Query; body?: unknown; raw?: boolean } = {}): Promise<T> {
    const url = new URL(opts.apiUrl + path);
    for (const [name, value] of Object.entries(input.query ?? {})) if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { authorization: `Bearer ${opts.key}`, accept: input.raw ? 'text/csv, application/json' : 'application/json' };
    if (opts.actor) headers['x-actor'] = opts.actor;
    if (input.body !== undefined) headers['content-type'] = 'application/json';
    const what = `${method} ${path}`;
    let response: Response;
    try {
      response = await doFetch(url, { method, headers, body: input.body === undefined ? undefined : JSON.stringify(input.body), signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      const hint = opts.unreachableHint ? `; ${opts.unreachableHint}` : '';
      throw new ApiUnreachable(`${unreachableMessage(opts.apiUrl, what, err, timeoutMs)}${hint}`);
    }
    const raw = await response.text();
    let json: unknown;
    try {
      json = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      json = undefined;
    }
    if (!response.ok) {
      const envelope = envelopeSchema.safeParse(json);
      if (envelope.success) throw new ApiError(response.status, envelope.data.error.code, envelope.data.error.message, envelope.data.error.details);
      throw new ApiError(response.status, 'http_error', `${what} answered HTTP ${response.status} without the API's error envelope: ${raw.replace(/\s+/g, ' ').slice(0, 120)}`);
    }
    // `raw`: the body itself (a file such as the bank file); errors still come as the envelope.
    const parsed = schema.safeParse(input.raw ? raw : json);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw new UnexpectedAnswer(`unexpected answer to ${what} from ${opts.apiUrl}: ${first ? `${first.path.join('.') || 'body'}: ${first.message}` : 'bad shape'}`);
    }
    return parsed.data;
  }

  return {
    queuePage: (filter: Query) => call('GET', '/ops/payouts', queuePageSchema, { query: filter }),
    payout: (orderId: string) => call('GET', `/ops/payouts/${encodeURIComponent(orderId)}`, payoutDetailSchema),
    decide: (orderId: string, path: OpsDecisionPath, body: { reason: string; reference?: string; transferId?: string }) =>
      call('POST', `/ops/payouts/${encodeURIComponent(orderId)}/${path}`, decisionSchema, { body }),
    decideMany: (body: { action: OpsAction; orderIds: string[]; reason: string; reference?: string }) => call('POST', '/ops/payouts/decisions', bulkDecisionSchema, { body }),
    batches: (filter: Query) => call('GET', '/ops/batches', z.looseObject({ batches: z.array(batchSchema) }), { query: filter }),
    closeBatch: (batchId: string, reason: string) => call('POST', `/ops/batches/${encodeURIComponent(batchId)}/close`, z.looseObject({ batch: batchWithOrdersSchema, closing: z.boolean() }), { body: { reason } }),
    transferSwitch: () => call('GET', '/ops/transfers/switch', switchSchema),
    pauseTransfers: (reason: string) => call('POST', '/ops/transfers/pause', pauseSchema, { body: { reason } }),
    resumeTransfers: (reason: string) => call('POST', '/ops/transfers/resume', resumeSchema, { body: { reason } }),
    audit: (filter: Query) => call('GET', '/ops/audit', auditSchema, { query: filter }),
    startRecon: (window: { from: string; to: string; asOf?: string }) => call('POST', '/finance/recon/runs', reconStartedSchema, { body: window }),
    reconRun: (workflowId: string) => call('GET', `/finance/recon/runs/${encodeURIComponent(workflowId)}`, reconRunSchema),
    exceptionPage: (filter: Query) => call('GET', '/finance/recon/exceptions', exceptionPageSchema, { query: filter }),
    resolveException: (id: number, note: string) => call('POST', `/finance/recon/exceptions/${id}/resolve`, exceptionSchema, { body: { note } }),
    /** JSON rather than a text/csv body: the same import, and the file's name reaches the audit row. */
    importBankStatement: (fileName: string, csv: string) => call('POST', '/finance/bank-statements', bankImportSchema, { body: { fileName, csv } }),
    /** Always JSON: the CLI writes the CSV itself, with the module the API's format=csv uses. */
    startSettlement: (body: { from: string; to: string; vendorIds?: string[] }) => call('POST', '/finance/settlement/runs', reconStartedSchema, { body }),
    settlementRun: (workflowId: string) => call('GET', `/finance/settlement/runs/${encodeURIComponent(workflowId)}`, settlementRunSchema),
    settlementBatches: (query: Query) => call('GET', '/finance/settlement/batches', settlementBatchListSchema, { query }),
    settlementBatch: (batchId: string) => call('GET', `/finance/settlement/batches/${encodeURIComponent(batchId)}`, settlementBatchSchema),
    settlementBankFile: (batchId: string) => call('GET', `/finance/settlement/batches/${encodeURIComponent(batchId)}/bank-file`, text, { raw: true }),
    cancelSettlement: (batchId: string, body: { reason: string; confirmNotSubmitted?: boolean }) => call('POST', `/finance/settlement/batches/${encodeURIComponent(batchId)}/cancel`, settlementBatchSchema, { body }),
    settlementPaid: (reference: string, body: { utr: string; paidOn: string; amountPaise?: number }) => call('POST', `/finance/settlement/lines/${encodeURIComponent(reference)}/paid`, settlementDecisionSchema, { body }),
    settlementFailed: (reference: string, body: { reason: string }) => call('POST', `/finance/settlement/lines/${encodeURIComponent(reference)}/failed`, settlementDecisionSchema, { body }),
    importBankResponse: (fileName: string, csv: string) => call('POST', '/finance/settlement/bank-responses', z.looseObject({ results: z.array(settlementDecisionSchema) }), { body: { fileName, csv } }),
    statement: (vendorId: string, period: { from: string; to: string }) => call('GET', `/v1/vendors/${encodeURIComponent(vendorId)}/statement`, statementSchema, { query: period }),
  };
}
export type ApiClient = ReturnType<typeof createApiClient>;

/** Walks a cursor-paged listing to its end; `onPage` sees the running total (progress on long lists). */
export async function allPages<T, C>(fetchPage: (after: C | undefined) => Promise<{ rows: T[]; next: C | null }>, onPage?: (total: number) => void): Promise<T[]> {
  const rows: T[] = [];
  let after: C | undefined;
  for (;;) {
    const page = await fetchPage(after);
    rows.push(...page.rows);
    onPage?.(rows.length);
    if (page.next === null || page.rows.length === 0) return rows;
    after = page.next;
  }
}

function unreachableMessage(apiUrl: string, what: string, err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return `the API at ${apiUrl} did not answer ${what} within ${timeoutMs / 1000} s`;
  const cause = err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return `cannot reach the API at ${apiUrl} (${why})`;
}
