/** Writing a batch's bank file on request: the account numbers are decrypted here and nowhere else in
 * settlement, for the open lines only, and never stored (the audit keeps the file's digest). */
import { createHash } from 'node:crypto';
import { AppError } from '../appError';
import { readBankDetailsForFile } from '../banking/repository';
import type { BankDetailsKeyring } from '../banking/keyring';
import { inTransaction, type Db } from '../db/pool';
import { bankFileCsv } from './bankFile';
import { linesForBankFile, recordBankFileDownload } from './repository';

/** One transaction from the batch's check to the download's audit row, holding the batch FOR SHARE:
 * a cancel (FOR UPDATE) waits for the download and then sees it (refused unless finance confirm the
 * file never reached the bank), or has committed first and the download is refused. Without it a
 * cancel could pass between the check and the audit row and free lines a file then paid. */
export async function bankFileForBatch(db: Db, keyring: BankDetailsKeyring, batchId: string, actor: string): Promise<{ fileName: string; csv: string; sha256: string; lines: number }> {
  return inTransaction(db, async (tx) => {
    await tx.query('SELECT 1 FROM settlement_batches WHERE id = $1 FOR SHARE', [batchId]);
    const lines = await linesForBankFile(tx, batchId);
    if (lines.length === 0) throw new AppError(409, 'settlement_batch_not_open', `batch ${batchId} has no open line to pay`);
    const details = await readBankDetailsForFile(tx, keyring, lines.map((l) => l.vendorId));
    const csv = bankFileCsv(lines.map((line) => {
      const account = details.get(line.vendorId);
      if (!account) throw new AppError(409, 'bank_details_changed', `line ${line.reference}: vendor ${line.vendorId} has no bank details any more; cancel the batch and run again`, { line: line.reference, field: 'bank_details' });
      return { reference: line.reference, amountPaise: line.amountPaise, beneficiaryName: line.beneficiaryName, ifsc: line.ifsc, accountNumber: account.accountNumber };
    }));
    const sha256 = createHash('sha256').update(csv).digest('hex');
    await recordBankFileDownload(tx, batchId, actor, sha256, lines.length);
    return { fileName: `${batchId}-bank-file.csv`, csv, sha256, lines: lines.length };
  });
}
