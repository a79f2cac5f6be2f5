/** Recon exceptions as a finance CSV: one header row, RFC 4180 quoting, CRLF line ends, amounts in
 * rupees with Indian digit grouping beside exact paise, times in IST (ISO with +05:30), and the references finance looks things up
 * by (UTR, payment, refund, transfer and settlement ids) in their own columns. One module for the
 * API's export (GET /finance/recon/exceptions.csv) and the CLI's `recon exceptions --format csv`,
 * so both write the same file. */
import { csvField, csvFile, rupeesCell, spreadsheetSafe, type CsvCell } from './csv';
import type { Db } from '../db/pool';
import { isoIst } from '../domain/istTime';
import { listExceptions, type ExceptionFilter, type ReconExceptionView } from '../recon/exceptions';
import type { Severity } from '../recon/reasons';

export type ExceptionForReport = Pick<ReconExceptionView,
  'id' | 'day' | 'status' | 'class' | 'severity' | 'reason' | 'nextAction' | 'entityId' | 'settlementId' | 'orderId' | 'bankLineId'
  | 'expectedPaise' | 'actualPaise' | 'details' | 'resolvedAt' | 'resolvedBy' | 'resolutionNote'>;

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const satisfies readonly Severity[];

export interface ExceptionReferences {
  utr: string | null;
  paymentId: string | null;
  refundId: string | null;
  transferId: string | null;
  settlementId: string | null;
}

const detail = (details: unknown, name: string): string | null => {
  const value = details && typeof details === 'object' ? (details as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' && value !== '' ? value : null;
};
const withPrefix = (id: string | null, prefix: string): string | null => (id?.startsWith(prefix) ? id : null);

/** The gateway's ids by kind: the entity id says what it is by its prefix (Razorpay's `pay_`,
 * `rfnd_`, `trf_`, `setl_`); a refund or transfer row names its payment in details. */
export function exceptionReferences(e: Pick<ExceptionForReport, 'entityId' | 'settlementId' | 'details'>): ExceptionReferences {
  return {
    utr: detail(e.details, 'utr'),
    paymentId: withPrefix(e.entityId, 'pay_') ?? detail(e.details, 'paymentId') ?? detail(e.details, 'sourcePaymentId'),
    refundId: withPrefix(e.entityId, 'rfnd_'),
    transferId: withPrefix(e.entityId, 'trf_'),
    settlementId: e.settlementId ?? withPrefix(e.entityId, 'setl_'),
  };
}

/** What the gateway or bank says minus what we expected, when both sides are known. */
export function differencePaise(e: Pick<ExceptionForReport, 'expectedPaise' | 'actualPaise'>): number | null {
  return e.expectedPaise === null || e.actualPaise === null ? null : e.actualPaise - e.expectedPaise;
}

// The paise column beside each rupees column is the exact value.
export { csvField, rupeesCell };

const COLUMNS: Array<[header: string, value: (e: ExceptionForReport, refs: ExceptionReferences) => CsvCell]> = [
  ['id', (e) => e.id],
  ['day', (e) => e.day],
  ['status', (e) => e.status],
  ['class', (e) => e.class],
  ['severity', (e) => e.severity],
  ['reason', (e) => e.reason],
  ['expected_rupees', (e) => rupeesCell(e.expectedPaise)],
  ['expected_paise', (e) => e.expectedPaise],
  ['actual_rupees', (e) => rupeesCell(e.actualPaise)],
  ['actual_paise', (e) => e.actualPaise],
  ['difference_rupees', (e) => rupeesCell(differencePaise(e))],
  ['difference_paise', (e) => differencePaise(e)],
  ['utr', (_e, r) => r.utr],
  ['payment_id', (_e, r) => r.paymentId],
  ['refund_id', (_e, r) => r.refundId],
  ['transfer_id', (_e, r) => r.transferId],
  ['settlement_id', (_e, r) => r.settlementId],
  ['entity_id', (e) => e.entityId],
  ['order_id', (e) => e.orderId],
  ['bank_line_id', (e) => e.bankLineId],
  ['next_action', (e) => e.nextAction],
  ['resolved_at', (e) => isoIst(e.resolvedAt)],
  ['resolved_by', (e) => spreadsheetSafe(e.resolvedBy)],
  ['resolution_note', (e) => spreadsheetSafe(e.resolutionNote)],
];

export const EXCEPTION_CSV_HEADER: readonly string[] = COLUMNS.map(([header]) => header);

function exceptionCells(e: ExceptionForReport): CsvCell[] {
  const refs = exceptionReferences(e);
  return COLUMNS.map(([, value]) => value(e, refs));
}

/** The whole file: the header row even when there are no exceptions. */
export function exceptionsCsv(rows: readonly ExceptionForReport[]): string {
  return csvFile(EXCEPTION_CSV_HEADER, rows.map(exceptionCells));
}

/** Every exception matching the filter (paged through whole), optionally of one severity: what an
 * export (the API's CSV, the console's) contains. */
export async function listAllExceptions(db: Db, { severity, ...filter }: Omit<ExceptionFilter, 'limit' | 'after'> & { severity?: Severity }): Promise<ReconExceptionView[]> {
  const PAGE = 1_000;
  const rows: ReconExceptionView[] = [];
  for (let after = 0; ;) {
    const page = await listExceptions(db, { ...filter, limit: PAGE, after });
    rows.push(...(severity ? page.filter((e) => e.severity === severity) : page));
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.id;
  }
  return rows;
}
