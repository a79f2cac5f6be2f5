/** The sandbox's reversals (issue 19 item 3): the control route that does what the Razorpay
 * Dashboard does (reverse a transfer from outside our app, wholly or in part) sends transfer.reversed
 * with the transfer's snapshot, as every reversal does; the settlement report carries each reversal
 * as a credit row once its transfer has settled. Over HTTP, through the SDK and /_sandbox. */
import { startTestSandbox, type TestSandbox } from '../support/sandbox';

let t: TestSandbox;
const control = () => t.sandbox.control;
const noonIst = (date: string): number => Date.parse(`${date}T06:30:00Z`);

beforeAll(async () => {
  t = await startTestSandbox();
});
afterAll(() => t.sandbox.close());
beforeEach(() => control().reset());

async function processedTransfer(key: string): Promise<{ id: string; account: string }> {
  const account = await control().createLinkedAccount();
  const made = await t.gateway.createDirectTransfer({ account, amountPaise: 8_100, idempotencyKey: key, notes: { transaction_id: key, order_id: 'o1' } });
  if (made.type !== 'accepted') throw new Error(JSON.stringify(made));
  return { id: made.entity.id, account };
}

async function controlRoute(method: string, path: string, body?: unknown) {
  const res = await fetch(`${t.sandbox.baseUrl}/_sandbox${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

test('when a transfer is reversed from the dashboard, then the reversal is the API\'s, the balances follow, and transfer.reversed carries the transfer as it is now', async () => {
  const { id, account } = await processedTransfer('dash-1');
  const part = await controlRoute('POST', `/transfers/${id}/reverse`, { amountPaise: 3_000, notes: { why: 'dashboard' } });
  expect(part).toMatchObject({ status: 200, body: { entity: 'reversal', transfer_id: id, amount: 3_000, notes: { why: 'dashboard' }, customer_refund_id: null } });
  expect(await control().linkedAccountBalance(account)).toBe(5_100);
  const rest = await control().reverseTransferFromDashboard(id);
  expect(rest).toMatchObject({ amount: 5_100 });
  expect(await t.gateway.fetchTransfer(id)).toMatchObject({ status: 'reversed', amount_reversed: 8_100 });
  expect((await t.gateway.listTransferReversals(id)).map((r) => r.id)).toEqual([part.body.id, rest.id]);

  const events = (await control().webhookEvents()).filter((e) => e.event === 'transfer.reversed').map((e) => JSON.parse(e.body));
  expect(events.map((e) => [e.contains, e.payload.transfer.entity.status, e.payload.transfer.entity.amount_reversed])).toEqual([
    [['transfer'], 'partially_reversed', 3_000], [['transfer'], 'reversed', 8_100],
  ]);
  // Refused as the API refuses it, and nothing changes.
  expect(await controlRoute('POST', `/transfers/${id}/reverse`, {})).toMatchObject({ status: 400, body: { error: { description: 'Only processed transfers can be reversed' } } });
  expect(await controlRoute('POST', `/transfers/${id}/reverse`, { amountPaise: 0 })).toMatchObject({ status: 400 });
});

test('when a settled transfer is reversed later, then the next settlement reports the reversal as a credit row; one reversed in full before it settled is in the same report as a debit and its reversal as a credit', async () => {
  await control().setClock(noonIst('2031-01-09'));
  const order = await t.gateway.createOrder({ amountPaise: 50_000, receipt: 'ord_rev_settle', notes: {} });
  await control().payOrder(order.id);
  const settled = await processedTransfer('rev-settle-1');
  const early = await processedTransfer('rev-settle-2');
  const earlyReversal = await control().reverseTransferFromDashboard(early.id);
  const [first] = await control().runSettlements({ date: '2031-01-13' });
  const day1 = await t.gateway.settlementReconRows({ year: 2031, month: 1, day: 13 });
  // It left the balance when processed and came back when reversed: recon sees both (a reversal whose
  // webhook was lost is then raised as reversal-not-in-app).
  expect(day1.filter((r) => r.type === 'transfer').map((r) => r.entity_id).sort()).toEqual([settled.id, early.id].sort());
  expect(day1.filter((r) => r.type === 'reversal').map((r) => [r.entity_id, r.credit])).toEqual([[earlyReversal.id, earlyReversal.amount]]);
  expect(day1.reduce((s, r) => s + r.credit - r.debit, 0)).toBe(first!.amount);

  const reversal = await control().reverseTransferFromDashboard(settled.id, { amountPaise: 2_000 });
  const [second] = await control().runSettlements({ date: '2031-01-14' });
  const day2 = await t.gateway.settlementReconRows({ year: 2031, month: 1, day: 14 });
  expect(day2).toEqual([expect.objectContaining({ entity_id: reversal.id, type: 'reversal', credit: 2_000, debit: 0, amount: 2_000, fee: 0, tax: 0, settled: true, settlement_id: second!.id })]);
  expect(second!.amount).toBe(2_000);
  expect(await control().runSettlements({ date: '2031-01-15' })).toEqual([]);
});
