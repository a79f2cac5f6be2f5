/** The payout id an order (or a batch) determines: a name-based UUID (RFC 9562 version 5) of the
 * payout's key. It is the recovery key in the transfer's notes and the first idempotency key, so a
 * database restored to an earlier point re-creates the same payout for the same order: the transfer
 * that left in the lost window carries its note (the lookup finds it) and its first key (the
 * provider replays it), instead of a new id the provider has never seen. */
import { createHash } from 'node:crypto';

/** Fixed for ever: changing it would give every order a second payout id. */
const PAYOUT_NAMESPACE = Buffer.from('5b0c8f2e6d3a4f7e9a1c2b4d6e8f0a13', 'hex');

export function payoutIdOf(key: string): string {
  const hash = createHash('sha1').update(PAYOUT_NAMESPACE).update(key, 'utf8').digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50; // version 5
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
