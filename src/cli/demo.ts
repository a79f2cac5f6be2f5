/** The payouts demo: places issue 5's mix of orders through the API and the sandbox checkout — the
 * 99%-subsidy ₹100 order, an unsubsidised split, a cash order, a corporate_direct pair and a suspended
 * vendor that parks — prints each payout's route, status and Web UI link as it moves, and ends with
 * a per-vendor summary checked against the sandbox's own ledger. The stack command calls runDemo. */
import type { Client } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { payoutWorkflowId } from '../contracts/payout';
import type { ReconProgress } from '../contracts/recon';
import { istDateOf, settlementDueDate } from '../domain/calendar';
import { formatRupees } from '../domain/money';
import type { SandboxControl } from '../sandbox/control';

export interface DemoOptions {
  apiUrl: string;
  /** API keys: reference data (admin), orders and top-ups (ordering), lookups and the cash
   * confirmation on the vendor's behalf (ops). */
  keys: { admin: string; ordering: string; ops: string; finance?: string };
  sandboxControl: SandboxControl;
  client: Client;
  temporalUiUrl: string | null;
  log: (line: string) => void;
  /** How long to wait for each payout to reach a resting status. */
  timeoutMs?: number;
}

interface DemoOrder {
  label: string;
  vendorKey: string;
  employer: 'main' | 'corporate';
  totalPaise: number;
  subsidyPaise: number;
  paymentMethod: 'online' | 'wallet' | 'cash';
  expectedRoute: string;
}

const ORDERS: DemoOrder[] = [
  { label: '99%-subsidy ₹100 order', vendorKey: 'dosa', employer: 'main', totalPaise: 10_000, subsidyPaise: 9_900, paymentMethod: 'online', expectedRoute: 'direct transfer' },
  { label: 'unsubsidised ₹250 order', vendorKey: 'biryani', employer: 'main', totalPaise: 25_000, subsidyPaise: 0, paymentMethod: 'online', expectedRoute: 'split (Route transfer on the order)' },
  { label: 'cash ₹120 order, ₹20 subsidy', vendorKey: 'dosa', employer: 'main', totalPaise: 12_000, subsidyPaise: 2_000, paymentMethod: 'cash', expectedRoute: 'offline ledger (cash, signed)' },
  { label: 'corporate_direct ₹150 order', vendorKey: 'dosa', employer: 'corporate', totalPaise: 15_000, subsidyPaise: 15_000, paymentMethod: 'online', expectedRoute: 'obligation (employer pays)' },
  { label: 'suspended vendor ₹100 order', vendorKey: 'suspended', employer: 'main', totalPaise: 10_000, subsidyPaise: 9_000, paymentMethod: 'online', expectedRoute: 'direct transfer' },
];

const DEMO_BANK_DETAILS: Record<string, { accountNumber: string; ifsc: string; beneficiaryName: string }> = {
  dosa: { accountNumber: '50100000000601', ifsc: 'HDFC0000601', beneficiaryName: 'Dosa Corner' },
  biryani: { accountNumber: '31200000000602', ifsc: 'SBIN0000602', beneficiaryName: 'Biryani House' },
  suspended: { accountNumber: '00400000000603', ifsc: 'ICIC0000603', beneficiaryName: 'Shut Shack' },
};

export interface DemoSummaryRow {
  vendorId: string;
  linkedAccountId: string;
  /** Sum of our settled direct-transfer payouts plus expected splits. */
  ourPaise: number;
  /** Sum of processed transfers the sandbox holds for the vendor's account. */
  sandboxPaise: number;
  agrees: boolean;
}

