/** Ids a settlement batch is known by: the batch id (from the workflow run, so a retried freeze
 * finds its own batch) and one reference per bank-file row, upper-case letters and digits, short
 * enough for a bank's narration field, that the bank echoes on its response file and statement. */
import { createHash } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

function encode(seed: string, alphabet: string, length: number): string {
  const bytes = createHash('sha256').update(seed).digest();
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[bytes[i]! % alphabet.length];
  return out;
}

export const batchIdForRun = (runId: string): string => `stb_${encode(runId, ALPHANUMERIC, 14)}`;

/** `ST` + 8 characters from the batch + a 4-digit sequence: 14 characters, unambiguous (no I/O/0/1). */
export function lineReference(batchId: string, sequence: number): string {
  if (!Number.isInteger(sequence) || sequence < 1 || sequence > 9999) throw new RangeError('a batch has at most 9,999 lines');
  return `ST${encode(batchId, UPPER, 8)}${String(sequence).padStart(4, '0')}`;
}

export const SETTLEMENT_REFERENCE = /^ST[A-Z2-9]{8}\d{4}$/;
