/** The gateway side of `npm run bench:recon`: N captured payments over three IST days, settled T+2,
 * generated from their index (nothing is kept per payment), served the way Razorpay serves them
 * (GET /v1/settlements/recon/combined with count/skip pages of the sandbox's row shape, GET
 * /v1/settlements/:id, HTTP Basic) by a child process, so that neither its CPU on the event loop nor
 * its memory is counted as recon's, and a million rows cost it one page at a time. The bench seeds our
 * side (orders + payments) and the bank statement from the same generator.
 *
 * Why not the in-memory Razorpay sandbox: it keeps every order, payment, book and webhook event of a
 * checkout (about 20 kB a payment: 2 GB at 100,000), which at 1,000,000 would be the bench's
 * bottleneck and its largest memory by far. */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { istDayBounds } from '../src/domain/calendar';

/** Tue 09-01, Wed 09-02, Thu 09-03 captures settle Thu 09-03, Fri 09-04 and Sat 09-05 (the 1st Saturday works). */
export const CAPTURE_DAYS = ['2026-09-01', '2026-09-02', '2026-09-03'] as const;
export const SETTLEMENT_DAYS = ['2026-09-03', '2026-09-04', '2026-09-05'] as const;

export interface BenchPayment { index: number; id: string; gatewayOrderId: string; orderId: string; amount: number; fee: number; tax: number; capturedAt: number }

/** How many of `total` payments are captured on capture day `d`, and the index of its first. */
export function dayShare(total: number, d: number): { first: number; count: number } {
  const base = Math.floor(total / CAPTURE_DAYS.length);
  const extra = total % CAPTURE_DAYS.length;
  return { first: d * base + Math.min(d, extra), count: base + (d < extra ? 1 : 0) };
}

/** Payment `index` of capture day `d`; the fee is the sandbox's (2 %, GST included). */
export function benchPayment(index: number, d: number): BenchPayment {
  const amount = 10_000 + (index % 5000);
  const fee = Math.round(amount / 50);
  const id = `pay_B${String(index).padStart(12, '0')}`;
  return {
    index, id, gatewayOrderId: `order_B${String(index).padStart(12, '0')}`, orderId: `ord-${id}`, amount, fee, tax: Math.round((fee * 18) / 118),
    capturedAt: Math.floor(istDayBounds(CAPTURE_DAYS[d]!).start.getTime() / 1000) + 12 * 3600 + (index % 36_000),
  };
}

export interface BenchSettlement { id: string; day: string; amount: number; fees: number; tax: number; utr: string; createdAt: number }

/** The settlement of capture day `d`: everything captured that day, net of fees. */
export function benchSettlement(total: number, d: number): BenchSettlement {
  const { first, count } = dayShare(total, d);
  let amount = 0;
  let fees = 0;
  let tax = 0;
  for (let i = first; i < first + count; i++) {
    const p = benchPayment(i, d);
    amount += p.amount - p.fee;
    fees += p.fee;
    tax += p.tax;
  }
  const day = SETTLEMENT_DAYS[d]!;
  return { id: `setl_Bench${d}00000000`, day, amount, fees, tax, utr: `AXISCNBENCH${d}0000`, createdAt: Math.floor(istDayBounds(day).start.getTime() / 1000) + 10 * 3600 };
}

/** A recon row as the sandbox reports a settled card payment (same fields, same order). */
function reconRow(p: BenchPayment, s: BenchSettlement): Record<string, unknown> {
  return {
    entity_id: p.id, type: 'payment', debit: 0, credit: p.amount - p.fee, amount: p.amount, currency: 'INR', fee: p.fee, tax: p.tax, on_hold: false, settled: true,
    created_at: p.capturedAt, settled_at: s.createdAt, settlement_id: s.id, posted_at: null, credit_type: 'default', description: 'Meal order', notes: '{}',
    payment_id: null, settlement_utr: s.utr, order_id: p.gatewayOrderId, order_receipt: null, method: 'card', card_network: 'Visa', card_issuer: 'HDFC',
    card_type: 'debit', dispute_id: null,
  };
}