export async function runDemo(opts: DemoOptions): Promise<DemoSummaryRow[]> {
  const { log, sandboxControl: sandbox } = opts;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const tag = randomBytes(3).toString('hex');
  const admin = apiCaller(opts.apiUrl, opts.keys.admin);
  const ordering = apiCaller(opts.apiUrl, opts.keys.ordering);
  const ops = apiCaller(opts.apiUrl, opts.keys.ops);

  log(`demo ${tag}: creating linked accounts in the sandbox and reference data through the admin API`);
  const accounts: Record<string, string> = {
    dosa: await sandbox.createLinkedAccount({ name: 'Dosa Corner' }),
    biryani: await sandbox.createLinkedAccount({ name: 'Biryani House' }),
    suspended: await sandbox.createLinkedAccount({ name: 'Shut Shack', status: 'suspended' }),
  };
  const vendorIds: Record<string, string> = { dosa: `ven_dosa_${tag}`, biryani: `ven_biryani_${tag}`, suspended: `ven_shut_${tag}` };
  const employers = { main: `emp_acme_${tag}`, corporate: `emp_globex_${tag}` };
  for (const [key, id] of Object.entries(employers)) await admin('POST', '/v1/admin/employers', { id, name: `${key} employer ${tag}` });
  for (const [key, id] of Object.entries(vendorIds)) await admin('POST', '/v1/admin/vendors', { id, name: `${key} ${tag}`, linkedAccountId: accounts[key] });
  // Every demo vendor can be paid by a settlement run's bank file (made-up accounts; stored encrypted, shown masked).
  for (const [key, id] of Object.entries(vendorIds)) await admin('PUT', `/v1/admin/vendors/${id}/bank-details`, DEMO_BANK_DETAILS[key]);
  log(`bank details set for ${Object.values(vendorIds).join(', ')} (GET /v1/admin/vendors/<id>/bank-details shows them masked)`);
  for (const key of Object.keys(vendorIds)) {
    await admin('PUT', `/v1/admin/employers/${employers.main}/vendors/${vendorIds[key]}`, { settlementMode: 'platform_transfer', commissionBps: 1_900 });
  }
  await admin('PUT', `/v1/admin/employers/${employers.corporate}/vendors/${vendorIds.dosa}`, { settlementMode: 'corporate_direct', commissionBps: 1_900 });

  for (const employerId of Object.values(employers)) {
    const { checkout } = await ordering('POST', `/v1/wallets/employer/${employerId}/top-ups`, { amountPaise: 100_000, clientReference: `topup-${employerId}` });
    await sandbox.payOrder(checkout.orderId);
    await until(async () => (await ordering('GET', `/v1/wallets/employer/${employerId}`)).wallet.balancePaise >= 100_000, timeoutMs, `wallet ${employerId} top-up`);
  }
  log('employer wallets topped up through the sandbox checkout');

  const placed: Array<{ demo: DemoOrder; orderId: string; vendorNetPaise: number }> = [];
  for (const [i, demo] of ORDERS.entries()) {
    const { order, checkout } = await ordering('POST', '/v1/orders', {
      clientReference: `demo-${tag}-${i}`, employerId: employers[demo.employer], vendorId: vendorIds[demo.vendorKey], employeeId: `employee-${i}`,
      totalPaise: demo.totalPaise, subsidyPaise: demo.subsidyPaise, customerSharePaise: demo.totalPaise - demo.subsidyPaise, paymentMethod: demo.paymentMethod,
    });
    if (checkout) await sandbox.payOrder(checkout.orderId);
    if (demo.paymentMethod === 'cash') await ops('POST', `/v1/orders/${order.orderId}/cash-confirmation`, {});
    placed.push({ demo, orderId: order.orderId, vendorNetPaise: order.vendorNetPaise });
    log(`${demo.label}: order ${order.orderId}, vendor net ${formatRupees(order.vendorNetPaise)}, route: ${demo.expectedRoute}`);
  }

  for (const { demo, orderId } of placed) {
    const link = opts.temporalUiUrl ? `${opts.temporalUiUrl}/namespaces/default/workflows/${payoutWorkflowId(orderId)}` : payoutWorkflowId(orderId);
    if (demo.expectedRoute !== 'direct transfer') {
      log(`  ${demo.label}: no direct transfer (${demo.expectedRoute})`);
      continue;
    }
    let seen = '';
    const resting = await until(async () => {
      const found = await ops('GET', `/ops/payouts/${orderId}`, undefined, [404]);
      const status: string = found?.payout?.status ?? 'waiting for money in';
      if (status !== seen) { seen = status; log(`  ${demo.label}: payout ${status}${found?.payout?.lastCode ? ` (${found.payout.lastCode})` : ''} — ${link}`); }
      return ['settled', 'parked', 'review', 'cancelled', 'rerouted'].includes(status) ? status : null;
    }, timeoutMs, `payout of ${orderId}`);
    if (resting === 'parked') log(`  ${demo.label}: as planned, Razorpay refused the transfer to a suspended account; it waits in the ops queue (console: /console/payouts) — retry it once the account is fixed: POST /ops/payouts/${orderId}/retry`);
  }

  const rows: DemoSummaryRow[] = [];
  for (const key of Object.keys(vendorIds)) {
    const ours = placed.filter((p) => p.demo.vendorKey === key && (p.demo.expectedRoute === 'direct transfer' || p.demo.expectedRoute.startsWith('split')));
    let ourPaise = 0;
    for (const p of ours) {
      if (p.demo.expectedRoute.startsWith('split')) ourPaise += p.vendorNetPaise;
      else if ((await ops('GET', `/ops/payouts/${p.orderId}`, undefined, [404]))?.payout?.status === 'settled') ourPaise += p.vendorNetPaise;
    }
    const sandboxTransfers = await until(async () => {
      const t = await sandbox.transfers({ recipient: accounts[key]! });
      const sum = t.filter((x) => x.status === 'processed').reduce((s, x) => s + x.amount, 0);
      return sum === ourPaise ? sum : null;
    }, 10_000, `sandbox transfers to ${key}`).catch(async () => (await sandbox.transfers({ recipient: accounts[key]! })).filter((x) => x.status === 'processed').reduce((s, x) => s + x.amount, 0));
    rows.push({ vendorId: vendorIds[key]!, linkedAccountId: accounts[key]!, ourPaise, sandboxPaise: sandboxTransfers, agrees: ourPaise === sandboxTransfers });
  }
  log('per-vendor summary (our records vs the sandbox ledger):');
  for (const r of rows) log(`  ${r.vendorId} ${r.linkedAccountId}: ours ${formatRupees(r.ourPaise)}, sandbox ${formatRupees(r.sandboxPaise)} ${r.agrees ? 'AGREE' : 'DISAGREE'}`);
  if (opts.keys.finance) await runFinanceDemo(opts, apiCaller(opts.apiUrl, opts.keys.finance), tag, timeoutMs);
  for (const line of statementDownloadLines(opts.apiUrl, vendorIds.dosa!, istDateOf(new Date()))) log(line);
  return rows;
}

