/** The split rule (issue 10 item 4) as a pure function: what the provider's transfer means for our
 * split row. A failed split is owed offline only once Razorpay has stopped retrying it. */
import { decideSplit, SPLIT_RETRY_WINDOW_MS } from '../../src/moneyin/splitTransfers';
import type { RzpTransfer } from '../../src/gateway/types';

const now = new Date('2031-01-10T06:00:00Z');
const sec = (d: Date): number => Math.floor(d.getTime() / 1000);
/** An 8 100 paise transfer; a reversed one gave all of it back, a partially reversed one 1 000. */
const transfer = (status: RzpTransfer['status'], processedAt: Date | null = now, code: string | null = null): Pick<RzpTransfer, 'status' | 'error' | 'processed_at' | 'amount_reversed'> => ({
  status, processed_at: processedAt === null ? null : sec(processedAt), error: { code, description: null, reason: null, field: null, step: null },
  amount_reversed: status === 'reversed' ? 8_100 : status === 'partially_reversed' ? 1_000 : 0,
});
const expected = { status: 'expected' as const, first_failed_at: null };

describe('decideSplit', () => {
  test.each([
    ['created', 'expected'], ['pending', 'expected'], ['processed', 'processed'], ['partially_reversed', 'reversed'], ['reversed', 'reversed'],
  ] as const)('when an expected split’s transfer is %s, then the row is %s', (provider, status) => {
    expect(decideSplit(expected, transfer(provider), now).status).toBe(status);
  });

  test('when the transfer has just failed, then the split stays expected (Razorpay retries it) and the failure time is the provider’s', () => {
    const failedAt = new Date(now.getTime() - 3_600_000);
    expect(decideSplit(expected, transfer('failed', failedAt, 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE'), now)).toEqual({
      status: 'expected', providerStatus: 'failed', lastCode: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE', firstFailedAt: failedAt, final: false, processedAfterFinal: false,
    });
  });

  test('when the transfer is still failed past the retry window from its first failure, then the split is final: failed', () => {
    const first = new Date(now.getTime() - SPLIT_RETRY_WINDOW_MS);
    expect(decideSplit({ status: 'expected', first_failed_at: first }, transfer('failed'), now)).toMatchObject({ status: 'failed', final: true, firstFailedAt: first });
    expect(decideSplit({ status: 'expected', first_failed_at: new Date(first.getTime() + 1) }, transfer('failed'), now)).toMatchObject({ status: 'expected', final: false });
  });

  test('when a provider time lies in our future, then now is used', () => {
    expect(decideSplit(expected, transfer('failed', new Date(now.getTime() + 60_000)), now).firstFailedAt).toEqual(now);
  });

  test('when a processed split is later reversed, wholly or in part, then it is reversed (what is owed again is per reversal); anything else leaves it processed', () => {
    const processed = { status: 'processed' as const, first_failed_at: null };
    expect(decideSplit(processed, transfer('reversed'), now)).toMatchObject({ status: 'reversed', final: false, lastCode: 'TRANSFER_REVERSED' });
    expect(decideSplit(processed, transfer('partially_reversed'), now)).toMatchObject({ status: 'reversed', lastCode: 'TRANSFER_REVERSED' });
    for (const p of ['failed', 'pending', 'created', 'processed'] as const) expect(decideSplit(processed, transfer(p), now).status).toBe('processed');
    expect(decideSplit({ status: 'reversed', first_failed_at: null }, transfer('reversed'), now).status).toBe('reversed');
  });

  test('when a split owed offline is processed after all, then it is processed and flagged for a human', () => {
    const failed = { status: 'failed' as const, first_failed_at: new Date(0) };
    expect(decideSplit(failed, transfer('processed'), now)).toMatchObject({ status: 'processed', final: true, processedAfterFinal: true });
    expect(decideSplit(failed, transfer('failed'), now)).toMatchObject({ status: 'failed', final: false, processedAfterFinal: false });
  });
});
