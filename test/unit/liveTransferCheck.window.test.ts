import { listingWindowFor } from '../../src/payouts/liveTransferCheck';
import { RESOLVER_WINDOW_AFTER_MS, RESOLVER_WINDOW_BEFORE_MS } from '../../src/payouts/resolution';

const at = (iso: string) => new Date(iso);

describe('listingWindowFor (before paying a payout by hand)', () => {
  test('when the key never went out and no mark is set, then nothing needs listing', () => {
    expect(listingWindowFor({ claimed_at: null, request_sent_at: null, key_first_sent_at: null, provider_may_know_since: null })).toBeNull();
  });

  test('when the row is older than the provider\'s ledger (a restore marked it), then the listing starts at the mark even though the key never went out', () => {
    const mark = at('2026-12-03T10:00:00Z');
    expect(listingWindowFor({ claimed_at: null, request_sent_at: null, key_first_sent_at: null, provider_may_know_since: mark })).toEqual({
      from: new Date(mark.getTime() - RESOLVER_WINDOW_BEFORE_MS).toISOString(),
      to: new Date(mark.getTime() + RESOLVER_WINDOW_AFTER_MS).toISOString(),
    });
  });

  test('when the key went out after the mark, then the listing runs from the mark to the latest send', () => {
    const mark = at('2026-12-03T10:00:00Z');
    const sent = at('2026-12-03T10:30:00Z');
    expect(listingWindowFor({ claimed_at: sent, request_sent_at: sent, key_first_sent_at: sent, provider_may_know_since: mark })).toEqual({
      from: new Date(mark.getTime() - RESOLVER_WINDOW_BEFORE_MS).toISOString(),
      to: new Date(sent.getTime() + RESOLVER_WINDOW_AFTER_MS).toISOString(),
    });
  });
});