/** Where the demo vendor's statement is: the API's CSV, the console's page, the CLI. */
export function statementDownloadLines(apiUrl: string, vendorId: string, day: string): string[] {
  const period = `from=${day}&to=${day}`;
  return [
    `\nstatement of ${vendorId} for ${day} (each order, how it was paid, totals by rail, what is still owed offline):`,
    `  download  curl -H 'Authorization: Bearer <finance key>' '${apiUrl}/v1/vendors/${vendorId}/statement?${period}&format=csv'`,
    `  console   ${apiUrl}/console/statements?vendor=${vendorId}&${period}`,
    `  CLI       npm run payouts -- statement ${vendorId} --from ${day} --to ${day}`,
  ];
}

export interface FinanceDemoResult { settlements: number; settledPaise: number; mismatches: number; seededException: { reason: string; nextAction: string } | null }

/** Finance's day: the sandbox clock moves past T+2, Razorpay settles, the bank statement is imported,
 * recon runs (no mismatch on the clean orders), then one seeded discrepancy shows as an exception. */
async function runFinanceDemo(opts: DemoOptions, finance: ReturnType<typeof apiCaller>, tag: string, timeoutMs: number): Promise<FinanceDemoResult> {
  const { log, sandboxControl: sandbox } = opts;
  const realNow = await sandbox.now();
  const captureDay = istDateOf(new Date(realNow));
  const due = settlementDueDate(captureDay);
  try {
    await sandbox.setClock(Date.parse(`${due}T06:30:00Z`)); // noon IST on the due day
    const settled = await sandbox.runSettlements({ date: due });
    const settledPaise = settled.reduce((s, x) => s + x.amount, 0);
    log(`\nfinance: the sandbox clock moves to ${due} (T+2 working days); Razorpay settles ${settled.length} settlement(s), ${formatRupees(settledPaise)} net of fees`);
    await importBankStatement(finance, await sandbox.bankStatementCsv({ from: captureDay, to: due }), `demo-${tag}-bank.csv`, log);
    const window = { from: captureDay, to: due, asOf: due };
    const clean = await reconRun(finance, window, timeoutMs);
    const mismatches = Object.entries(clean.byClass ?? {}).filter(([k]) => k === 'mismatched').reduce((s, [, n]) => s + Number(n), 0);
    log(reconLine(`recon ${captureDay} → ${due}`, clean, mismatches));

    // One discrepancy finance must see: a credit from Razorpay that no order of ours explains.
    await sandbox.injectAdjustment({ amountPaise: 5_000, description: `demo ${tag}: a credit nobody booked`, date: due });
    await sandbox.runSettlements({ date: due });
    await importBankStatement(finance, await sandbox.bankStatementCsv({ from: captureDay, to: due }), `demo-${tag}-bank-2.csv`, log);
    const again = await reconRun(finance, window, timeoutMs);
    log(reconLine(`recon ${captureDay} → ${due} again (the newest row of the console's runs)`, again));
    const { exceptions } = await finance('GET', `/finance/recon/exceptions?status=open&reason=adjustment&from=${captureDay}&to=${due}`);
    const seeded = (exceptions as Array<{ reason: string; nextAction: string; actualPaise: number | null; entityId: string | null }>)[0] ?? null;
    if (seeded) log(`finance: seeded discrepancy → exception ${seeded.reason} (${formatRupees(Math.abs(seeded.actualPaise ?? 0))}, ${seeded.entityId}): ${seeded.nextAction}`);
    return { settlements: settled.length, settledPaise, mismatches, seededException: seeded ? { reason: seeded.reason, nextAction: seeded.nextAction } : null };
  } finally {
    await sandbox.setClock(null);
  }
}

