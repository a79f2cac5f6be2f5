/** The pure part of the throttling (src/api/rateLimit.ts): who recently proved a key id, so that
 * failures others cause for that key id do not lock its holder out. */
import { presentedKeyId } from '../../src/auth/apiKeys';
import { RecentKeyHolders } from '../../src/api/rateLimit';

describe('recent key holders', () => {
  test('when a client authenticated with a key id, then it holds it for the window and not after', () => {
    let now = 1_000;
    const holders = new RecentKeyHolders(60_000, 10, () => now);
    holders.remember('key_aaaaaaaaaaaa', '10.0.0.1');
    expect(holders.holds('key_aaaaaaaaaaaa', '10.0.0.1')).toBe(true);
    expect(holders.holds('key_aaaaaaaaaaaa', '10.0.0.2')).toBe(false);
    expect(holders.holds('key_bbbbbbbbbbbb', '10.0.0.1')).toBe(false);
    now += 60_000;
    expect(holders.holds('key_aaaaaaaaaaaa', '10.0.0.1')).toBe(false);
  });

  test('when more pairs are remembered than it keeps, then the least recently proven is forgotten first', () => {
    const holders = new RecentKeyHolders(60_000, 2, () => 0);
    holders.remember('key_a', '1');
    holders.remember('key_b', '1');
    holders.remember('key_a', '1'); // proven again: now the newest
    holders.remember('key_c', '1');
    expect(['key_a', 'key_b', 'key_c'].map((k) => holders.holds(k, '1'))).toEqual([true, false, true]);
  });
});

describe('the key id a presented key names', () => {
  test.each([
    [`pk_key_0123456789ab_${'A'.repeat(43)}`, 'key_0123456789ab'],
    [`  pk_key_0123456789ab_${'A'.repeat(43)} `, 'key_0123456789ab'],
    [`pk_key_0123456789ab_${'A'.repeat(42)}`, null],
    ['pk_key_0123456789ab', null],
    ['Bearer whatever', null],
  ])('%s → %s', (presented, keyId) => {
    expect(presentedKeyId(presented)).toBe(keyId);
  });
});
