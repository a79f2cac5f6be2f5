/** Writing a batch's bank file on request: the account numbers are decrypted here and nowhere else in
 * settlement, for the open lines only, and never stored (the audit keeps the file's digest). */
import { createHash } from 'node:crypto';
import { AppError } from '../appError';
import { readBankDetailsForFile } from '../banking/repository';
import type { BankDetailsKeyring } from '../banking/keyring';
import type { Db } from '../db/pool';
import { bankFileCsv } from './bankFile';
import { linesForBankFile, recordBankFileDownload } from './repository';

export async function bankFileForBatch(db: Db, keyring: BankDetailsKeyring, batchId: string, actor: string): Promise<{ fileName: string; csv: string; sha256: string; lines: number }> {
  const lines = await linesForBankFile(db, batchId);
  if (lines.length === 0) throw new AppError(409, 'settlement_batch_not_open', `batch ${batchId} has no open line to pay`);
  const details = await readBankDetailsForFile(db, keyring, lines.map((l) => l.vendorId));
  const csv = bankFileCsv(lines.map((line) => {
    const account = details.get(line.vendorId);
    if (!account) throw new AppError(409, 'bank_details_changed', `line ${line.reference}: vendor ${line.vendorId} has no bank details any more; cancel the batch and run again`, { line: line.reference, field: 'bank_details' });
    return { reference: line.reference, amountPaise: line.amountPaise, beneficiaryName: line.beneficiaryName, ifsc: line.ifsc, accountNumber: account.accountNumber };
  }));
  const sha256 = createHash('sha256').update(csv).digest('hex');
  await recordBankFileDownload(db, batchId, actor, sha256, lines.length);
  return { fileName: `${batchId}-bank-file.csv`, csv, sha256, lines: lines.length };
}