async function importBankStatement(finance: ReturnType<typeof apiCaller>, csv: string, fileName: string, log: (line: string) => void): Promise<void> {
  const result = await finance('POST', '/finance/bank-statements', { fileName, csv });
  log(`finance: bank statement ${fileName}: ${result.linesAdded ?? result.lines_added ?? '?'} line(s) added${result.duplicateFile ? ' (already imported)' : ''}`);
}

type ReconSummaryWords = Pick<ReconProgress, 'rowsFetched' | 'matched' | 'matchedGatewayRows' | 'matchedBankCredits' | 'matchedBankDebits' | 'exceptions'> & { byReason?: Record<string, number>; byClass?: Record<string, number> };

/** A run in the words and counts of the console's runs table. */
function reconLine(what: string, r: ReconSummaryWords, mismatched?: number): string {
  const reasons = Object.entries(r.byReason ?? {}).map(([k, n]) => `${k} ${n}`).join(', ');
  return `finance: ${what}: ${r.rowsFetched} gateway row(s) pulled, ${r.matchedGatewayRows ?? r.matched} matched to our records; bank lines matched: ${r.matchedBankCredits ?? 0} credit(s), ${r.matchedBankDebits ?? 0} debit(s); ${r.exceptions} exception(s)${reasons ? ` (${reasons})` : ''}${mismatched === undefined ? '' : `, ${mismatched} mismatched`}`;
}

async function reconRun(finance: ReturnType<typeof apiCaller>, window: { from: string; to: string; asOf: string }, timeoutMs: number) {
  const { workflowId } = await finance('POST', '/finance/recon/runs', window);
  return until(async () => {
    const { live, runs } = await finance('GET', `/finance/recon/runs/${workflowId}`, undefined, []);
    if (!live || live.status === 'RUNNING') return null;
    // The run just started is the newest recorded one.
    const run = (runs as Array<{ status: string; summary: ReconSummaryWords | null }>)[0];
    if (live.status !== 'COMPLETED' || run?.status !== 'completed' || !run.summary) throw new Error(`demo: recon run ${workflowId} ended ${live.status}`);
    return run.summary;
  }, timeoutMs, `recon run ${workflowId}`);
}

function apiCaller(apiUrl: string, key: string) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- demo output is printed, not trusted
  return async (method: string, path: string, body?: unknown, allowed: number[] = []): Promise<any> => {
    const res = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'x-actor': 'demo', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (allowed.includes(res.status)) return null;
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}

async function until<T>(probe: () => Promise<T | null | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`demo: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
