import { setAsideTarget } from '../../src/webhooks/setAsideTarget';
import { setAsideWords } from '../../src/webhooks/setAsideWords';

const body = (key: string, id: unknown) => ({ payload: { [key]: { entity: { id } } } });

describe('what a set-aside webhook was about', () => {
  test('each event the app acts on names its object and the state it announced', () => {
    expect(setAsideTarget('payment.captured', body('payment', 'pay_A1'))).toEqual({ kind: 'payment', id: 'pay_A1', announced: 'captured' });
    expect(setAsideTarget('order.paid', body('payment', 'pay_A1'))).toEqual({ kind: 'payment', id: 'pay_A1', announced: 'captured' });
    expect(setAsideTarget('payment.failed', body('payment', 'pay_A1'))).toEqual({ kind: 'payment', id: 'pay_A1', announced: 'failed' });
    expect(setAsideTarget('refund.processed', body('refund', 'rfnd_B2'))).toEqual({ kind: 'refund', id: 'rfnd_B2', announced: 'processed' });
    expect(setAsideTarget('transfer.reversed', body('transfer', 'trf_C3'))).toEqual({ kind: 'transfer', id: 'trf_C3', announced: 'reversed' });
    expect(setAsideTarget('settlement.processed', body('settlement', 'setl_D4'))).toEqual({ kind: 'settlement', id: 'setl_D4' });
    expect(setAsideTarget('payment.dispute.created', body('dispute', 'disp_E5'))).toEqual({ kind: 'dispute', id: 'disp_E5' });
  });

  test('a body that names nothing readable, an id of another kind, or an event the app does not act on names nothing', () => {
    expect(setAsideTarget('payment.captured', body('payment', 'trf_C3'))).toBeNull();
    expect(setAsideTarget('payment.captured', body('payment', 42))).toBeNull();
    expect(setAsideTarget('payment.captured', 'not json')).toBeNull();
    expect(setAsideTarget('refund.speed_changed', body('refund', 'rfnd_B2'))).toBeNull();
    expect(setAsideTarget('toString', {})).toBeNull();
    expect(setAsideTarget(null, body('payment', 'pay_A1'))).toBeNull();
  });
});

describe('why it was set aside, in words', () => {
  test('a refused body names the first issues; the window reasons name the age and the bound', () => {
    expect(setAsideWords('schema_refused', { issues: [{ path: ['payload', 'payment'], message: 'Required' }] }))
      .toBe('Our schema refused the body (payload.payment: Required): Razorpay may have changed the payload; our schema needs a look.');
    expect(setAsideWords('too_old', { ageSeconds: 2 * 86_400 + 7, maxAgeSeconds: 86_400, clockSkewSeconds: 300 }))
      .toBe('Older than the replay window: sent 2 d 0 h before it arrived, past the 1 d 0 h Razorpay retries for. A replay, or a delivery held up for a day.');
    expect(setAsideWords('from_future', { ageSeconds: -3_600, maxAgeSeconds: 86_400, clockSkewSeconds: 300 }))
      .toBe("Dated ahead of our clock by 1 h 0 min, more than the 5 min of skew allowed: check this host's clock (NTP), or a replay with a forged date.");
  });

  test('a problem recorded without its figures still reads as a sentence', () => {
    expect(setAsideWords('schema_refused', {})).toBe('Our schema refused the body: Razorpay may have changed the payload; our schema needs a look.');
    expect(setAsideWords('too_old', {})).toBe('Older than the replay window: sent long before it arrived. A replay, or a delivery held up for a day.');
  });
});
