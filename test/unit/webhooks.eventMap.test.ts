import { eventNameSchema } from '../../src/webhooks/envelope';
import { ACKNOWLEDGED_EVENTS, handlingOf, webhookEffects } from '../../src/webhooks/eventMap';

describe('the Razorpay event map', () => {
  test('when it is read, then money in, payouts (and splits) and recon each contribute the events they act on', () => {
    expect(Object.keys(webhookEffects).sort()).toEqual([
      'order.paid', 'payment.authorized', 'payment.captured',
      'payment.dispute.action_required', 'payment.dispute.closed', 'payment.dispute.created', 'payment.dispute.lost', 'payment.dispute.under_review', 'payment.dispute.won',
      'payment.failed', 'refund.created', 'refund.failed', 'refund.processed', 'settlement.processed',
      ...Object.keys(webhookEffects).filter((e) => e.startsWith('transfer.')).sort(),
    ].sort());
    expect(Object.keys(webhookEffects)).toEqual(expect.arrayContaining(['transfer.processed', 'transfer.failed']));
  });

  test('when an event is not acted on, then it is acknowledged, known or not; an inherited key is not an event', () => {
    expect(handlingOf('payment.captured')).toMatchObject({ actedOn: true });
    for (const event of ACKNOWLEDGED_EVENTS) {
      if (!Object.hasOwn(webhookEffects, event)) expect(handlingOf(event)).toMatchObject({ actedOn: false, known: true });
    }
    expect(handlingOf('payment.downtime.started')).toMatchObject({ actedOn: false, known: false });
    expect(handlingOf('toString')).toMatchObject({ actedOn: false, known: false });
    expect(handlingOf('constructor')).toMatchObject({ actedOn: false });
  });

  test('when an event name is not dot-separated lower-case words, then it is not an event name', () => {
    for (const good of ['payment.captured', 'payment.dispute.action_required', 'product.route.under_review', 'virtual_account.credited']) {
      expect(eventNameSchema.safeParse(good).success).toBe(true);
    }
    for (const bad of ['', 'captured', 'Payment.Captured', 'payment captured', 'payment.', '.payment', 'payment..captured', 'x'.repeat(101) + '.y']) {
      expect(eventNameSchema.safeParse(bad).success).toBe(false);
    }
  });
});
