/** Sandbox settlements: T+2 working days, netting, recon rows, on-hold and adjustment rows, the
 * settlement.processed webhook, the bank statement CSV and the recon report's documented errors. */
import { startTestSandbox, type TestSandbox } from '../support/sandbox';

let t: TestSandbox;
const control = () => t.sandbox.control;
/** 12:00 IST on an IST date. */
const noonIst = (date: string): number => Date.parse(`${date}T06:30:00Z`);

beforeAll(async () => {
  t = await startTestSandbox();
});
afterAll(() => t.sandbox.close());
beforeEach(() => control().reset());

async function captureOn(date: string, amountPaise = 10_000): Promise<string> {
  await control().setClock(noonIst(date));
  const order = await t.gateway.createOrder({ amountPaise, receipt: `ord_${date}_${amountPaise}`, notes: {} });
  return (await control().payOrder(order.id)).id;
}

test('when a capture is made on the Thursday before a 2nd Saturday, then it settles on Monday and not before', async () => {
  const paymentId = await captureOn('2031-01-09');
  expect(await control().runSettlements({ date: '2031-01-10' })).toEqual([]);
  const [settlement] = await control().runSettlements({ date: '2031-01-13' });
  expect(settlement).toMatchObject({ amount: 10_000 - 200, fees: 200, tax: 31, status: 'processed' });
  const rows = await t.gateway.settlementReconRows({ year: 2031, month: 1, day: 13 });
  expect(rows).toEqual([expect.objectContaining({ entity_id: paymentId, type: 'payment', credit: 9_800, debit: 0, fee: 200, tax: 31, settled: true, settlement_id: settlement!.id, settlement_utr: settlement!.utr, order_receipt: 'ord_2031-01-09_10000' })]);
});

test('when the due Monday is a bank holiday, then the capture settles on Tuesday', async () => {
  await captureOn('2031-01-09');
  expect(await control().runSettlements({ date: '2031-01-13', holidays: ['2031-01-13'] })).toEqual([]);
  expect(await control().runSettlements({ date: '2031-01-14', holidays: ['2031-01-13'] })).toHaveLength(1);
});

test('when payments, a refund, a transfer and adjustments settle together, then the settlement nets them and equals its rows', async () => {
  const paymentId = await captureOn('2031-01-09', 50_000);
  await captureOn('2031-01-09', 20_000);
  const account = await control().createLinkedAccount();
  const transfer = await t.gateway.createDirectTransfer({ account, amountPaise: 8_100, idempotencyKey: 'settle-1', notes: { transaction_id: 'settle-1', order_id: 'o1' } });
  const refund = await t.gateway.createRefund({ paymentId, amountPaise: 5_000, receipt: 'rf_settle_1' });
  await control().injectAdjustment({ amountPaise: 1_012, description: 'test reason', date: '2031-01-13' });
  await control().injectAdjustment({ amountPaise: -500, description: 'chargeback fee', date: '2031-01-13' });
  const [settlement] = await control().runSettlements({ date: '2031-01-13' });
  const rows = await t.gateway.settlementReconRows({ year: 2031, month: 1, day: 13 });
  const byType = (type: string) => rows.filter((r) => r.type === type);
  expect(byType('payment').map((r) => r.credit).sort()).toEqual([19_600, 49_000]);
  expect(byType('refund')).toEqual([expect.objectContaining({ entity_id: refund.type === 'accepted' ? refund.entity.id : '', debit: 5_000, payment_id: paymentId })]);
  expect(byType('transfer')).toEqual([expect.objectContaining({ entity_id: transfer.type === 'accepted' ? transfer.entity.id : '', debit: 8_100 + 25, fee: 25, amount: 8_100 })]);
  expect(byType('adjustment').map((r) => [r.credit, r.debit])).toEqual([[1_012, 0], [0, 500]]);
  expect(settlement!.amount).toBe(19_600 + 49_000 - 5_000 - 8_125 + 1_012 - 500);
  expect(rows.reduce((s, r) => s + r.credit - r.debit, 0)).toBe(settlement!.amount);
  const webhook = (await control().webhookEvents()).find((e) => e.event === 'settlement.processed');
  expect(JSON.parse(webhook!.body).payload.settlement.entity).toMatchObject({ id: settlement!.id, amount: settlement!.amount, utr: settlement!.utr });
});

test('when debits exceed the credits due, then they roll to a later settlement instead of a negative one', async () => {
  await captureOn('2031-01-09', 10_000);
  await control().injectAdjustment({ amountPaise: -20_000, description: 'big debit', date: '2031-01-13' });
  const [first] = await control().runSettlements({ date: '2031-01-13' });
  expect(first!.amount).toBe(9_800);
  await captureOn('2031-01-13', 50_000);
  const [second] = await control().runSettlements({ date: '2031-01-15' });
  expect(second!.amount).toBe(49_000 - 20_000);
});

test('when a payment is on hold, then it is reported as an on_hold row and not settled', async () => {
  const held = await captureOn('2031-01-09');
  await captureOn('2031-01-09', 20_000);
  await control().putOnHold(held);
  const [settlement] = await control().runSettlements({ date: '2031-01-13' });
  expect(settlement!.amount).toBe(19_600);
  const rows = await t.gateway.settlementReconRows({ year: 2031, month: 1, day: 13 });
  expect(rows.find((r) => r.entity_id === held)).toMatchObject({ on_hold: true, settled: false, settlement_id: null, credit: 9_800 });
});

test('when the bank statement is downloaded, then each settlement is a credit with its UTR, rupee amount and value date', async () => {
  await captureOn('2031-01-09', 123_456);
  const [settlement] = await control().runSettlements({ date: '2031-01-13' });
  const csv = await control().bankStatementCsv({ from: '2031-01-01', to: '2031-01-31' });
  const net = 123_456 - 2_469;
  expect(csv.trim().split('\n')).toEqual([
    'utr,amount,value_date,narration',
    `${settlement!.utr},${Math.trunc(net / 100)}.${String(net % 100).padStart(2, '0')},2031-01-13,NEFT CR-RAZORPAY SOFTWARE PVT LTD-${settlement!.utr!.toLowerCase()}`,
  ]);
  expect(await control().bankStatementCsv({ from: '2031-02-01', to: '2031-02-28' })).toBe('utr,amount,value_date,narration\n');
});

test.each([
  ['year=203&month=1', 'The year must be 4 digits.'],
  ['year=2031&month=13', 'The month is not a valid month.'],
  ['year=2031&month=1&day=123', 'The day must be between 1 and 2 digits.'],
  ['year=2031&month=1&count=0', 'The count must be at least 1.'],
  ['year=2031&month=1&count=1001', 'The count may not be greater than 1000.'],
])('when the recon report is asked with %s, then it answers 400 "%s"', async (query, description) => {
  const auth = Buffer.from(`${t.config.RAZORPAY_KEY_ID}:${t.config.RAZORPAY_KEY_SECRET}`).toString('base64');
  const res = await fetch(`${t.sandbox.baseUrl}/v1/settlements/recon/combined?${query}`, { headers: { authorization: `Basic ${auth}` } });
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ error: { code: 'BAD_REQUEST_ERROR', description } });
});