/** Bank statement CSV of the three settlement credits. */
export function benchBankStatement(total: number): string {
  const lines = CAPTURE_DAYS.map((_, d) => benchSettlement(total, d)).map((s) =>
    `${s.utr},${Math.trunc(s.amount / 100)}.${String(s.amount % 100).padStart(2, '0')},${s.day},NEFT CR-RAZORPAY-${s.utr.toLowerCase()}`);
  return ['utr,amount,value_date,narration', ...lines].join('\n') + '\n';
}

function serve(total: number, keyId: string, keySecret: string): http.Server {
  const settlements = CAPTURE_DAYS.map((_, d) => benchSettlement(total, d));
  const auth = `Basic ${Buffer.from(`${keyId}:${keySecret}`).toString('base64')}`;
  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  return http.createServer((req, res) => {
    if (req.headers.authorization !== auth) return send(res, 401, { error: { code: 'BAD_REQUEST_ERROR', description: 'The api key provided is invalid' } });
    const url = new URL(req.url ?? '/', 'http://bench');
    if (url.pathname === '/v1/settlements/recon/combined') {
      const day = `${url.searchParams.get('year')}-${url.searchParams.get('month')!.padStart(2, '0')}-${(url.searchParams.get('day') ?? '').padStart(2, '0')}`;
      const count = Math.min(1000, Number(url.searchParams.get('count') ?? 1000));
      const skip = Number(url.searchParams.get('skip') ?? 0);
      const d = settlements.findIndex((s) => s.day === day);
      const items: Array<Record<string, unknown>> = [];
      if (d >= 0) {
        const { first, count: n } = dayShare(total, d);
        for (let i = first + skip; i < first + Math.min(n, skip + count); i++) items.push(reconRow(benchPayment(i, d), settlements[d]!));
      }
      return send(res, 200, { entity: 'collection', count: items.length, items });
    }
    const settlement = settlements.find((s) => url.pathname === `/v1/settlements/${s.id}`);
    if (settlement) {
      return send(res, 200, { id: settlement.id, entity: 'settlement', amount: settlement.amount, status: 'processed', fees: settlement.fees, tax: settlement.tax, utr: settlement.utr, created_at: settlement.createdAt });
    }
    return send(res, 404, { error: { code: 'BAD_REQUEST_ERROR', description: 'The requested URL was not found on the server.' } });
  });
}

export interface ReportServer { baseUrl: string; peakRssMb(): Promise<number>; close(): Promise<void> }

/** Starts the report server for `total` payments in a child process on a loopback port. */
export async function startReportServer(total: number, keyId: string, keySecret: string): Promise<ReportServer> {
  const child: ChildProcess = fork(__filename, ['serve', String(total)], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_KEY_ID: keyId, BENCH_KEY_SECRET: keySecret } });
  const ask = <T>(type: string): Promise<T> => new Promise((resolve, reject) => {
    const onMessage = (m: { type: string; value: T }) => {
      if (m.type !== type) return;
      child.off('message', onMessage);
      resolve(m.value);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`report server exited with ${code}`)));
    if (type !== 'port') child.send({ type });
  });
  const port = await ask<number>('port');
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    peakRssMb: async () => Math.round((await ask<number>('rss')) / 1048576),
    close: () => new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

if (require.main === module && process.argv[2] === 'serve') {
  const server = serve(Number(process.argv[3]), process.env.BENCH_KEY_ID ?? '', process.env.BENCH_KEY_SECRET ?? '');
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ type: 'port', value: typeof address === 'object' && address ? address.port : 0 });
  });
  process.on('message', (m: { type: string }) => {
    if (m.type === 'rss') process.send?.({ type: 'rss', value: process.resourceUsage().maxRSS * 1024 });
  });
  process.on('SIGTERM', () => process.exit(0));
}
