import { randomBytes } from 'node:crypto';
import { AccountNumberUnreadable, createKeyring, keyringFromConfig } from '../../src/banking/keyring';
import { loadConfig } from '../../src/config/config';

const k2026a = { id: 'k2026a', key: randomBytes(32) };
const k2026b = { id: 'k2026b', key: randomBytes(32) };
const ACCOUNT = '50100123456789';

/** What the keyring throws for a row it cannot open: which vendor and key, and why. */
const unreadable = (why: AccountNumberUnreadable['why']) => expect.objectContaining({ name: 'AccountNumberUnreadable', why });

describe('bank details keyring (AES-256-GCM)', () => {
  test('when an account number is sealed and opened for the same vendor, then it round-trips, under the active key, never in the clear', () => {
    const keyring = createKeyring([k2026a], 'k2026a');
    const sealed = keyring.seal('ven_dosa', ACCOUNT);
    expect(sealed.keyId).toBe('k2026a');
    expect([sealed.iv.length, sealed.authTag.length, sealed.ciphertext.length]).toEqual([12, 16, ACCOUNT.length]);
    expect(sealed.ciphertext.toString('utf8')).not.toContain(ACCOUNT.slice(0, 6));
    expect(keyring.open('ven_dosa', sealed)).toBe(ACCOUNT);
  });

  test('when the same number is sealed twice, then the IVs and ciphertexts differ', () => {
    const keyring = createKeyring([k2026a], 'k2026a');
    const [one, two] = [keyring.seal('ven_dosa', ACCOUNT), keyring.seal('ven_dosa', ACCOUNT)];
    expect(one.iv.equals(two.iv)).toBe(false);
    expect(one.ciphertext.equals(two.ciphertext)).toBe(false);
  });

  test('when a ciphertext, its IV or its tag is altered, then it does not open', () => {
    const keyring = createKeyring([k2026a], 'k2026a');
    const sealed = keyring.seal('ven_dosa', ACCOUNT);
    const flipped = (b: Buffer) => { const c = Buffer.from(b); c[0] = c[0]! ^ 1; return c; };
    expect(() => keyring.open('ven_dosa', { ...sealed, ciphertext: flipped(sealed.ciphertext) })).toThrow(unreadable('not_authentic'));
    expect(() => keyring.open('ven_dosa', { ...sealed, iv: flipped(sealed.iv) })).toThrow(unreadable('not_authentic'));
    expect(() => keyring.open('ven_dosa', { ...sealed, authTag: flipped(sealed.authTag) })).toThrow(unreadable('not_authentic'));
    expect(() => keyring.open('ven_dosa', { ...sealed, authTag: sealed.authTag.subarray(0, 4) })).toThrow(unreadable('not_authentic'));
  });

  test("when a vendor's sealed row is presented as another vendor's, then it does not open", () => {
    const keyring = createKeyring([k2026a], 'k2026a');
    const sealed = keyring.seal('ven_dosa', ACCOUNT);
    expect(() => keyring.open('ven_biryani', sealed)).toThrow(unreadable('not_authentic'));
  });

  test('when the active key changes, then rows under the old key still open and new rows seal under the new key', () => {
    const before = createKeyring([k2026a], 'k2026a');
    const old = before.seal('ven_dosa', ACCOUNT);
    const after = createKeyring([k2026a, k2026b], 'k2026b');
    expect(after.keyIds).toEqual(['k2026b', 'k2026a']);
    expect(after.open('ven_dosa', old)).toBe(ACCOUNT);
    expect(after.seal('ven_dosa', ACCOUNT).keyId).toBe('k2026b');
  });

  test('when a row names a key the keyring does not hold, or the key id is swapped, then it does not open, saying which key', () => {
    const old = createKeyring([k2026a], 'k2026a').seal('ven_dosa', ACCOUNT);
    const onlyNew = createKeyring([k2026b], 'k2026b');
    expect(() => onlyNew.open('ven_dosa', old)).toThrow(unreadable('key_not_held'));
    expect(() => onlyNew.open('ven_dosa', old)).toThrow(/key k2026a/);
    expect(() => createKeyring([k2026a, k2026b], 'k2026b').open('ven_dosa', { ...old, keyId: 'k2026b' })).toThrow(unreadable('not_authentic'));
  });

  test('when the active key is not held or a key is not 32 bytes, then no keyring is made', () => {
    expect(() => createKeyring([k2026a], 'k2026b')).toThrow(/k2026b/);
    expect(() => createKeyring([{ id: 'short', key: randomBytes(16) }], 'short')).toThrow(/32 bytes/);
  });

  test('when nothing is configured, then the embedded development key works', () => {
    const keyring = keyringFromConfig(loadConfig({}));
    expect(keyring.activeKeyId).toBe('dev-not-secret');
    expect(keyring.open('ven_dosa', keyring.seal('ven_dosa', ACCOUNT))).toBe(ACCOUNT);
  });
});
