/** The sandbox's webhook envelopes are stamped as Razorpay stamps them, when sent: a sandbox clock
 * moved ahead (the demo plays settlement days) dates the entities, never the envelope, so the app
 * does not set the event aside as from its future; a clock moved back keeps its time. */
import { startTestSandbox, type TestSandbox } from '../support/sandbox';

let t: TestSandbox;
const control = () => t.sandbox.control;

beforeAll(async () => {
  t = await startTestSandbox();
});
afterAll(() => t.sandbox.close());
beforeEach(() => control().reset());

async function capturedEvent(clockMs: number): Promise<{ envelopeAt: number; paymentAt: number }> {
  await control().setClock(clockMs);
  const order = await t.gateway.createOrder({ amountPaise: 10_000, receipt: `stamp_${clockMs}`, notes: {} });
  const payment = await control().payOrder(order.id);
  const event = (await control().webhookEvents()).find((e) => e.event === 'payment.captured' && e.body.includes(payment.id));
  const body = JSON.parse(event!.body) as { created_at: number; payload: { payment: { entity: { created_at: number } } } };
  return { envelopeAt: body.created_at, paymentAt: body.payload.payment.entity.created_at };
}

test('when the sandbox clock is two days ahead, then the payment is dated then and its event envelope now', async () => {
  const ahead = Date.now() + 2 * 86_400_000;
  const { envelopeAt, paymentAt } = await capturedEvent(ahead);
  const now = Math.floor(Date.now() / 1000);
  expect(paymentAt).toBeGreaterThanOrEqual(Math.floor(ahead / 1000));
  expect(envelopeAt).toBeLessThanOrEqual(now);
  expect(envelopeAt).toBeGreaterThan(now - 60);
});

test('when the sandbox clock is an hour behind, then the event envelope keeps that time', async () => {
  const behind = Date.now() - 3_600_000;
  const { envelopeAt } = await capturedEvent(behind);
  expect(Math.abs(envelopeAt - Math.floor(behind / 1000))).toBeLessThan(60);
});
